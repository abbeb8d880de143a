package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"pqrepro/internal/repro"
)

// Options tune Pull and Push. The zero value is usable.
type Options struct {
	// Retries is how many times a failed transfer of one blob is retried
	// (a corrupt, truncated or interrupted download, a 5xx answer);
	// 0 means 4, negative means none. "Not found" and "read-only" are
	// never retried.
	Retries int
	// Backoff is the wait before the first retry, doubled for each next
	// one; 0 means one second.
	Backoff time.Duration
	// Logf receives one line per blob (and, with Verbose, progress lines
	// every Interval). nil discards them.
	Logf     func(format string, args ...any)
	Verbose  bool
	Interval time.Duration // 0: 2 s
	// Stall ends a download attempt (to be retried and resumed) when no
	// byte arrived for this long, including while waiting for the remote
	// to answer; 0 means one minute. The context's deadline, if any, bounds
	// the whole pull.
	Stall time.Duration
	// MinRate bounds the time one blob may take, over all its attempts and
	// the waits between them: Stall + size/MinRate, so that a server that
	// drips a byte at a time (which the stall timer never catches) is
	// given up on. In bytes per second; 0 means 100 kB/s (a 1 GB capture
	// may take 2 h 47 min).
	MinRate int64
	// Sizes are the blobs' sizes as the runs' manifests record them
	// (Ref.Size, see [Sizes]): a pull never reads more than the recorded
	// size, refuses a remote that announces another, and gives the blob
	// Stall plus its recorded size at MinRate from its first request on.
	Sizes map[string]int64
	// MaxUnrecorded bounds a blob whose size no manifest records (runs
	// sealed before sizes were): the remote's announcement is believed
	// only up to this many bytes. 0 means DefaultMaxUnrecorded.
	MaxUnrecorded int64
	// AbandonAfter is how many blobs in a row may fail the same way
	// (the same error, blob names aside) before Pull gives the remote
	// up and tries no more blobs; 0 means DefaultAbandonAfter, negative
	// never. A blob that is not on the remote does not count.
	AbandonAfter int
}

const (
	// DefaultMinRate is Options.MinRate's default, in bytes per second.
	DefaultMinRate = 100_000
	// DefaultMaxUnrecorded is Options.MaxUnrecorded's default (1 GiB).
	// It is over four times the largest capture recorded so far (a Study A
	// full run's, 223,706,544 bytes by its meta.json "capture_bytes");
	// at DefaultMinRate a blob this size may take 3 h.
	DefaultMaxUnrecorded = 1 << 30
	// DefaultAbandonAfter is Options.AbandonAfter's default.
	DefaultAbandonAfter = 3
)

func (o Options) maxUnrecorded() int64 {
	if o.MaxUnrecorded <= 0 {
		return DefaultMaxUnrecorded
	}
	return o.MaxUnrecorded
}

func (o Options) abandonAfter() int {
	if o.AbandonAfter == 0 {
		return DefaultAbandonAfter
	}
	return o.AbandonAfter
}

// bound is the most bytes a pull of sum may read, and whether that is
// the size a manifest records (else it is MaxUnrecorded).
func (o Options) bound(sum string) (int64, bool) {
	if n, ok := o.Sizes[sum]; ok && n >= 0 {
		return n, true
	}
	return o.maxUnrecorded(), false
}

func (o Options) stall() time.Duration {
	if o.Stall <= 0 {
		return time.Minute
	}
	return o.Stall
}

func (o Options) minRate() int64 {
	if o.MinRate <= 0 {
		return DefaultMinRate
	}
	return o.MinRate
}

// budget is the total time a blob of size bytes may take.
func (o Options) budget(size int64) time.Duration {
	d := float64(o.stall()) + float64(size)/float64(o.minRate())*float64(time.Second)
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(d)
}

func (o Options) retries() int {
	switch {
	case o.Retries < 0:
		return 0
	case o.Retries == 0:
		return 4
	}
	return o.Retries
}

func (o Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// ErrCorrupt means bytes arrived that do not hash to the blob's SHA-256;
// ErrTruncated means fewer bytes arrived than the remote announced.
var (
	ErrCorrupt   = errors.New("downloaded bytes do not match the SHA-256")
	ErrTruncated = errors.New("download ended early")
	// ErrStalled means no byte arrived for Options.Stall.
	ErrStalled = errors.New("no data arrived for too long")
	// ErrBusy means another process is downloading the same blob.
	ErrBusy = errors.New("another pull is downloading this blob")
	// ErrTooLong means the remote sent, or announced, more bytes than it
	// announced before (HEAD, the index or Content-Length). It is not
	// retried, and no more than the first announcement is ever written.
	ErrTooLong = errors.New("the remote sends more bytes than it announced")
	// ErrNoSize means the remote announces no size for the blob, neither
	// in answer to Stat nor in the download's Content-Length: an unbounded
	// download is refused.
	ErrNoSize = errors.New("the remote announces no size for the blob")
	// ErrTooSlow means a blob took longer than Options.Stall plus its
	// size at Options.MinRate.
	ErrTooSlow = errors.New("the download is slower than the minimum rate")
	// ErrSizeMismatch means the remote announces another size than the
	// run's manifest records: it serves other bytes, and is not asked
	// for them.
	ErrSizeMismatch = errors.New("the remote announces another size than the run's manifest records")
	// ErrTooLarge means the remote announces more than
	// Options.MaxUnrecorded for a blob whose size no manifest records.
	ErrTooLarge = errors.New("the remote announces more bytes than a blob without a recorded size may have")
	// ErrPullDeadline means the whole pull ran out of its time: every
	// blob's Stall plus its size at MinRate, summed.
	ErrPullDeadline = errors.New("the pull took longer than all its blobs may")
	// ErrAbandoned means Pull gave the remote up after
	// Options.AbandonAfter blobs in a row failed the same way.
	ErrAbandoned = errors.New("remote abandoned")
)

// retryable reports whether another attempt may succeed.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	for _, permanent := range []error{ErrNotFound, ErrReadOnly, ErrUnsupported, ErrBusy, ErrTooLong, ErrNoSize, ErrTooSlow, ErrSizeMismatch, ErrTooLarge, ErrRemoteAbsent} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	var se *statusError
	if errors.As(err, &se) {
		return se.Temporary()
	}
	return true // network errors, truncated or corrupt bodies
}

// retry runs op until it succeeds, fails for good or runs out of
// retries, waiting Backoff, 2·Backoff, ... between attempts.
func retry(ctx context.Context, o Options, what string, op func() error) error {
	wait := o.Backoff
	if wait <= 0 {
		wait = time.Second
	}
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || !retryable(ctx, err) {
			return err
		}
		if attempt >= o.retries() {
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
		}
		o.logf("%s: %v; retrying in %v", what, err, wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (while waiting to retry after: %v)", ctx.Err(), err)
		case <-t.C:
		}
		wait *= 2
	}
}

// A Result says what happened to one blob.
type Result struct {
	Sum     string
	Bytes   int64 // transferred by this call (a resumed download counts the rest only)
	Resumed int64 // bytes a download found already there and kept
	Took    time.Duration
	Skipped string // why nothing was transferred ("present", "on remote", ...), or ""
	Err     error
}

// Pull copies the blobs sums from rem into store, skipping those it has.
// Every download is written to store.PartialPath, hashed while written,
// and moved to its address only when its SHA-256 matches; a truncated or
// interrupted download stays there and the next attempt (or the next
// Pull) continues from its end. It tries every blob and returns the
// results in order with the errors joined.
//
// A hostile or broken remote is bounded before any request and per blob:
//
//   - a remote with a Check method (an http remote: its URL's scheme,
//     host and port) is checked first, and a bad one fails the pull at
//     once;
//   - no more bytes are read than the size the run's manifest records
//     (Options.Sizes), and a remote announcing another size is refused;
//     for a blob without a recorded size, the size first announced (Stat,
//     else the download's Content-Length) if at most
//     Options.MaxUnrecorded; a blob announcing neither is refused, one
//     that sends more is discarded and not retried;
//   - no byte for Options.Stall ends an attempt;
//   - each blob, retries included, gets Options.Stall plus its bound at
//     Options.MinRate from its first request on (the announced size once
//     known, if smaller), and the whole pull the sum of those;
//   - after Options.AbandonAfter blobs in a row fail the same way, the
//     remote is given up, with one line that says why, and the blobs
//     left are not tried (Result.Skipped says so).
//
// Refusals (4xx, a redirect off HTTP(S) or in a loop, a size that
// contradicts the manifest or itself) are not retried.
func Pull(ctx context.Context, store *repro.Store, rem Remote, sums []string, o Options) ([]Result, error) {
	if c, ok := rem.(interface{ Check() error }); ok {
		if err := c.Check(); err != nil {
			return nil, fmt.Errorf("pull from %s: %w: no request made; fix the remote's configuration (%s, or $PQREPRO_REMOTE)", rem, err, ConfigFile)
		}
	}
	var total time.Duration
	var todo, unrecorded int
	var recorded int64
	for _, sum := range sums {
		if !IsSHA256(sum) || store.Has(sum) {
			continue
		}
		todo++
		n, ok := o.bound(sum)
		if ok {
			recorded += n
		} else {
			unrecorded++
		}
		total = min(total+o.budget(n), math.MaxInt64/2)
	}
	if todo > 0 {
		o.logf("pull: %d blobs to fetch (%s recorded, %d without a recorded size, each believed up to %s); giving up after %v (%v per blob + the bytes at %d B/s)",
			todo, mb(recorded), unrecorded, mb(o.maxUnrecorded()), durText(total), o.stall(), o.minRate())
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, total, fmt.Errorf("%w (%v for %d blobs)", ErrPullDeadline, durText(total), todo))
		defer cancel()
	}
	var lastKind string
	var inARow int
	var abandoned error
	res, err := each(ctx, sums, func(sum string) Result {
		if abandoned != nil {
			return Result{Sum: sum, Skipped: "remote abandoned"}
		}
		r := pullOne(ctx, store, rem, sum, o)
		switch k := failureKind(r.Err, sum); {
		case r.Err == nil || k == "":
			lastKind, inARow = "", 0
		case k == lastKind:
			inARow++
		default:
			lastKind, inARow = k, 1
		}
		if n := o.abandonAfter(); n > 0 && inARow >= n {
			left := 0
			for i := slices.Index(sums, sum) + 1; i < len(sums); i++ {
				if IsSHA256(sums[i]) && !store.Has(sums[i]) {
					left++
				}
			}
			if left > 0 {
				abandoned = fmt.Errorf("%w: %s: %d blobs in a row failed the same way (%s); the %d left are not tried: fix the remote or name another in %s, then pull again", ErrAbandoned, rem, inARow, lastKind, left, ConfigFile)
				o.logf("pull: %v", abandoned)
			}
		}
		return r
	})
	if abandoned != nil {
		var list []error // flat: each blob's error, then why the rest were not tried
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			list = j.Unwrap()
		}
		err = errors.Join(append(list, abandoned)...)
	}
	return res, err
}

// pullOne pulls one blob under its own time budget.
func pullOne(ctx context.Context, store *repro.Store, rem Remote, sum string, o Options) Result {
	if err := checkSum(sum); err != nil {
		return Result{Sum: sum, Err: err}
	}
	if store.Has(sum) {
		return Result{Sum: sum, Skipped: "present"}
	}
	r := Result{Sum: sum}
	start := time.Now()
	bctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	limit, isRecorded := o.bound(sum)
	allowed := o.budget(limit)
	timer := time.AfterFunc(allowed, func() { cancel(ErrTooSlow) })
	announced := limit
	armed := false
	// arm tightens the budget to the announced size, once: a blob
	// without a recorded size gets its announced size's time, not
	// MaxUnrecorded's.
	arm := func(size int64) {
		if !armed && size < limit {
			armed = true
			announced, allowed = size, o.budget(size)
			timer.Reset(max(allowed-time.Since(start), 0))
		}
	}
	b := bounds{limit: limit, recorded: isRecorded, arm: arm}
	r.Err = retry(bctx, o, "pull "+short(sum), func() error { return fetch(bctx, store, rem, sum, o, &r, b) })
	timer.Stop()
	if r.Err != nil && ctx.Err() == nil && errors.Is(context.Cause(bctx), ErrTooSlow) {
		r.Err = fmt.Errorf("pull %s from %s: %w: %d bytes may take %v (%v + size at %d B/s); %d arrived: %w",
			short(sum), rem, ErrTooSlow, announced, allowed.Round(time.Millisecond), o.stall(), o.minRate(), r.Resumed+r.Bytes, r.Err)
	}
	if r.Err != nil && errors.Is(context.Cause(ctx), ErrPullDeadline) {
		r.Err = fmt.Errorf("%w: %w", context.Cause(ctx), r.Err)
	}
	r.Took = time.Since(start)
	if r.Err == nil {
		o.logf("pulled %s  %s", short(sum), rate(r.Bytes, r.Took, r.Resumed))
	}
	return r
}

// bounds are what a fetch may believe about a blob's size.
type bounds struct {
	limit    int64 // the recorded size, or MaxUnrecorded
	recorded bool  // limit is the size the manifest records
	arm      func(size int64)
}

// accept checks a size the remote announced against the bounds.
func (b bounds) accept(rem Remote, sum string, size int64) error {
	switch {
	case b.recorded && size != b.limit:
		return fmt.Errorf("pull %s from %s: %w: it announces %d bytes, the manifest %d; nothing fetched (is the remote serving another file under this name?)", short(sum), rem, ErrSizeMismatch, size, b.limit)
	case !b.recorded && size > b.limit:
		return fmt.Errorf("pull %s from %s: %w: it announces %d bytes, more than the %d believed of a blob whose size no manifest records; nothing fetched", short(sum), rem, ErrTooLarge, size, b.limit)
	}
	b.arm(size)
	return nil
}

// failureKind names how a blob failed, blob names aside, so that blobs
// failing alike can be counted. It is "" for a failure that says nothing about
// the remote as a whole (the blob is not on it, or the pull was
// cancelled).
func failureKind(err error, sum string) string {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, context.Canceled) {
		return ""
	}
	for _, e := range []error{ErrAbandoned, ErrPullDeadline, ErrUnsupported, ErrRemoteAbsent, ErrReadOnly, ErrSizeMismatch, ErrTooLarge, ErrTooLong, ErrNoSize, ErrTooSlow, ErrStalled, ErrCorrupt, ErrTruncated} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	var se *statusError
	if errors.As(err, &se) {
		return "server answered " + se.status
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "DNS: " + dns.Err
	}
	return strings.ReplaceAll(strings.ReplaceAll(err.Error(), sum, "<blob>"), short(sum), "<blob>")
}

// mb formats n bytes as MB (10^6 bytes).
func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// durText rounds d for a person: to the second, or the hour above 100 h.
func durText(d time.Duration) string {
	if d > 100*time.Hour {
		return d.Round(time.Hour).String()
	}
	return d.Round(time.Second).String()
}

func each(ctx context.Context, sums []string, f func(string) Result) ([]Result, error) {
	var res []Result
	var errs []error
	for _, s := range sums {
		if ctx.Err() != nil {
			errs = append(errs, context.Cause(ctx))
			break
		}
		r := f(s)
		res = append(res, r)
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return res, errors.Join(errs...)
}

// fetch makes one attempt at downloading sum into the partial file.
func fetch(parent context.Context, store *repro.Store, rem Remote, sum string, o Options, r *Result, b bounds) (err error) {
	ctx, w := watch(parent, o.stall())
	part := store.PartialPath(sum)
	defer func() {
		w.stop()
		if fi, e := os.Stat(part); err != nil && !errors.Is(err, ErrBusy) && e == nil && fi.Size() == 0 {
			os.Remove(part) // nothing to resume from
		}
		if err != nil && parent.Err() == nil && errors.Is(context.Cause(ctx), ErrStalled) {
			err = fmt.Errorf("pull %s from %s: %w (%v): %w", short(sum), rem, ErrStalled, w.after, err)
		}
	}()
	size, err := rem.Stat(ctx, sum)
	if err != nil {
		return err
	}
	if size >= 0 {
		if err := b.accept(rem, sum, size); err != nil {
			return err
		}
	} else if b.recorded {
		size = b.limit // the remote does not say; the manifest does
	}
	if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
		return fmt.Errorf("pull %s: %w", short(sum), err)
	}
	f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("pull %s: %w", short(sum), err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("pull %s: %s is locked: %w", short(sum), part, ErrBusy)
	}
	h := sha256.New()
	have, err := io.Copy(h, f) // resume: the bytes already there
	if err != nil {
		return fmt.Errorf("pull %s: reading %s: %w", short(sum), part, err)
	}
	if size >= 0 && have > size {
		if have, err = restart(f, h); err != nil {
			return err
		}
	}
	if size < 0 || have < size {
		rc, got, err := rem.Get(ctx, sum, have)
		if err != nil {
			return err
		}
		defer rc.Close()
		if got != have { // the remote cannot resume
			if have, err = restart(f, h); err != nil {
				return err
			}
		}
		if rest := announcedLength(rc); rest >= 0 {
			switch {
			case size < 0:
				if err := b.accept(rem, sum, have+rest); err != nil {
					f.Close()
					os.Remove(part)
					return err
				}
				size = have + rest
			case have+rest != size:
				f.Close()
				os.Remove(part)
				return fmt.Errorf("pull %s from %s: %w: it announced %d bytes, then a download of %d from byte %d; nothing kept", short(sum), rem, ErrTooLong, size, rest, have)
			}
		}
		if size < 0 {
			return fmt.Errorf("pull %s from %s: %w (no Content-Length, no Content-Range): an unbounded download is refused; the archive must send a Content-Length", short(sum), rem, ErrNoSize)
		}
		r.Resumed = have
		p := newProgress(o, "pull", sum, have, size)
		src := ctxReader{ctx, rc}
		n, err := io.Copy(io.MultiWriter(f, h, p, w), io.LimitReader(src, size-have))
		p.stop()
		r.Bytes += n
		if err != nil {
			return fmt.Errorf("pull %s: %w after %d of %s bytes (the partial file is kept; pull again to resume)", short(sum), err, have+n, sizeText(size))
		}
		have += n
		if have == size && hex.EncodeToString(h.Sum(nil)) != sum {
			// Wrong bytes: if more follow, the remote lied about the
			// size; it will lie again, so do not retry.
			if k, _ := io.ReadFull(src, make([]byte, 1)); k > 0 {
				f.Close()
				os.Remove(part)
				return fmt.Errorf("pull %s from %s: %w: it announced %d bytes and sent more; the %d bytes written do not hash to the blob; discarded", short(sum), rem, ErrTooLong, size, have)
			}
		}
	}
	if size >= 0 && have < size {
		return fmt.Errorf("pull %s: %w: %d of %d bytes", short(sum), ErrTruncated, have, size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		f.Close()
		os.Remove(part) // never resume from bytes that are wrong
		return fmt.Errorf("pull %s from %s: %w: the %d bytes hash to %s; discarded", short(sum), rem, ErrCorrupt, have, short(got))
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("pull %s: %w", short(sum), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pull %s: %w", short(sum), err)
	}
	return store.Adopt(part, sum)
}

// A watchdog cancels its context with ErrStalled when nothing was
// written to it for after.
//
// It keeps the time of the last write and sleeps until that plus after,
// so that it fires after no byte for after, not up to a polling tick
// later: a ticker that took its first tick for progress gave a silent
// remote 75-90 s for a 60 s Stall (issue 44).
type watchdog struct {
	start time.Time    // when watching began (its monotonic reading)
	last  atomic.Int64 // the last write, in nanoseconds since start
	after time.Duration
	done  chan struct{}
}

func watch(parent context.Context, after time.Duration) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancelCause(parent)
	w := &watchdog{start: time.Now(), after: after, done: make(chan struct{})}
	go func() {
		defer cancel(nil)
		t := time.NewTimer(after)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				idle := time.Since(w.start) - time.Duration(w.last.Load())
				if idle >= after {
					cancel(ErrStalled)
					return
				}
				t.Reset(after - idle)
			}
		}
	}()
	return ctx, w
}

func (w *watchdog) Write(b []byte) (int, error) {
	if len(b) > 0 {
		w.last.Store(int64(time.Since(w.start)))
	}
	return len(b), nil
}

func (w *watchdog) stop() { close(w.done) }

// restart empties the partial file and the hash.
func restart(f *os.File, h hash.Hash) (int64, error) {
	h.Reset()
	if err := f.Truncate(0); err != nil {
		return 0, err
	}
	_, err := f.Seek(0, io.SeekStart)
	return 0, err
}

// verifyRemote downloads the remote's copy of sum and hashes it. It returns
// nil if it is size bytes hashing to sum, an error wrapping ErrCorrupt if it
// is not. The download is bounded like a pull's (size, stall, minimum rate).
func verifyRemote(parent context.Context, rem Remote, sum string, size int64, o Options) error {
	ctx, cancel := context.WithTimeoutCause(parent, o.budget(size), ErrTooSlow)
	defer cancel()
	ctx, w := watch(ctx, o.stall())
	defer w.stop()
	rc, from, err := rem.Get(ctx, sum, 0)
	if err != nil {
		return err
	}
	defer rc.Close()
	if from != 0 {
		return fmt.Errorf("%s: %s: asked for byte 0, got %d", rem, short(sum), from)
	}
	h := sha256.New()
	src := ctxReader{ctx, rc}
	n, err := io.Copy(io.MultiWriter(h, w), io.LimitReader(src, size))
	if err != nil {
		if c := context.Cause(ctx); c != nil && parent.Err() == nil {
			err = fmt.Errorf("%w: %w", c, err)
		}
		return err
	}
	if k, _ := io.ReadFull(src, make([]byte, 1)); k > 0 {
		return fmt.Errorf("%s: the copy of %s is longer than the %d bytes announced: %w", rem, short(sum), size, ErrCorrupt)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != size || got != sum {
		return fmt.Errorf("%s: the copy of %s (%d bytes) hashes to %s: %w", rem, short(sum), n, short(got), ErrCorrupt)
	}
	return nil
}

// Push copies the blobs sums from store to rem, skipping those the remote
// has. The remote has a blob when it has the same size and bytes that hash
// to the blob's SHA-256 (downloaded and hashed; a copy that does not is
// uploaded again). Each blob is re-hashed before it leaves, so a corrupt
// local blob is never published; the remote makes it visible only whole.
//
// It first removes what killed pushes left on the remote (see
// [LeftoverRemover]).
func Push(ctx context.Context, store *repro.Store, rem Remote, sums []string, o Options) ([]Result, error) {
	if lr, ok := rem.(LeftoverRemover); ok {
		gone, err := lr.RemoveLeftovers(ctx)
		if len(gone) > 0 {
			o.logf("push: removed %d leftovers of interrupted uploads on %s: %s", len(gone), rem, strings.Join(gone, ", "))
		}
		if err != nil && !errors.Is(err, ErrRemoteAbsent) {
			return nil, err
		}
	}
	return each(ctx, sums, func(sum string) Result {
		r := Result{Sum: sum}
		if err := checkSum(sum); err != nil {
			r.Err = err
			return r
		}
		if !store.Has(sum) {
			r.Skipped = "not in the local store"
			o.logf("skipped %s: not in the local store, so not pushed (pull it first, or push from the machine that has it)", short(sum))
			return r
		}
		fi, err := os.Stat(store.Path(sum))
		if err != nil {
			r.Err = err
			return r
		}
		size := fi.Size()
		got, err := rem.Stat(ctx, sum)
		switch {
		case err == nil && got == size:
			// The same size is not the same bytes: a blob overwritten in
			// place, or a torn copy on the share, counts as on the remote
			// only once its bytes hash to sum.
			verr := verifyRemote(ctx, rem, sum, size, o)
			if verr == nil {
				r.Skipped = "on remote"
				return r
			}
			if !errors.Is(verr, ErrCorrupt) {
				r.Err = fmt.Errorf("push %s: checking the copy on the remote: %w", short(sum), verr)
				return r
			}
			o.logf("push %s: %v; uploading it again", short(sum), verr)
		case err != nil && !errors.Is(err, ErrNotFound):
			r.Err = err
			return r
		}
		if err := store.Check(sum); err != nil {
			r.Err = fmt.Errorf("push %s: %w: not uploaded", short(sum), err)
			return r
		}
		start := time.Now()
		r.Err = retry(ctx, o, "push "+short(sum), func() error {
			f, err := os.Open(store.Path(sum))
			if err != nil {
				return err
			}
			defer f.Close()
			p := newProgress(o, "push", sum, 0, size)
			defer p.stop()
			return rem.Put(ctx, sum, io.TeeReader(f, p), size)
		})
		r.Took = time.Since(start)
		if r.Err == nil {
			r.Bytes = size
			o.logf("pushed %s  %s", short(sum), rate(size, r.Took, 0))
		}
		return r
	})
}

// A progress counts bytes and, when verbose, prints a line every
// Interval: done/total, MB/s and ETA.
type progress struct {
	n    atomic.Int64
	done chan struct{}
}

func newProgress(o Options, verb, sum string, have, size int64) *progress {
	p := &progress{done: make(chan struct{})}
	if !o.Verbose || o.Logf == nil {
		return p
	}
	every := o.Interval
	if every <= 0 {
		every = 2 * time.Second
	}
	start := time.Now()
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				n := p.n.Load()
				el := time.Since(start)
				line := fmt.Sprintf("  %s %s  %s", verb, short(sum), rate(n, el, have))
				if size > 0 && n > 0 {
					line += fmt.Sprintf("  %.0f%% of %.1f MB, ETA %s", 100*float64(have+n)/float64(size), float64(size)/1e6, eta(size-have-n, n, el))
				}
				o.Logf("%s", line)
			}
		}
	}()
	return p
}

func (p *progress) Write(b []byte) (int, error) { p.n.Add(int64(len(b))); return len(b), nil }

func (p *progress) stop() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
}

// eta is how long the left bytes take at the rate n bytes in el, for a
// person. It is computed in floating point and capped: a huge size at a
// low rate overflowed time.Duration and printed "ETA -2562047h".
func eta(left, n int64, el time.Duration) string {
	secs := float64(left) / float64(n) * el.Seconds()
	switch {
	case left <= 0:
		return "0s"
	case math.IsNaN(secs) || secs > 100_000*3600:
		return "over 100000h"
	}
	return time.Duration(secs * float64(time.Second)).Round(time.Second).String()
}

// rate formats "12.3 MB in 1.2s, 10.2 MB/s" (MB = 10^6 bytes).
func rate(n int64, d time.Duration, resumed int64) string {
	s := fmt.Sprintf("%.1f MB in %v, %.1f MB/s", float64(n)/1e6, d.Round(time.Millisecond), float64(n)/1e6/max(d.Seconds(), 1e-9))
	if resumed > 0 {
		s += fmt.Sprintf(" (resumed after %.1f MB)", float64(resumed)/1e6)
	}
	return s
}

func sizeText(size int64) string {
	if size < 0 {
		return "?"
	}
	return fmt.Sprint(size)
}
