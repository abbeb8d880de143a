package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// neverAnswers is a real server on 127.0.0.1 that accepts connections
// and never writes a byte; it counts the connections.
func neverAnswers(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + l.Addr().String(), &n
}

// refusedURL is a 127.0.0.1 port nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

// hugeDrip announces 10^12 bytes and sends one byte every 20 ms.
type hugeDrip struct{ reqs, gets atomic.Int32 }

func (h *hugeDrip) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.reqs.Add(1)
	w.Header().Set("Content-Length", "1000000000000")
	if r.Method == http.MethodHead {
		return
	}
	h.gets.Add(1)
	for r.Context().Err() == nil {
		if _, err := w.Write([]byte{0}); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPullBoundsWorstCases is issue 35's Found 2 after the fix: for each
// hostile remote, how long the pull of 10 blobs takes to give up, how
// many requests it makes, and that it says why in one line. The
// options are scaled down (Stall 100 ms, MinRate 5000 B/s, blobs of
// 2000 bytes); the real defaults scale the times (docs/data-remote.md).
func TestPullBoundsWorstCases(t *testing.T) {
	var sums []string
	sizes := map[string]int64{}
	for i := range 10 {
		_, s := blob(2000, uint64(100+i))
		sums = append(sums, s)
		sizes[s] = 2000
	}
	drip := &hugeDrip{}
	dripSrv := httptest.NewServer(drip)
	defer dripSrv.Close()
	silent, accepted := neverAnswers(t)
	var table []string
	for _, tc := range []struct {
		name      string
		base      string
		recorded  bool
		want      error
		maxReqs   int32 // requests (or connections) over the whole pull
		maxTook   time.Duration
		reqs      func() int32
		mentioned string
	}{
		{"huge HEAD with a drip, recorded size", dripSrv.URL, true, ErrSizeMismatch, 3, time.Second, drip.reqs.Load, "1000000000000"},
		{"huge HEAD with a drip, no recorded size", dripSrv.URL, false, ErrTooLarge, 3, time.Second, drip.reqs.Load, "1000000000000"},
		{"accepts, never answers", silent, true, ErrAbandoned, 3 * 5, 3 * 700 * time.Millisecond, accepted.Load, "3 blobs in a row failed the same way"},
		{"connection refused", refusedURL(t), true, ErrAbandoned, 0, time.Second, func() int32 { return 0 }, "connection refused"},
		{"ftp:// base URL", "ftp://127.0.0.1/x/", true, ErrUnsupported, 0, 100 * time.Millisecond, func() int32 { return 0 }, "ftp"},
		{"bad port", "http://127.0.0.1:99999/", true, ErrUnsupported, 0, 100 * time.Millisecond, func() int32 { return 0 }, "99999"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			before := tc.reqs()
			drip.reqs.Store(0)
			st := newStore(t)
			var lines []string
			var mu sync.Mutex
			o := Options{Backoff: 5 * time.Millisecond, Stall: 100 * time.Millisecond, MinRate: 5000, Retries: 4,
				MaxUnrecorded: 1 << 20, Logf: func(f string, a ...any) {
					mu.Lock()
					lines = append(lines, fmt.Sprintf(f, a...))
					mu.Unlock()
				}}
			if tc.recorded {
				o.Sizes = sizes
			}
			start := time.Now()
			res, err := Pull(context.Background(), st, &HTTP{Base: tc.base}, sums, o)
			took := time.Since(start)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.mentioned) {
				t.Errorf("error does not mention %q: %v", tc.mentioned, err)
			}
			if took > tc.maxTook {
				t.Errorf("gave up after %v, want at most %v", took, tc.maxTook)
			}
			reqs := tc.reqs() - before
			if tc.name[:4] == "huge" {
				if drip.gets.Load() != 0 {
					t.Errorf("%d GETs of a blob whose announced size is refused", drip.gets.Load())
				}
				// A refusal is per blob (it says nothing of the next
				// blob); three in a row abandon the remote.
				reqs = drip.reqs.Load()
				if !errors.Is(err, ErrAbandoned) {
					t.Errorf("the remote was not abandoned after three refusals alike")
				}
			}
			if reqs > tc.maxReqs {
				t.Errorf("%d requests, want at most %d", reqs, tc.maxReqs)
			}
			var abandonLines int
			for _, l := range lines {
				if strings.Contains(l, ErrAbandoned.Error()) {
					abandonLines++
				}
			}
			if errors.Is(err, ErrAbandoned) && abandonLines != 1 {
				t.Errorf("%d lines say the remote was abandoned, want 1:\n%s", abandonLines, strings.Join(lines, "\n"))
			}
			if errors.Is(err, ErrAbandoned) {
				n := 0
				for _, r := range res {
					if r.Skipped == "remote abandoned" {
						n++
					}
				}
				if n != 7 {
					t.Errorf("%d of 10 blobs marked not tried, want 7", n)
				}
			}
			for _, s := range sums {
				assertNotStored(t, st, s)
			}
			table = append(table, fmt.Sprintf("| %s | %v | %d |", tc.name, took.Round(time.Millisecond), reqs))
		})
	}
	t.Logf("10 blobs; Stall 100 ms, MinRate 5000 B/s, 4 retries, backoff 5 ms\n| remote | time to give up | requests |\n%s", strings.Join(table, "\n"))
}

// TestPullNeverReadsMoreThanRecorded: a server that announces nothing
// and streams forever is read up to the recorded size only (else it is
// refused: ErrNoSize); one that announces a smaller size than recorded
// is refused before the download.
func TestPullNeverReadsMoreThanRecorded(t *testing.T) {
	data, sum := blob(2000, 7)
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.Header().Set("Transfer-Encoding", "chunked")
			return
		}
		w.Write(data)
		for i := 0; i < 100 && r.Context().Err() == nil; i++ {
			n, err := w.Write(make([]byte, 32<<10))
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	st := newStore(t)
	o := hostileOptions(t)
	o.Sizes = map[string]int64{sum: 2000}
	if _, err := Pull(context.Background(), st, &HTTP{Base: srv.URL}, []string{sum}, o); err != nil {
		t.Fatalf("pull with the recorded size: %v", err)
	}
	assertStored(t, st, sum, data)

	small := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1999")
		if r.Method == http.MethodGet {
			t.Error("a GET after the announced size contradicted the manifest")
		}
	}))
	defer small.Close()
	st = newStore(t)
	_, err := Pull(context.Background(), st, &HTTP{Base: small.URL}, []string{sum}, o)
	if !errors.Is(err, ErrSizeMismatch) || !strings.Contains(err.Error(), "1999") {
		t.Errorf("error %v, want %v naming 1999", err, ErrSizeMismatch)
	}
}

// TestPullDeadlineWholePull: the whole pull gets the sum of its blobs'
// budgets, stated in one line before the first request.
func TestPullDeadlineWholePull(t *testing.T) {
	_, s1 := blob(2000, 1)
	_, s2 := blob(3000, 2)
	var lines []string
	o := Options{Stall: time.Second, MinRate: 1000, Sizes: map[string]int64{s1: 2000, s2: 3000},
		Logf: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }}
	silent, _ := neverAnswers(t)
	o.Stall = 50 * time.Millisecond
	o.Retries = -1
	o.AbandonAfter = -1
	Pull(context.Background(), newStore(t), &HTTP{Base: silent}, []string{s1, s2}, o)
	// 2 blobs: 2 × 50 ms + 5000 B at 1000 B/s = 5.1 s.
	if len(lines) == 0 || !strings.Contains(lines[0], "2 blobs to fetch") || !strings.Contains(lines[0], "giving up after 5s") {
		t.Errorf("first line %q, want the pull's deadline (5s for 2 blobs)", lines)
	}
	// The deadline ends a pull that its blobs' own budgets would not:
	// here each blob's stall is longer than the whole pull may take.
	o = Options{Stall: 2 * time.Second, MinRate: 1000, Sizes: map[string]int64{s1: 0, s2: 0}, Retries: -1, AbandonAfter: -1}
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Two blobs of 0 bytes: 2 × 2 s; the first stalls for 2 s, the
	// second is cut by the pull's deadline at 4 s.
	_, err := Pull(ctx, newStore(t), &HTTP{Base: silent}, []string{s1, s2}, o)
	if took := time.Since(start); took > 4500*time.Millisecond {
		t.Errorf("pull took %v, want its deadline, 4 s", took)
	}
	if err == nil {
		t.Error("pull succeeded against a silent server")
	}
}

func TestETA(t *testing.T) {
	for _, tc := range []struct {
		left, n int64
		el      time.Duration
		want    string
	}{
		{1000, 1000, time.Second, "1s"},
		{0, 1000, time.Second, "0s"},
		{1e18, 1, time.Second, "over 100000h"},
		{1 << 62, 1, time.Hour, "over 100000h"},
	} {
		if got := eta(tc.left, tc.n, tc.el); got != tc.want || strings.HasPrefix(got, "-") {
			t.Errorf("eta(%d, %d, %v) = %q, want %q", tc.left, tc.n, tc.el, got, tc.want)
		}
	}
}

func TestFailureKindIgnoresTheBlob(t *testing.T) {
	_, a := blob(1, 1)
	_, b := blob(1, 2)
	ea := fmt.Errorf("http x: GET %s: weird %s", short(a), a)
	eb := fmt.Errorf("http x: GET %s: weird %s", short(b), b)
	if failureKind(ea, a) != failureKind(eb, b) {
		t.Errorf("%q != %q", failureKind(ea, a), failureKind(eb, b))
	}
	if failureKind(fmt.Errorf("x: %w", ErrNotFound), a) != "" {
		t.Error("a missing blob counts towards abandoning the remote")
	}
}

// TestReferencedSizesAndHiddenFolders: a sealed run's recorded sizes
// become Ref.Size; a hidden study or run folder is not a run.
func TestReferencedSizesAndHiddenFolders(t *testing.T) {
	root := t.TempDir()
	_, s1 := blob(100, 1)
	_, s2 := blob(100, 2)
	_, hidden := blob(100, 3)
	writeRun(t, root, "tls", "r1", map[string]string{"a.pcapng": s1, "b.pcapng": s2})
	man := "# pqrepro run manifest tls/r1\n# blob " + s1 + "  a.pcapng\n# blob " + s2 + "  b.pcapng\n# blob-size " + s1 + " 100\n"
	os.WriteFile(filepath.Join(root, "data", "tls", "r1", "MANIFEST.sha256"), []byte(man), 0o644)
	writeRun(t, root, "tls", ".incomplete-r2", map[string]string{"c.pcapng": hidden})
	writeRun(t, root, ".x", "r3", map[string]string{"c.pcapng": hidden})
	refs, err := Referenced(root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range refs {
		got[r.Sum] = r.Size
	}
	if len(got) != 2 || got[s1] != 100 || got[s2] != -1 {
		t.Errorf("refs %+v, want %s: 100 and %s: -1 only (hidden folders skipped)", refs, short(s1), short(s2))
	}
	if sz := Sizes(refs); len(sz) != 1 || sz[s1] != 100 {
		t.Errorf("Sizes = %v", sz)
	}
}

// TestConfigBounds: a configuration that is a device, a percent-escaped
// prefix, an index outside the repository, a non-http url or a bad port
// are refused before any request.
func TestConfigBounds(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "idx.txt"), nil, 0o644)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "idx.txt"), nil, 0o644)
	os.Symlink(filepath.Join(outside, "idx.txt"), filepath.Join(root, "link.txt"))
	for _, tc := range []struct{ name, toml, want string }{
		{"percent-escaped dotdot", "kind = \"http\"\nurl = \"http://h/\"\nprefix = \"%2e%2e/\"", "percent-escape"},
		{"escaped slash", "kind = \"s3\"\nurl = \"http://h\"\nbucket = \"b\"\nprefix = \"a%2f..\"", "percent-escape"},
		{"index outside", "kind = \"http\"\nurl = \"http://h/\"\nindex = \"../x/idx.txt\"", "inside the repository"},
		{"absolute index", "kind = \"http\"\nurl = \"http://h/\"\nindex = \"" + filepath.Join(outside, "idx.txt") + "\"", "inside the repository"},
		{"ftp url", "kind = \"http\"\nurl = \"ftp://h/\"", "http:// or https://"},
		{"bad port", "kind = \"http\"\nurl = \"http://h:99999/\"", "99999"},
		{"no host", "kind = \"http\"\nurl = \"http:///x\"", "no host"},
		{"s3 file url", "kind = \"s3\"\nurl = \"file:///x\"\nbucket = \"b\"", "http:// or https://"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			os.WriteFile(filepath.Join(root, ConfigFile), []byte(tc.toml), 0o644)
			_, _, err := LoadConfig(root, "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// A symbolic link inside the tree that leaves it is refused on open.
	if _, err := Open(root, Config{Kind: "http", URL: "http://h/", Index: "link.txt"}); err == nil {
		t.Error("an index linked from outside the repository was read")
	}
	t.Run("dev_zero", func(t *testing.T) {
		if _, _, err := LoadConfig(root, "/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("PQREPRO_REMOTE=/dev/zero: %v", err)
		}
		big := filepath.Join(t.TempDir(), "big.toml")
		os.WriteFile(big, []byte("# "+strings.Repeat("x", MaxConfigBytes)+"\n"), 0o644)
		if _, _, err := LoadConfig(root, big); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("a huge configuration: %v", err)
		}
	})
}

// TestRedirectLoopNotRetried: a redirect loop is one attempt, not five.
func TestRedirectLoopNotRetried(t *testing.T) {
	_, sum := blob(10, 1)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	}))
	defer srv.Close()
	o := hostileOptions(t)
	o.Retries = 4
	_, err := Pull(context.Background(), newStore(t), &HTTP{Base: srv.URL}, []string{sum}, o)
	if !errors.Is(err, ErrUnsupported) || n.Load() > 11 {
		t.Errorf("error %v after %d requests, want %v after at most 11 (one attempt)", err, n.Load(), ErrUnsupported)
	}
}
