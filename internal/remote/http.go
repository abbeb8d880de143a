package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// An HTTP remote reads blobs from a web server or an archive; it cannot
// be written. A blob's URL is Base + Prefix + sha256/<2>/<62> (a static
// server fed by a Dir remote's tree), or, when Index is set, the URL the
// index gives for the hash (an archive record whose file names are not
// hashes). Get resumes with a Range request (RFC 9110 §14.2); a server
// that answers 200 instead of 206 is read from the start.
type HTTP struct {
	Base   string
	Prefix string
	Index  map[string]string // sha256 -> absolute URL; nil: derive from Base
	Client *http.Client      // nil: http.DefaultClient (deadlines come from the context)
}

func (h *HTTP) String() string { return "http " + h.Base }

// client is h.Client (or http.DefaultClient) refusing a redirect to
// another scheme (file://, ftp://, or https:// down to http://). Such a
// redirect is permanent, and following it is never what the archive
// meant.
func (h *HTTP) client() *http.Client {
	c := *http.DefaultClient
	if h.Client != nil {
		c = *h.Client
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		from, to := via[len(via)-1].URL.Scheme, req.URL.Scheme
		if to != from && !(from == "http" && to == "https") {
			return fmt.Errorf("redirected from %s:// to %s://: %w (a blob is fetched over http(s) only; fix the URL)", from, to, ErrUnsupported)
		}
		if req.URL.User != nil {
			return fmt.Errorf("redirected to a URL with credentials: %w", ErrUnsupported)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			// A loop, most likely; it will loop again: not retried.
			return fmt.Errorf("stopped after 10 redirects: %w (a redirect loop; fix the URL)", ErrUnsupported)
		}
		return nil
	}
	return &c
}

// A lengthBody is a response body with its announced Content-Length.
type lengthBody struct {
	io.ReadCloser
	n int64
}

// announcedLength is how many bytes a Get's body announced, or -1.
func announcedLength(rc io.ReadCloser) int64 {
	if b, ok := rc.(lengthBody); ok {
		return b.n
	}
	return -1
}

// URL returns where the blob is fetched from.
func (h *HTTP) URL(sum string) (string, error) {
	if err := checkSum(sum); err != nil {
		return "", err
	}
	if h.Index != nil {
		u, ok := h.Index[sum]
		if !ok {
			return "", fmt.Errorf("%s: %s is not in the remote's index: %w", h, short(sum), ErrNotFound)
		}
		return u, nil
	}
	return strings.TrimSuffix(h.Base, "/") + "/" + Key(h.Prefix, sum), nil
}

// Check validates the remote's URL (see checkBaseURL) and prefix without a
// request. Pull calls it first, so that an ftp:// url or a bad port fails
// once, not once per blob after retries.
func (h *HTTP) Check() error {
	if err := checkPrefix(h.Prefix); err != nil {
		return fmt.Errorf("%s: %w: %w", h, err, ErrUnsupported)
	}
	if h.Index != nil && h.Base == "" {
		return nil // every URL comes from the index, checked when read
	}
	if err := checkBaseURL(h.Base); err != nil {
		return fmt.Errorf("%s: url: %w", h, err)
	}
	return nil
}

func (h *HTTP) do(ctx context.Context, method, sum string, off int64) (*http.Response, error) {
	if err := h.Check(); err != nil {
		return nil, err
	}
	u, err := h.URL(sum)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h, err)
	}
	if off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-")
	}
	resp, err := h.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: %w", h, method, short(sum), err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %s: %s: %w", h, short(sum), resp.Status, ErrNotFound)
	case resp.StatusCode >= 300:
		resp.Body.Close()
		return nil, &statusError{remote: h.String(), sum: sum, status: resp.Status, code: resp.StatusCode}
	}
	return resp, nil
}

// A statusError is an HTTP answer that is neither success nor "not
// found"; 5xx and 429 are worth retrying.
type statusError struct {
	remote, sum, status string
	code                int
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s: %s: server answered %s", e.remote, short(e.sum), e.status)
}

func (e *statusError) Temporary() bool { return e.code >= 500 || e.code == http.StatusTooManyRequests }

// Stat implements Remote with a HEAD request, or, for a server that does
// not allow HEAD (405, 501), a GET of the first byte.
func (h *HTTP) Stat(ctx context.Context, sum string) (int64, error) {
	resp, err := h.do(ctx, http.MethodHead, sum, 0)
	var se *statusError
	if errors.As(err, &se) && (se.code == http.StatusMethodNotAllowed || se.code == http.StatusNotImplemented) {
		return h.statByGet(ctx, sum)
	}
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.ContentLength, nil
}

func (h *HTTP) statByGet(ctx context.Context, sum string) (int64, error) {
	if err := h.Check(); err != nil {
		return 0, err
	}
	u, err := h.URL(sum)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", h, err)
	}
	req.Header.Set("Range", "bytes=0-0")
	resp, err := h.client().Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s: GET %s: %w", h, short(sum), err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return 0, fmt.Errorf("%s: %s: %s: %w", h, short(sum), resp.Status, ErrNotFound)
	case resp.StatusCode == http.StatusPartialContent:
		_, total, ok := strings.Cut(resp.Header.Get("Content-Range"), "/")
		if n, err := strconv.ParseInt(total, 10, 64); ok && err == nil {
			return n, nil
		}
		return -1, nil
	case resp.StatusCode < 300:
		return resp.ContentLength, nil
	}
	return 0, &statusError{remote: h.String(), sum: sum, status: resp.Status, code: resp.StatusCode}
}

// Get implements Remote.
func (h *HTTP) Get(ctx context.Context, sum string, off int64) (io.ReadCloser, int64, error) {
	resp, err := h.do(ctx, http.MethodGet, sum, off)
	if err != nil {
		return nil, 0, err
	}
	if off > 0 && resp.StatusCode == http.StatusPartialContent {
		start, ok := rangeStart(resp.Header.Get("Content-Range"))
		if !ok || start != off {
			resp.Body.Close()
			return nil, 0, fmt.Errorf("%s: %s: asked for bytes from %d, got Content-Range %q", h, short(sum), off, resp.Header.Get("Content-Range"))
		}
		return lengthBody{resp.Body, resp.ContentLength}, off, nil
	}
	return lengthBody{resp.Body, resp.ContentLength}, 0, nil // 200: the whole blob
}

// rangeStart parses the first byte position of "bytes a-b/n".
func rangeStart(cr string) (int64, bool) {
	rest, ok := strings.CutPrefix(cr, "bytes ")
	if !ok {
		return 0, false
	}
	a, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(a, 10, 64)
	return n, err == nil
}

// Put implements Remote: an HTTP remote is read-only.
func (h *HTTP) Put(ctx context.Context, sum string, r io.Reader, size int64) error {
	return fmt.Errorf("%s: %w (an HTTP remote is read-only): push to a dir or s3 remote and publish that", h, ErrReadOnly)
}

// List implements Remote: the index's hashes, if there is an index.
func (h *HTTP) List(ctx context.Context) ([]string, error) {
	if h.Index == nil {
		return nil, fmt.Errorf("%s: %w: a static server cannot be listed", h, ErrUnsupported)
	}
	sums := make([]string, 0, len(h.Index))
	for s := range h.Index {
		sums = append(sums, s)
	}
	sort.Strings(sums)
	return sums, nil
}

// ReadIndex reads an index file: one blob a line, "<sha256> <url>"
// separated by white space. That is the layout of sha256sum's output, with
// a URL for the file name; blank lines and lines starting with # are
// skipped. Relative URLs are resolved against base.
func ReadIndex(path, base string) (map[string]string, error) {
	b, err := readSmallFile(path, MaxIndexBytes)
	if err != nil {
		return nil, fmt.Errorf("remote: index %s: %w", path, err)
	}
	return parseIndex(strings.NewReader(string(b)), path, base)
}

// checkIndexURL holds an index line's URL to remote.toml's rules. It
// allows no credentials (the index is committed), and no scheme-relative
// "//host/x", which would silently move a relative-looking line to
// another host. parseIndex checks the resolved URL's port (checkPort).
func checkIndexURL(u, base *url.URL) error {
	switch {
	case u.User != nil || strings.Contains(u.Host, "@"):
		return errors.New("a URL in the index must not carry credentials (the index is committed)")
	case u.Scheme == "" && u.Host != "":
		return errors.New("a scheme-relative URL (//host/...) is refused: write the scheme, or a path relative to the remote's url")
	case u.Scheme == "" && u.Host == "" && base.Host == "":
		return errors.New("a relative URL needs the remote's url to be absolute")
	}
	return nil
}

func parseIndex(r io.Reader, name, base string) (map[string]string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("remote: index %s: base URL %q: %w", name, base, err)
	}
	idx := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !IsSHA256(f[0]) {
			return nil, fmt.Errorf("remote: index %s:%d: want \"<sha256> <url>\", got %q", name, n, line)
		}
		u, err := url.Parse(f[1])
		if err != nil {
			return nil, fmt.Errorf("remote: index %s:%d: %w", name, n, err)
		}
		if err := checkIndexURL(u, b); err != nil {
			return nil, fmt.Errorf("remote: index %s:%d: %q: %w", name, n, f[1], err)
		}
		u = b.ResolveReference(u)
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
			return nil, fmt.Errorf("remote: index %s:%d: %q is not an http(s) URL", name, n, u)
		}
		if err := checkPort(u); err != nil {
			return nil, fmt.Errorf("remote: index %s:%d: %q: %w; fix the line", name, n, f[1], err)
		}
		if old, dup := idx[f[0]]; dup && old != u.String() {
			return nil, fmt.Errorf("remote: index %s:%d: %s listed twice with different URLs", name, n, short(f[0]))
		}
		idx[f[0]] = u.String()
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("remote: index %s: %w", name, err)
	}
	return idx, nil
}
