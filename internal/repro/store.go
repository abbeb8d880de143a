package repro

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A Store is the local content-addressed store for large files (packet
// captures) that are referenced from datasets by SHA-256 instead of being
// committed. A blob lives at <Dir>/sha256/<first two hex digits>/<rest>,
// is written atomically and is read-only once stored.
type Store struct{ Dir string }

// DefaultStoreDir is the store's location relative to the repository
// root, unless the setting PQREPRO_STORE (internal/settings) names
// another.
const DefaultStoreDir = ".store"

// OpenStore returns the store for the repository at root: dir (the
// setting PQREPRO_STORE), or root/DefaultStoreDir when dir is "".
func OpenStore(root, dir string) *Store {
	if dir != "" {
		return &Store{Dir: dir}
	}
	return &Store{Dir: filepath.Join(root, DefaultStoreDir)}
}

// Path returns where the blob with the given hash is (or would be).
func (s *Store) Path(sum string) string {
	return filepath.Join(s.Dir, "sha256", sum[:2], sum[2:])
}

// Put copies the file at src into the store and returns its SHA-256.
// The copy is hashed while it is written and renamed to its address only
// when complete, so an interrupted Put leaves no blob behind.
func (s *Store) Put(src string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("store %s: %w", src, err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Join(s.Dir, "sha256"), 0o755); err != nil {
		return "", fmt.Errorf("store %s: %w", src, err)
	}
	tmp, err := os.CreateTemp(filepath.Join(s.Dir, "sha256"), ".incoming-*")
	if err != nil {
		return "", fmt.Errorf("store %s: %w", src, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), in); err != nil {
		return "", fmt.Errorf("store %s: %w", src, err)
	}
	if err := tmp.Chmod(0o444); err != nil {
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		return "", fmt.Errorf("store %s: %w", src, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	dst := s.Path(sum)
	if _, err := os.Stat(dst); err == nil {
		return sum, nil // content-addressed: already there means identical
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", fmt.Errorf("store %s: %w", src, err)
	}
	return sum, nil
}

// Check re-reads the blob and confirms it has the hash it is stored under.
func (s *Store) Check(sum string) error {
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return fmt.Errorf("store: %q is not a SHA-256", sum)
	}
	got, err := HashFile(s.Path(sum))
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: blob %s is not in %s (rerun the experiment or fetch the artifact bundle)", short(sum), s.Dir)
	}
	if err != nil {
		return err
	}
	if got != sum {
		return fmt.Errorf("store: blob %s is corrupt (content hashes to %s)", short(sum), short(got))
	}
	return nil
}

// Has reports whether the blob with the given hash is in the store (it is
// not re-hashed: Check does that).
func (s *Store) Has(sum string) bool {
	fi, err := os.Stat(s.Path(sum))
	return err == nil && fi.Mode().IsRegular()
}

// PartialPath is where an unfinished download of the blob is kept so that
// it can be resumed. That is, <Dir>/partial/<hash>.part, outside the
// sha256 tree and with a suffix, so it is never mistaken for a blob.
func (s *Store) PartialPath(sum string) string {
	return filepath.Join(s.Dir, "partial", sum+".part")
}

// Adopt moves the file at tmp, which the caller has hashed to sum while
// writing it, to its address in the store, read-only. tmp must be on the
// store's file system (PartialPath is), so the rename is atomic: a reader
// sees the whole blob or none.
func (s *Store) Adopt(tmp, sum string) error {
	if err := os.Chmod(tmp, 0o444); err != nil {
		return fmt.Errorf("store %s: %w", short(sum), err)
	}
	dst := s.Path(sum)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("store %s: %w", short(sum), err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("store %s: %w", short(sum), err)
	}
	return nil
}
