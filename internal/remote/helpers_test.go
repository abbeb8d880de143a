package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pqrepro/internal/repro"
)

// blob returns n deterministic pseudo-random bytes and their SHA-256.
func blob(n int, seed uint64) ([]byte, string) {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)})
	r.Read(b)
	s := sha256.Sum256(b)
	return b, hex.EncodeToString(s[:])
}

func newStore(t testing.TB) *repro.Store {
	t.Helper()
	return &repro.Store{Dir: filepath.Join(t.TempDir(), "store")}
}

// fast retries quickly so fault tests take milliseconds.
func fast(t testing.TB) Options {
	return Options{Backoff: time.Millisecond, Logf: t.Logf}
}

// storeBlob puts b into s and returns its hash.
func storeBlob(t testing.TB, s *repro.Store, b []byte) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(src, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := s.Put(src)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// assertStored checks that the store holds exactly b under sum and no
// partial file is left.
func assertStored(t *testing.T, s *repro.Store, sum string, b []byte) {
	t.Helper()
	got, err := os.ReadFile(s.Path(sum))
	if err != nil {
		t.Fatalf("blob not stored: %v", err)
	}
	if string(got) != string(b) {
		t.Fatalf("stored blob differs (%d bytes, want %d)", len(got), len(b))
	}
	if _, err := os.Stat(s.PartialPath(sum)); !os.IsNotExist(err) {
		t.Errorf("partial file left behind: %v", err)
	}
}

// assertNotStored checks that no blob sum is visible in the store.
func assertNotStored(t *testing.T, s *repro.Store, sum string) {
	t.Helper()
	if s.Has(sum) {
		t.Fatalf("blob %s is in the store, want none", sum[:12])
	}
}
