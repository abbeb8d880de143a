// Package atomicfile writes files so that a reader sees either the old
// content or the complete new content, never a partial file.
//
// The new content goes to a temporary file in the destination's directory
// (so that the final rename stays on one file system), is flushed with
// fsync, and is renamed over the destination (rename(2) is atomic on POSIX
// file systems). If anything fails, or the caller abandons the write, the
// temporary file is removed and the destination is untouched.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A File is a pending atomic write. Write to it, then call Commit to
// publish it under its final name, or Abort to drop it. Abort after Commit
// is a no-op, so `defer f.Abort()` is the usual pattern.
type File struct {
	tmp  *os.File
	path string
	perm os.FileMode
	done bool
}

// Create starts an atomic write of path with the given permission bits.
// The parent directory is created if it does not exist.
func Create(path string, perm os.FileMode) (*File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create directory for %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	return &File{tmp: tmp, path: path, perm: perm}, nil
}

// Write appends p to the pending content.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, fmt.Errorf("write %s: file already committed or aborted", f.path)
	}
	return f.tmp.Write(p)
}

// Name is the final path the file will have after Commit.
func (f *File) Name() string { return f.path }

// Commit flushes the content to stable storage and renames it into place.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("commit %s: file already committed or aborted", f.path)
	}
	f.done = true
	name := f.tmp.Name()
	err := f.tmp.Chmod(f.perm)
	if err == nil {
		err = f.tmp.Sync()
	}
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, f.path)
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	syncDir(filepath.Dir(f.path))
	return nil
}

// Abort drops the pending content. It is safe to call more than once and
// after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	name := f.tmp.Name()
	f.tmp.Close()
	os.Remove(name)
}

// WriteFile atomically replaces path with data.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return WriteFrom(path, bytes.NewReader(data), perm)
}

// WriteFrom atomically replaces path with everything read from r. If r
// returns an error, path is left as it was.
func WriteFrom(path string, r io.Reader, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := io.Copy(f, r); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// WriteIfChanged is WriteFile that leaves path (and its modification time)
// alone when it already holds exactly data. It reports whether it wrote.
func WriteIfChanged(path string, data []byte, perm os.FileMode) (bool, error) {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return true, WriteFile(path, data, perm)
}

// syncDir makes a rename durable. Errors are ignored: some file systems
// do not support fsync on directories, and the rename itself succeeded.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
