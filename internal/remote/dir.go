package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// A Dir remote keeps blobs in a directory, local or a mounted share, in
// the store's layout under Root/Prefix. Put writes a temporary file next
// to the blob's address, hashes it while writing, syncs it and renames it
// into place only when the hash matches: the rename is atomic on POSIX
// file systems, so no partial blob is ever visible.
type Dir struct {
	Root     string
	Prefix   string
	ReadOnly bool // refuse Put (a mirror of an archive)
}

func (d *Dir) String() string { return "dir " + filepath.Join(d.Root, d.Prefix) }

// checkRoot fails unless Root is a directory: an unmounted share must not
// look like an empty remote, nor be written into.
func (d *Dir) checkRoot() error {
	fi, err := os.Stat(d.Root)
	if err == nil && !fi.IsDir() {
		err = errors.New("not a directory")
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w (mount the share, create the folder, or name a real one in %s)", d, ErrRemoteAbsent, ConfigFile)
	}
	if err != nil {
		return fmt.Errorf("%s: the remote's folder %s: %w (mount the share, create the folder, or fix url in %s)", d, d.Root, err, ConfigFile)
	}
	return nil
}

func (d *Dir) path(sum string) string {
	return filepath.Join(d.Root, filepath.FromSlash(Key(d.Prefix, sum)))
}

// Stat implements Remote.
func (d *Dir) Stat(ctx context.Context, sum string) (int64, error) {
	if err := checkSum(sum); err != nil {
		return 0, err
	}
	if err := d.checkRoot(); err != nil {
		return 0, err
	}
	fi, err := os.Stat(d.path(sum))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%s: %s: %w", d, short(sum), ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w (is the share mounted?)", d, err)
	}
	return fi.Size(), nil
}

// Get implements Remote.
func (d *Dir) Get(ctx context.Context, sum string, off int64) (io.ReadCloser, int64, error) {
	if err := checkSum(sum); err != nil {
		return nil, 0, err
	}
	if err := d.checkRoot(); err != nil {
		return nil, 0, err
	}
	f, err := os.Open(d.path(sum))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%s: %s: %w", d, short(sum), ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", d, err)
	}
	if off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("%s: %w", d, err)
		}
	}
	return f, off, nil
}

// Put implements Remote.
func (d *Dir) Put(ctx context.Context, sum string, r io.Reader, size int64) error {
	if err := checkSum(sum); err != nil {
		return err
	}
	if d.ReadOnly {
		return fmt.Errorf("%s: %w (read_only = true in the remote's configuration): push to a writable remote, or set PQREPRO_REMOTE to another configuration", d, ErrReadOnly)
	}
	if err := d.checkRoot(); err != nil {
		return err
	}
	dst := d.path(sum)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return d.writeErr(err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), incomingPrefix+"*")
	if err != nil {
		return d.writeErr(err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	defer tmp.Close()
	// Held while the upload runs, so that RemoveLeftovers (another
	// clone's push or clean) never removes a live upload; a SIGKILL
	// releases it and leaves the file to be removed.
	if err := syscall.Flock(int(tmp.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return d.writeErr(err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), ctxReader{ctx, r})
	if err != nil {
		return fmt.Errorf("%s: upload %s: %w", d, short(sum), err)
	}
	if n != size {
		return fmt.Errorf("%s: upload %s: read %d bytes, want %d (the local blob changed?)", d, short(sum), n, size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("%s: upload %s: the bytes hash to %s: the local blob is corrupt; run mage verify", d, short(sum), short(got))
	}
	if err := tmp.Chmod(0o444); err != nil {
		return d.writeErr(err)
	}
	if err := tmp.Sync(); err != nil {
		return d.writeErr(err)
	}
	if err := tmp.Close(); err != nil {
		return d.writeErr(err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return d.writeErr(err)
	}
	return nil
}

func (d *Dir) writeErr(err error) error {
	if errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%s: %w: %w: push to a writable remote, or remount it read-write", d, ErrReadOnly, err)
	}
	return fmt.Errorf("%s: %w", d, err)
}

// List implements Remote.
func (d *Dir) List(ctx context.Context) ([]string, error) {
	if err := d.checkRoot(); err != nil {
		return nil, err
	}
	base := filepath.Join(d.Root, filepath.FromSlash(d.Prefix))
	var sums []string
	err := filepath.WalkDir(filepath.Join(base, "sha256"), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == filepath.Join(base, "sha256") {
				return fs.SkipAll
			}
			return err
		}
		if e.Type().IsRegular() {
			rel, _ := filepath.Rel(base, p)
			if s, ok := sumFromKey(filepath.ToSlash(rel)); ok {
				sums = append(sums, s)
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d, err)
	}
	sort.Strings(sums)
	return sums, nil
}

// A LeftoverRemover is a remote where an upload killed mid-way can leave
// files behind that are not blobs. Such an upload is one that SIGKILL or a
// crash ended with no cleanup path run; a dir remote's leftovers are its
// .incoming-* temporaries.
type LeftoverRemover interface {
	// Leftovers lists them, relative to the remote's root.
	Leftovers(ctx context.Context) ([]string, error)
	// RemoveLeftovers removes those no upload is writing now and returns
	// what it removed.
	RemoveLeftovers(ctx context.Context) ([]string, error)
}

// incomingPrefix starts the name of an upload's temporary file.
const incomingPrefix = ".incoming-"

// Leftovers implements LeftoverRemover: the .incoming-* files of uploads
// that did not finish, including any running now (see RemoveLeftovers).
func (d *Dir) Leftovers(ctx context.Context) ([]string, error) {
	return d.leftovers(ctx, false)
}

// RemoveLeftovers implements LeftoverRemover. A temporary file whose
// upload still runs is flocked by it and kept.
func (d *Dir) RemoveLeftovers(ctx context.Context) ([]string, error) {
	if d.ReadOnly {
		return nil, nil
	}
	return d.leftovers(ctx, true)
}

func (d *Dir) leftovers(ctx context.Context, remove bool) ([]string, error) {
	if err := d.checkRoot(); err != nil {
		return nil, err
	}
	base := filepath.Join(d.Root, filepath.FromSlash(d.Prefix), "sha256")
	var out []string
	err := filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == base {
				return fs.SkipAll
			}
			return err
		}
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), incomingPrefix) {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(d.Root, p)
		if !remove {
			out = append(out, rel)
			return ctx.Err()
		}
		f, err := os.Open(p)
		if err != nil {
			return nil // gone meanwhile (renamed into place)
		}
		defer f.Close()
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			return ctx.Err() // an upload is writing it now
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		out = append(out, rel)
		return ctx.Err()
	})
	if err != nil {
		return out, fmt.Errorf("%s: leftovers of interrupted uploads: %w", d, err)
	}
	return out, nil
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
