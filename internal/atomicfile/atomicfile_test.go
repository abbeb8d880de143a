package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "out.txt")
	if err := WriteFile(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "two" {
		t.Fatalf("content = %q, %v; want two", got, err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	if names := listDir(t, filepath.Dir(path)); len(names) != 1 {
		t.Errorf("directory holds %v, want only out.txt", names)
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("disk on fire")
	}
	n := min(len(p), r.n)
	for i := range n {
		p[i] = 'x'
	}
	r.n -= n
	return n, nil
}

func TestFailingWriterKeepsOldContent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := WriteFile(path, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFrom(path, &failingReader{n: 1 << 20}, 0o644)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v; want the reader's error naming %s", err, path)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "previous" {
		t.Errorf("content = %q after a failed write, want previous", got)
	}
	if names := listDir(t, dir); len(names) != 1 {
		t.Errorf("temporary file left behind: %v", names)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.txt")
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "partial")
	f.Abort()
	f.Abort() // idempotent
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stat after Abort: %v; want not exist", err)
	}
	if names := listDir(t, dir); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
	if _, err := f.Write([]byte("more")); err == nil {
		t.Error("Write after Abort succeeded")
	}
	if err := f.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
}

func TestWriteIfChanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	wrote, err := WriteIfChanged(path, []byte("a"), 0o644)
	if err != nil || !wrote {
		t.Fatalf("first write: wrote=%v err=%v", wrote, err)
	}
	wrote, err = WriteIfChanged(path, []byte("a"), 0o644)
	if err != nil || wrote {
		t.Fatalf("same content: wrote=%v err=%v; want no write", wrote, err)
	}
	wrote, err = WriteIfChanged(path, []byte("b"), 0o644)
	if err != nil || !wrote {
		t.Fatalf("new content: wrote=%v err=%v", wrote, err)
	}
}

func ExampleWriteFile() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "results.json")
	if err := WriteFile(path, []byte(`{"median_ms": 3.9}`+"\n"), 0o644); err != nil {
		panic(err)
	}
	b, _ := os.ReadFile(path)
	os.Stdout.Write(b)
	// Output: {"median_ms": 3.9}
}
