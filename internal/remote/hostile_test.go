package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A hostile server misbehaves on purpose in one way: it lies about a
// blob's size, streams without end, drips, redirects off HTTP or refuses.
// Every mode must end the pull with a bounded number of bytes written,
// attempts made and time spent, and an error that names what happened.
type hostile struct {
	data []byte
	sum  string
	mode string
	reqs atomic.Int32
}

func (h *hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.reqs.Add(1)
	size := strconv.Itoa(len(h.data))
	switch h.mode {
	case "HEAD lies, GET streams without length":
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", size)
			return
		}
		chunk := make([]byte, 32<<10)
		for i := 0; i < 400 && r.Context().Err() == nil; i++ { // 12.5 MiB, 200 times the blob
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	case "no length anywhere":
		if r.Method == http.MethodHead {
			return // no Content-Length
		}
		w.Write(h.data[:10])
		w.(http.Flusher).Flush()
		w.Write(h.data[10:])
	case "GET length differs from HEAD":
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", size)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(100*len(h.data)))
		w.Write(h.data)
	case "drip":
		w.Header().Set("Content-Length", size)
		if r.Method == http.MethodHead {
			return
		}
		for i := range h.data {
			if _, err := w.Write(h.data[i : i+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	case "redirect to file://":
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	case "redirect to ftp://":
		http.Redirect(w, r, "ftp://127.0.0.1/x", http.StatusMovedPermanently)
	case "404":
		http.NotFound(w, r)
	case "403":
		http.Error(w, "no", http.StatusForbidden)
	case "400":
		http.Error(w, "bad", http.StatusBadRequest)
	case "500":
		http.Error(w, "boom", http.StatusInternalServerError)
	default:
		panic("unknown mode " + h.mode)
	}
}

// hostileOptions are small so that every mode ends in well under a second:
// a blob of 2000 bytes at 5000 B/s plus 150 ms of grace is a 550 ms budget.
func hostileOptions(t testing.TB) Options {
	return Options{Backoff: 5 * time.Millisecond, Stall: 150 * time.Millisecond, MinRate: 5000, Logf: t.Logf}
}

func TestPullHostileServers(t *testing.T) {
	data, sum := blob(2000, 40)
	tests := []struct {
		mode        string
		want        error // errStatus: an HTTP status error
		maxRequests int32
		maxBytes    int64
		errMentions string
	}{
		{"HEAD lies, GET streams without length", ErrTooLong, 2, 2000, "2000"},
		{"no length anywhere", ErrNoSize, 2, 0, "size"},
		{"GET length differs from HEAD", ErrTooLong, 2, 0, "200000"},
		{"drip", ErrTooSlow, 20, 2000, "5000 B/s"},
		{"redirect to file://", ErrUnsupported, 1, 0, "file"},
		{"redirect to ftp://", ErrUnsupported, 1, 0, "ftp"},
		{"404", ErrNotFound, 1, 0, "404"},
		{"403", errStatus, 1, 0, "403"},
		{"400", errStatus, 1, 0, "400"},
		{"500", errStatus, 5, 0, "500"},
	}
	var table []string
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.mode, " ", "_"), func(t *testing.T) {
			h := &hostile{data: data, sum: sum, mode: tt.mode}
			ts := httptest.NewServer(h)
			defer ts.Close()
			st := newStore(t)
			o := hostileOptions(t)
			o.Retries = 4
			start := time.Now()
			res, err := Pull(context.Background(), st, &HTTP{Base: ts.URL, Client: ts.Client()}, []string{sum}, o)
			took := time.Since(start)
			if err == nil {
				t.Fatal("pull succeeded against a hostile server")
			}
			var se *statusError
			if tt.want == errStatus && !errors.As(err, &se) || tt.want != errStatus && !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.errMentions) {
				t.Errorf("error %q does not mention %q", err, tt.errMentions)
			}
			if n := h.reqs.Load(); n > tt.maxRequests*2 { // HEAD and GET per attempt
				t.Errorf("%d requests, want at most %d attempts", n, tt.maxRequests)
			}
			if res[0].Bytes > tt.maxBytes {
				t.Errorf("%d bytes written, want at most %d", res[0].Bytes, tt.maxBytes)
			}
			if fi, err := os.Stat(st.PartialPath(sum)); err == nil && fi.Size() > int64(len(data)) {
				t.Errorf("partial file holds %d bytes, more than the %d announced", fi.Size(), len(data))
			}
			assertNotStored(t, st, sum)
			table = append(table, fmt.Sprintf("| %s | %d | %d | %v | %s |", tt.mode, res[0].Bytes, h.reqs.Load(), took.Round(10*time.Millisecond), strings.ReplaceAll(err.Error(), ts.URL, "http://127.0.0.1:PORT")))
		})
	}
	t.Logf("mode | bytes written | requests | time to give up | error\n%s", strings.Join(table, "\n"))
}
