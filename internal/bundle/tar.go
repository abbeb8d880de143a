package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// CompressionLevel is the fixed gzip level of every bundle. The bytes of
// a DEFLATE stream depend on the compressor's level and implementation, so
// both are fixed: level 6 of Go's compress/flate (the Go version is
// recorded in BUNDLE.json). Level 6, not 9: the bulk of a bundle is packet
// captures of TLS handshakes, mostly high-entropy key shares, signatures
// and certificates; on capture-like data (BenchmarkWriteCapture) level 9
// saved about 1 % and was about five times slower.
const CompressionLevel = 6

// An entry is one member of the archive.
type entry struct {
	Path   string // relative to the bundle's top folder, slash-separated
	Src    string // file to copy from; "" when Data holds the content
	Data   []byte // generated content (or the content of a parsed meta.json)
	Exec   bool   // mode 0755 instead of 0644
	Dir    bool
	Link   string // symbolic link target
	Size   int64
	SHA256 string // of the content, checked again while it is copied
}

// Modes of the archive: only the executable bit of a file survives.
const (
	modeFile = 0o644
	modeExec = 0o755
	modeDir  = 0o755
	modeLink = 0o777
)

// header returns the tar header of e. Every field that could carry the
// builder's identity or clock is fixed: owner and group 0 with no names,
// the modification time SOURCE_DATE_EPOCH (whole seconds), no access or
// change time. The format is USTAR; a path longer than USTAR allows gets a
// PAX extended header (POSIX.1-2001 pax format) carrying only the path, and
// Go names that header deterministically ("PaxHeaders.0/<name>").
func header(prefix string, e *entry, epoch time.Time) *tar.Header {
	h := &tar.Header{
		Name:    path.Join(prefix, e.Path),
		ModTime: epoch,
		Uid:     0,
		Gid:     0,
		Uname:   "",
		Gname:   "",
	}
	switch {
	case e.Dir:
		h.Typeflag = tar.TypeDir
		h.Name += "/"
		h.Mode = modeDir
	case e.Link != "":
		h.Typeflag = tar.TypeSymlink
		h.Linkname = e.Link
		h.Mode = modeLink
	default:
		h.Typeflag = tar.TypeReg
		h.Size = e.Size
		h.Mode = modeFile
		if e.Exec {
			h.Mode = modeExec
		}
	}
	// USTAR when it fits (short paths, the common case), else PAX. Both
	// choices depend only on the header, so the result is deterministic.
	h.Format = tar.FormatUSTAR
	if len(h.Name) > 100 && !ustarSplittable(h.Name) || len(h.Linkname) > 100 || !isASCII(h.Name+h.Linkname) {
		h.Format = tar.FormatPAX
	}
	return h
}

// ustarSplittable reports whether USTAR's 155-byte prefix and 100-byte
// name fields can hold the path.
func ustarSplittable(name string) bool {
	if len(name) > 256 {
		return false
	}
	for i := len(name) - 1; i > 0; i-- {
		if name[i] == '/' && i <= 155 && len(name)-i-1 <= 100 && len(name)-i-1 > 0 {
			return true
		}
	}
	return false
}

// isASCII reports whether USTAR can hold s (it has no encoding for
// other bytes; PAX records are UTF-8).
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] == 0 {
			return false
		}
	}
	return true
}

// withDirs adds an entry for every directory that holds an entry, and
// sorts everything by path (byte order). A parent then precedes its
// children and the order does not depend on the file system.
func withDirs(entries []*entry) []*entry {
	dirs := map[string]bool{}
	for _, e := range entries {
		for d := path.Dir(e.Path); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	out := slices.Clone(entries)
	for d := range dirs {
		out = append(out, &entry{Path: d, Dir: true})
	}
	slices.SortFunc(out, func(a, b *entry) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// writeArchive writes the gzip-compressed tar of entries (plus their
// directories) under the top folder prefix. The gzip header has no name,
// no modification time and Go's fixed OS byte (255, unknown).
func writeArchive(ctx context.Context, w io.Writer, prefix string, entries []*entry, epoch time.Time, progress func(done, total int64)) error {
	zw, err := gzip.NewWriterLevel(w, CompressionLevel)
	if err != nil {
		return err
	}
	zw.Header = gzip.Header{OS: 255} // explicit: no Name, no ModTime, no Comment
	tw := tar.NewWriter(zw)
	all := withDirs(entries)
	all = append([]*entry{{Path: ".", Dir: true}}, all...)
	var total, done int64
	for _, e := range all {
		total += e.Size
	}
	for _, e := range all {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := header(prefix, e, epoch)
		if e.Path == "." {
			h.Name = prefix + "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("archive %s: %w", e.Path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := copyEntry(ctx, tw, e); err != nil {
			return err
		}
		done += e.Size
		if progress != nil {
			progress(done, total)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	return zw.Close()
}

// copyEntry writes e's content, hashing it on the way. A file that changed
// since it was listed fails the bundle instead of archiving content that
// BUNDLE.SHA256SUMS does not describe.
func copyEntry(ctx context.Context, w io.Writer, e *entry) error {
	var r io.Reader = bytes.NewReader(e.Data)
	if e.Src != "" {
		f, err := os.Open(e.Src)
		if err != nil {
			return fmt.Errorf("archive %s: %w", e.Path, err)
		}
		defer f.Close()
		r = f
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), &ctxReader{ctx, io.LimitReader(r, e.Size+1)})
	if err != nil && !errors.Is(err, tar.ErrWriteTooLong) {
		return fmt.Errorf("archive %s: %w", e.Path, err)
	}
	if err != nil || n != e.Size || hex.EncodeToString(h.Sum(nil)) != e.SHA256 {
		return fmt.Errorf("archive %s: the file changed while the bundle was written: run mage bundle again when nothing writes to the tree", e.Path)
	}
	return nil
}

// ctxReader stops a long copy when the context is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
