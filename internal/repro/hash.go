package repro

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"

	"pqrepro/internal/atomicfile"
)

// HashFile returns the lower-case hex SHA-256 of the file's content,
// always reading the whole file.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HashBytes returns the lower-case hex SHA-256 of b.
func HashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// A Hasher hashes files. The zero value re-reads every file; a Hasher
// opened with OpenHashCache remembers hashes by (size, modification time,
// inode, status-change time), so that a build in which nothing changed
// reads no large file.
//
// The key is the one Git's index trusts. The status-change time (ctime)
// is in it because the modification time is not evidence: anyone can set
// it back (touch -d, os.Chtimes) after editing a file in place, while the
// kernel sets ctime to the current time on every write, chmod or link
// and offers no call to set it back. A hard link (verification copies
// the tree that way) changes ctime too, which costs one re-read.
// Verification never uses the cache.
type Hasher struct {
	mu      sync.Mutex
	path    string // cache file; empty: no cache
	entries map[string]cacheEntry
	dirty   bool
	// Reads counts the files actually read, for tests and benchmarks.
	Reads int
}

type cacheEntry struct {
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
	Inode   uint64 `json:"inode"`
	CtimeNs int64  `json:"ctime_ns"`
	SHA256  string `json:"sha256"`
}

// OpenHashCache returns a Hasher backed by the cache file at path. A
// missing or unreadable cache is not an error: it is rebuilt (the cache
// only saves time, it never decides what is true).
func OpenHashCache(path string) *Hasher {
	h := &Hasher{path: path, entries: map[string]cacheEntry{}}
	b, err := os.ReadFile(path)
	if err == nil {
		var entries map[string]cacheEntry
		if json.Unmarshal(b, &entries) == nil {
			h.entries = entries
		}
	}
	return h
}

// Hash returns the SHA-256 of the file at path.
func (h *Hasher) Hash(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return "", fmt.Errorf("hash %s: is a directory", path)
	}
	key, _ := filepath.Abs(path)
	want := cacheEntry{Size: st.Size(), MtimeNs: st.ModTime().UnixNano()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		want.Inode = sys.Ino
		want.CtimeNs = sys.Ctim.Nano()
	}
	h.mu.Lock()
	if h.entries != nil {
		if e, ok := h.entries[key]; ok && e.Size == want.Size && e.MtimeNs == want.MtimeNs && e.Inode == want.Inode && e.CtimeNs == want.CtimeNs && want.CtimeNs != 0 {
			h.mu.Unlock()
			return e.SHA256, nil
		}
	}
	h.Reads++
	h.mu.Unlock()
	sum, err := HashFile(path)
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	if h.entries != nil {
		want.SHA256 = sum
		h.entries[key] = want
		h.dirty = true
	}
	h.mu.Unlock()
	return sum, nil
}

// Save writes the cache back if it changed, dropping entries for files
// that no longer exist.
func (h *Hasher) Save() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.path == "" || !h.dirty {
		return nil
	}
	keys := make([]string, 0, len(h.entries))
	for k := range h.entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := os.Stat(k); errors.Is(err, os.ErrNotExist) {
			delete(h.entries, k)
		}
	}
	b, err := json.Marshal(h.entries)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(h.path, b, 0o644); err != nil {
		return fmt.Errorf("save hash cache: %w", err)
	}
	h.dirty = false
	return nil
}
