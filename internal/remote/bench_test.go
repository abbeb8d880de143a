package remote

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"pqrepro/internal/repro"
)

// benchBlob writes a random blob of $PQREPRO_BENCH_MB megabytes (default
// 224, the size of Study A's full capture) into a dir remote and returns
// the remote, the blob's path there and its hash.
func benchBlob(b *testing.B) (*Dir, string, string, int64) {
	b.Helper()
	mb := 224
	if s := os.Getenv("PQREPRO_BENCH_MB"); s != "" {
		var err error
		if mb, err = strconv.Atoi(s); err != nil {
			b.Fatalf("PQREPRO_BENCH_MB=%q: %v", s, err)
		}
	}
	data, sum := blob(mb*1_000_000, 99)
	rem := &Dir{Root: b.TempDir()}
	p := rem.path(sum)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, data, 0o444); err != nil {
		b.Fatal(err)
	}
	return rem, p, sum, int64(len(data))
}

// benchPull times Pull of the blob into an emptied store, like
// `mage data:pull` on a fresh clone: download, SHA-256, fsync, rename.
func benchPull(b *testing.B, rem Remote, sum string, size int64) {
	st := &repro.Store{Dir: filepath.Join(b.TempDir(), "store")}
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		os.RemoveAll(st.Dir)
		b.StartTimer()
		if _, err := Pull(context.Background(), st, rem, []string{sum}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPull compares pulling one large blob from each kind of remote
// on loopback with cp of the same file (the floor: no network, no hash).
//
//	go test -run '^$' -bench Pull -benchtime 3x ./internal/remote
func BenchmarkPull(b *testing.B) {
	rem, path, sum, size := benchBlob(b)
	b.Run("cp", func(b *testing.B) {
		dst := filepath.Join(b.TempDir(), "copy")
		b.SetBytes(size)
		for range b.N {
			os.Remove(dst)
			if out, err := exec.Command("cp", path, dst).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v %s", err, out)
			}
		}
	})
	b.Run("dir", func(b *testing.B) { benchPull(b, rem, sum, size) })
	b.Run("http", func(b *testing.B) {
		ts := httptest.NewServer(http.FileServer(http.Dir(rem.Root)))
		defer ts.Close()
		benchPull(b, &HTTP{Base: ts.URL}, sum, size)
	})
	b.Run("s3", func(b *testing.B) {
		s3 := startS3(b, "")
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := s3.Put(context.Background(), sum, f, size); err != nil {
			b.Fatal(err)
		}
		benchPull(b, s3, sum, size)
	})
}
