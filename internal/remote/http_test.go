package remote

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server serves one blob at its Key; fault (may be nil) can take over a
// request by returning true. It counts requests and records Range headers.
type server struct {
	data   []byte
	sum    string
	fault  func(n int, w http.ResponseWriter, r *http.Request) bool
	n      atomic.Int32
	mu     sync.Mutex
	ranges []string
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/"+Key("", s.sum) {
		http.NotFound(w, r)
		return
	}
	n := int(s.n.Add(1))
	if r.Method == http.MethodGet {
		s.mu.Lock()
		s.ranges = append(s.ranges, r.Header.Get("Range"))
		s.mu.Unlock()
	}
	if s.fault != nil && r.Method == http.MethodGet && s.fault(n, w, r) {
		return
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(s.data))
}

func startHTTP(t *testing.T, s *server) *HTTP {
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return &HTTP{Base: ts.URL, Client: ts.Client()}
}

// truncate answers with the full Content-Length but only half the body,
// then drops the connection.
func truncate(data []byte) func(int, http.ResponseWriter, *http.Request) bool {
	return func(_ int, w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Range") != "" {
			return false
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusOK)
		w.Write(data[:len(data)/2])
		panic(http.ErrAbortHandler)
	}
}

func TestHTTPFaults(t *testing.T) {
	data, sum := blob(300_000, 1)
	wrong := bytes.Clone(data)
	wrong[1000] ^= 1
	tests := []struct {
		name    string
		fault   func(n int, w http.ResponseWriter, r *http.Request) bool
		wantErr error // nil: the blob must arrive intact
		ranged  bool  // a later request must resume with Range
	}{
		{"ok", nil, nil, false},
		{"wrong bytes every time", func(_ int, w http.ResponseWriter, r *http.Request) bool {
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(wrong))
			return true
		}, ErrCorrupt, false},
		{"wrong bytes once", func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n > 2 { // request 1 is the HEAD
				return false
			}
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(wrong))
			return true
		}, nil, false},
		{"truncated body, then resumed", truncate(data), nil, true},
		{"500 every time", func(_ int, w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "boom", http.StatusInternalServerError)
			return true
		}, errStatus, false},
		{"500 twice", func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n > 5 { // HEAD+GET per attempt
				return false
			}
			http.Error(w, "boom", http.StatusInternalServerError)
			return true
		}, nil, false},
		{"403 is not retried", func(_ int, w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, "no", http.StatusForbidden)
			return true
		}, errStatus, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &server{data: data, sum: sum, fault: tt.fault}
			rem := startHTTP(t, srv)
			st := newStore(t)
			_, err := Pull(context.Background(), st, rem, []string{sum}, fast(t))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				assertStored(t, st, sum, data)
			} else {
				if err == nil {
					t.Fatal("pull succeeded, want an error")
				}
				var se *statusError
				if tt.wantErr == errStatus && !errors.As(err, &se) || tt.wantErr != errStatus && !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				assertNotStored(t, st, sum)
				if _, err := os.Stat(st.PartialPath(sum)); tt.wantErr == ErrCorrupt && !os.IsNotExist(err) {
					t.Errorf("corrupt partial file kept: %v", err)
				}
			}
			if tt.name == "403 is not retried" && srv.n.Load() != 2 {
				t.Errorf("%d requests, want 2 (HEAD, GET: no retry)", srv.n.Load())
			}
			if tt.ranged {
				last := srv.ranges[len(srv.ranges)-1]
				if last != "bytes="+strconv.Itoa(len(data)/2)+"-" {
					t.Errorf("ranges %q: the retry did not resume from the half", srv.ranges)
				}
			}
		})
	}
}

var errStatus = errors.New("an HTTP status error")

func TestHTTPNotFound(t *testing.T) {
	data, sum := blob(1000, 2)
	_, other := blob(1000, 3)
	srv := &server{data: data, sum: sum}
	rem := startHTTP(t, srv)
	st := newStore(t)
	res, err := Pull(context.Background(), st, rem, []string{other}, fast(t))
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("error %v, want ErrNotFound", err)
	}
	if srv.n.Load() != 0 || len(res) != 1 {
		t.Errorf("%d requests reached the blob, %d results: a 404 must not be retried", srv.n.Load(), len(res))
	}
	assertNotStored(t, st, other)
}

// TestHTTPSlow: a server that stalls mid-body must not hold the pull past
// its context's deadline; the bytes so far are kept for resuming.
func TestHTTPSlow(t *testing.T) {
	data, sum := blob(200_000, 4)
	release := make(chan struct{})
	defer close(release)
	srv := &server{data: data, sum: sum, fault: func(_ int, w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:1000])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return true
	}}
	rem := startHTTP(t, srv)
	st := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Pull(ctx, st, rem, []string{sum}, fast(t))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the context's deadline", err)
	}
	assertNotStored(t, st, sum)
	fi, err := os.Stat(st.PartialPath(sum))
	if err != nil || fi.Size() != 1000 {
		t.Fatalf("partial file %v %v, want the 1000 bytes that arrived", fi, err)
	}
}

// TestHTTPStallRetried: a server that stops sending mid-body is given up
// on after Options.Stall, and the retry resumes where it stopped.
func TestHTTPStallRetried(t *testing.T) {
	data, sum := blob(200_000, 10)
	srv := &server{data: data, sum: sum}
	srv.fault = func(n int, w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Range") != "" {
			return false
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:7000])
		w.(http.Flusher).Flush()
		<-r.Context().Done() // stalls until the client gives up
		return true
	}
	st := newStore(t)
	o := fast(t)
	o.Stall = 50 * time.Millisecond
	res, err := Pull(context.Background(), st, startHTTP(t, srv), []string{sum}, o)
	if err != nil {
		t.Fatal(err)
	}
	assertStored(t, st, sum, data)
	if res[0].Resumed != 7000 {
		t.Errorf("resumed after %d bytes, want 7000", res[0].Resumed)
	}
}

// TestHTTPResume: a pull interrupted mid-blob leaves a partial file, and
// the next pull asks only for the rest.
func TestHTTPResume(t *testing.T) {
	data, sum := blob(500_000, 5)
	st := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	srv := &server{data: data, sum: sum, fault: func(_ int, w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:123_456])
		w.(http.Flusher).Flush()
		for { // the user presses ^C once these bytes are on disk
			if fi, err := os.Stat(st.PartialPath(sum)); err == nil && fi.Size() == 123_456 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
		<-r.Context().Done()
		return true
	}}
	rem := startHTTP(t, srv)
	if _, err := Pull(ctx, st, rem, []string{sum}, fast(t)); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted pull: %v, want context.Canceled", err)
	}
	assertNotStored(t, st, sum)

	srv.fault = nil
	srv.ranges = nil
	res, err := Pull(context.Background(), st, rem, []string{sum}, fast(t))
	if err != nil {
		t.Fatal(err)
	}
	assertStored(t, st, sum, data)
	if got := srv.ranges; len(got) != 1 || got[0] != "bytes=123456-" {
		t.Errorf("second pull sent Range %q, want [bytes=123456-]", got)
	}
	if res[0].Resumed != 123_456 || res[0].Bytes != int64(len(data)-123_456) {
		t.Errorf("result %+v: want 123456 resumed and the rest transferred", res[0])
	}
}

// TestHTTPNoRangeSupport: a server that ignores Range (200, whole body)
// makes the pull start over instead of appending the whole blob.
func TestHTTPNoRangeSupport(t *testing.T) {
	data, sum := blob(100_000, 6)
	st := newStore(t)
	if err := os.MkdirAll(strings.TrimSuffix(st.PartialPath(sum), sum+".part"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.PartialPath(sum), data[:5000], 0o644); err != nil {
		t.Fatal(err)
	}
	srv := &server{data: data, sum: sum, fault: func(_ int, w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data) // 200, ignoring Range
		return true
	}}
	if _, err := Pull(context.Background(), st, startHTTP(t, srv), []string{sum}, fast(t)); err != nil {
		t.Fatal(err)
	}
	assertStored(t, st, sum, data)
}

// TestHTTPStalePartial: a partial file with wrong bytes is discarded when
// the whole fails its hash, and the retry downloads afresh.
func TestHTTPStalePartial(t *testing.T) {
	data, sum := blob(100_000, 7)
	st := newStore(t)
	os.MkdirAll(strings.TrimSuffix(st.PartialPath(sum), sum+".part"), 0o755)
	junk, _ := blob(5000, 8)
	if err := os.WriteFile(st.PartialPath(sum), junk, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(context.Background(), st, startHTTP(t, &server{data: data, sum: sum}), []string{sum}, fast(t)); err != nil {
		t.Fatal(err)
	}
	assertStored(t, st, sum, data)
}

// TestHTTPNoHead: a server that refuses HEAD is asked for the first byte.
func TestHTTPNoHead(t *testing.T) {
	data, sum := blob(50_000, 11)
	srv := &server{data: data, sum: sum}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			http.Error(w, "no HEAD here", http.StatusMethodNotAllowed)
			return
		}
		srv.ServeHTTP(w, r)
	}))
	defer ts.Close()
	rem := &HTTP{Base: ts.URL}
	if n, err := rem.Stat(context.Background(), sum); err != nil || n != int64(len(data)) {
		t.Fatalf("Stat = %d, %v; want %d", n, err, len(data))
	}
	_, other := blob(1, 12)
	if _, err := rem.Stat(context.Background(), other); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stat of a missing blob: %v", err)
	}
	st := newStore(t)
	if _, err := Pull(context.Background(), st, rem, []string{sum}, fast(t)); err != nil {
		t.Fatal(err)
	}
	assertStored(t, st, sum, data)
}

func TestHTTPIndexAndReadOnly(t *testing.T) {
	data, sum := blob(10_000, 9)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/records/1/files/capture.pcapng" {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	}))
	defer ts.Close()
	idx, err := parseIndex(strings.NewReader("# sha256  url\n\n"+sum+"  records/1/files/capture.pcapng\n"), "index", ts.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	rem := &HTTP{Base: ts.URL, Index: idx}
	st := newStore(t)
	if _, err := Pull(context.Background(), st, rem, []string{sum}, fast(t)); err != nil {
		t.Fatal(err)
	}
	assertStored(t, st, sum, data)
	if l, err := rem.List(context.Background()); err != nil || len(l) != 1 || l[0] != sum {
		t.Errorf("List = %v, %v", l, err)
	}
	if err := rem.Put(context.Background(), sum, bytes.NewReader(data), int64(len(data))); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Put on HTTP: %v, want ErrReadOnly", err)
	}
	if _, err := (&HTTP{Base: ts.URL}).List(context.Background()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("List without index: %v, want ErrUnsupported", err)
	}
}

func TestParseIndexErrors(t *testing.T) {
	_, sum := blob(1, 1)
	for _, in := range []string{
		"nothash http://x/y",
		sum + " ftp://x/y",
		sum,
		sum + " http://x/a\n" + sum + " http://x/b",
		sum + " //evil.example/x",
		sum + " http://user:pw@x/y",
		sum + " https://token@x/y",
		sum + " http://x:y@/z",
	} {
		if _, err := parseIndex(strings.NewReader(in), "index", "http://base/"); err == nil {
			t.Errorf("parseIndex(%q) succeeded, want an error", in)
		}
	}
}

func FuzzParseIndex(f *testing.F) {
	_, sum := blob(1, 1)
	f.Add(sum + "  https://zenodo.org/records/1/files/a.pcapng?download=1\n# c\n")
	f.Add("x")
	f.Fuzz(func(t *testing.T, in string) {
		idx, err := parseIndex(strings.NewReader(in), "fuzz", "https://example.org/")
		if err != nil {
			return
		}
		for s, u := range idx {
			if pu, err := url.Parse(u); err != nil || pu.User != nil {
				t.Fatalf("accepted %q with credentials", u)
			}
			if !IsSHA256(s) || !(strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) {
				t.Fatalf("accepted %q -> %q", s, u)
			}
		}
	})
}

// TestParseIndexPorts is issue 44's item 7: an index line's URL is held
// to the port rule of remote.toml's url (1-65535); port 0 was accepted.
func TestParseIndexPorts(t *testing.T) {
	_, sum := blob(1, 1)
	for _, tc := range []struct {
		url  string
		want string // "" means accepted
	}{
		{"https://x:443/y", ""},
		{"http://x:65535/y", ""},
		{"http://x:0/y", `port "0": want 1-65535`},
		{"http://x:65536/y", `port "65536": want 1-65535`},
		{"http://x:/y", "empty port"},
	} {
		_, err := parseIndex(strings.NewReader(sum+" "+tc.url), "index.txt", "http://base/")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "index.txt:1")):
			t.Errorf("%s: %v, want an error naming the line and saying %q", tc.url, err, tc.want)
		}
	}
}
