package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestDirPushPull(t *testing.T) {
	ctx := context.Background()
	local := newStore(t)
	var sums []string
	var datas [][]byte
	for i := range 3 {
		b, _ := blob(10_000*(i+1), uint64(10+i))
		sums = append(sums, storeBlob(t, local, b))
		datas = append(datas, b)
	}
	rem := &Dir{Root: t.TempDir(), Prefix: "pqrepro"}
	res, err := Push(ctx, local, rem, sums, fast(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Skipped != "" || r.Bytes == 0 {
			t.Errorf("push %+v: want a transfer", r)
		}
	}
	if res, err := Push(ctx, local, rem, sums, fast(t)); err != nil || res[0].Skipped != "on remote" {
		t.Errorf("second push: %+v %v: want every blob skipped as on remote", res, err)
	}
	got, err := rem.List(ctx)
	if err != nil || len(got) != 3 {
		t.Fatalf("List = %v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(rem.Root, "pqrepro", "sha256", sums[0][:2], sums[0][2:])); err != nil {
		t.Errorf("blob not at <root>/<prefix>/sha256/<2>/<62>: %v", err)
	}

	fresh := newStore(t)
	if _, err := Pull(ctx, fresh, rem, sums, fast(t)); err != nil {
		t.Fatal(err)
	}
	for i, s := range sums {
		assertStored(t, fresh, s, datas[i])
	}
	if res, _ := Pull(ctx, fresh, rem, sums, fast(t)); res[0].Skipped != "present" {
		t.Errorf("second pull %+v: want skipped as present", res[0])
	}
}

// TestDirPushCorruptLocal: a local blob that no longer matches its hash is
// not published.
func TestDirPushCorruptLocal(t *testing.T) {
	local := newStore(t)
	b, _ := blob(5000, 20)
	sum := storeBlob(t, local, b)
	p := local.Path(sum)
	os.Chmod(p, 0o644)
	b[0] ^= 1
	os.WriteFile(p, b, 0o644)
	rem := &Dir{Root: t.TempDir()}
	if _, err := Push(context.Background(), local, rem, []string{sum}, fast(t)); err == nil {
		t.Fatal("pushed a corrupt blob")
	}
	if _, err := rem.Stat(context.Background(), sum); !errors.Is(err, ErrNotFound) {
		t.Errorf("remote Stat after refused push: %v, want ErrNotFound", err)
	}
}

func TestDirReadOnlyFlag(t *testing.T) {
	local := newStore(t)
	b, _ := blob(5000, 21)
	sum := storeBlob(t, local, b)
	rem := &Dir{Root: t.TempDir(), ReadOnly: true}
	_, err := Push(context.Background(), local, rem, []string{sum}, fast(t))
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("push to read_only dir: %v, want ErrReadOnly", err)
	}
	t.Log(err)
}

func TestDirReadOnlyPermissions(t *testing.T) {
	local := newStore(t)
	b, _ := blob(5000, 21)
	sum := storeBlob(t, local, b)
	if os.Geteuid() == 0 {
		t.Skip("running as root: file permissions do not stop root, so a chmod 0555 remote cannot be tested (TestDirReadOnlyFlag tests the read_only flag)")
	}
	root := t.TempDir()
	os.Chmod(root, 0o555)
	defer os.Chmod(root, 0o755)
	if _, err := Push(context.Background(), local, &Dir{Root: root}, []string{sum}, fast(t)); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("push to a 0555 dir: %v, want ErrReadOnly", err)
	}
}

// failAfter yields n bytes of r, then fails like a dying disk or a ^C.
type failAfter struct {
	r io.Reader
	n int
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("interrupted")
	}
	p = p[:min(len(p), f.n)]
	n, err := f.r.Read(p)
	f.n -= n
	return n, err
}

// TestDirPushInterrupted: an upload that dies mid-blob leaves neither the
// blob nor a temporary file on the remote.
func TestDirPushInterrupted(t *testing.T) {
	b, sum := blob(1<<20, 22)
	rem := &Dir{Root: t.TempDir()}
	err := rem.Put(context.Background(), sum, &failAfter{bytes.NewReader(b), 300_000}, int64(len(b)))
	if err == nil {
		t.Fatal("interrupted Put succeeded")
	}
	if _, err := rem.Stat(context.Background(), sum); !errors.Is(err, ErrNotFound) {
		t.Errorf("blob visible after interrupted Put: %v", err)
	}
	var left []string
	filepath.WalkDir(rem.Root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("files left on the remote: %v", left)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := rem.Put(ctx, sum, bytes.NewReader(b), int64(len(b))); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context: %v", err)
	}
	if err := rem.Put(context.Background(), sum, bytes.NewReader(b[:1000]), int64(len(b))); err == nil {
		t.Error("Put of a short reader succeeded")
	}
}

// TestPullInterruptedDir: a pull cancelled mid-blob leaves no blob in the
// store, and the next pull resumes from the partial file.
func TestPullInterruptedDir(t *testing.T) {
	b, sum := blob(3<<20, 23)
	src := &Dir{Root: t.TempDir()}
	if err := src.Put(context.Background(), sum, bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	rem := cancelAfter(src, 1<<20, cancel)
	if _, err := Pull(ctx, st, rem, []string{sum}, fast(t)); !errors.Is(err, context.Canceled) {
		t.Fatalf("pull: %v, want context.Canceled", err)
	}
	assertNotStored(t, st, sum)
	res, err := Pull(context.Background(), st, src, []string{sum}, fast(t))
	if err != nil {
		t.Fatal(err)
	}
	assertStored(t, st, sum, b)
	if res[0].Resumed < 1<<20 {
		t.Errorf("resumed after %d bytes, want at least %d", res[0].Resumed, 1<<20)
	}
}

// midway wraps a remote so that each Get yields n bytes, then calls mid:
// if mid returns an error the read fails with it (a ^C, a lost link),
// else the rest follows (mid may block to hold it back).
type midway struct {
	Remote
	n   int
	mid func() error
}

// cancelAfter cancels a pull once n bytes of it were read.
func cancelAfter(rem Remote, n int, cancel func()) *midway {
	return &midway{Remote: rem, n: n, mid: func() error { cancel(); return context.Canceled }}
}

func (m *midway) Get(ctx context.Context, sum string, off int64) (io.ReadCloser, int64, error) {
	rc, from, err := m.Remote.Get(ctx, sum, off)
	if err != nil {
		return nil, 0, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(io.LimitReader(rc, int64(m.n)), readFunc(func([]byte) (int, error) {
		if err := m.mid(); err != nil {
			return 0, err
		}
		return 0, io.EOF
	}), rc), rc}, from, nil
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// TestPullProgress: with Verbose, a pull prints progress lines with the
// share done, MB/s and ETA while the blob arrives, and one line when done.
func TestPullProgress(t *testing.T) {
	b, sum := blob(1<<20, 24)
	src := &Dir{Root: t.TempDir()}
	if err := src.Put(context.Background(), sum, bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	sawETA := make(chan struct{})
	var once sync.Once
	o := Options{Verbose: true, Interval: time.Millisecond, Logf: func(f string, a ...any) {
		l := fmt.Sprintf(f, a...)
		mu.Lock()
		lines = append(lines, l)
		mu.Unlock()
		if strings.Contains(l, "50% of 1.0 MB") && strings.Contains(l, "ETA") { // a tick before the half does not release it
			once.Do(func() { close(sawETA) })
		}
	}}
	// The blob's second half is held back until a progress line appeared.
	rem := &midway{Remote: src, n: len(b) / 2, mid: func() error { <-sawETA; return nil }}
	if _, err := Pull(context.Background(), newStore(t), rem, []string{sum}, o); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "pulled "+sum[:12]) || !strings.Contains(last, "MB/s") {
		t.Errorf("last line %q, want the per-blob summary", last)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "50% of 1.0 MB") {
		t.Errorf("no progress line at the half:\n%s", strings.Join(lines, "\n"))
	}
}

// TestDirPushCorruptRemote: a remote blob overwritten in place with
// zeros of the same size is not "already on the remote": the push
// uploads it again.
func TestDirPushCorruptRemote(t *testing.T) {
	ctx := context.Background()
	local := newStore(t)
	b, _ := blob(50_000, 23)
	sum := storeBlob(t, local, b)
	rem := &Dir{Root: t.TempDir()}
	if _, err := Push(ctx, local, rem, []string{sum}, fast(t)); err != nil {
		t.Fatal(err)
	}
	p := rem.path(sum)
	os.Chmod(p, 0o644)
	if err := os.WriteFile(p, make([]byte, len(b)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Push(ctx, local, rem, []string{sum}, fast(t))
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Skipped != "" || res[0].Bytes != int64(len(b)) {
		t.Errorf("push over a corrupt remote copy: %+v, want it uploaded again", res[0])
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, b) {
		t.Error("the remote still holds the corrupt copy")
	}
}

// TestDirPushLeftovers: a push killed mid-upload (SIGKILL: no deferred
// cleanup ran) leaves an .incoming-* file; Leftovers lists it, and the
// next push removes it, but never the file of an upload still running.
func TestDirPushLeftovers(t *testing.T) {
	ctx := context.Background()
	local := newStore(t)
	b, _ := blob(20_000, 24)
	sum := storeBlob(t, local, b)
	rem := &Dir{Root: t.TempDir()}
	dir := filepath.Dir(rem.path(sum))
	os.MkdirAll(dir, 0o755)
	dead := filepath.Join(dir, ".incoming-123")
	os.WriteFile(dead, b[:5000], 0o644)
	live, err := os.Create(filepath.Join(dir, ".incoming-456"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := syscall.Flock(int(live.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	left, err := rem.Leftovers(ctx)
	if err != nil || len(left) != 2 {
		t.Fatalf("Leftovers = %v, %v; want both temporaries", left, err)
	}
	if _, err := Push(ctx, local, rem, []string{sum}, fast(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the killed upload's leftover is still there: %v", err)
	}
	if _, err := os.Stat(live.Name()); err != nil {
		t.Errorf("a running upload's file was removed: %v", err)
	}
	if got, err := rem.List(ctx); err != nil || len(got) != 1 {
		t.Errorf("List = %v, %v: leftovers must not look like blobs", got, err)
	}
}
