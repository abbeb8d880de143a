package treelock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func init() { poll = 5 * time.Millisecond }

// lines is a log that hands each write to the test.
type lines chan string

func (l lines) Write(p []byte) (int, error) { l <- string(p); return len(p), nil }

func TestRefuseNamesTheHolder(t *testing.T) {
	root := t.TempDir()
	l, err := Acquire(context.Background(), root, Write, "build", Wait, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, err = Acquire(context.Background(), root, Write, "tls:run", Refuse, nil)
	var be *BusyError
	if !errors.As(err, &be) {
		t.Fatalf("second Acquire: %v, want a *BusyError", err)
	}
	msg := err.Error()
	for _, want := range []string{"tls:run refuses", "build (PID " + itoa(os.Getpid()) + ", started "} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message is more than one line: %q", msg)
	}
}

func TestWaitSaysForWhomThenGetsIt(t *testing.T) {
	root := t.TempDir()
	first, err := Acquire(context.Background(), root, Write, "build", Wait, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := make(lines, 4)
	got := make(chan *Lock)
	go func() {
		l, err := Acquire(context.Background(), root, Write, "clean", Wait, log)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	var line string
	select {
	case line = <-log:
	case l := <-got:
		t.Fatalf("second Acquire returned %v while the first holds the lock", l)
	}
	first.Release()
	second := <-got
	defer second.Release()
	want := "clean: waiting for build (PID " + itoa(os.Getpid()) + ", started "
	if !strings.HasPrefix(line, want) || strings.Count(line, "\n") != 1 || len(log) != 0 {
		t.Errorf("log %q (and %d more): want one line starting %q", line, len(log), want)
	}
	if st, h, _ := Inspect(root, Write); st != Held || h.Target != "clean" {
		t.Errorf("Inspect after the hand-over: %v %+v, want held by clean", st, h)
	}
}

func TestWaitStopsWithTheContext(t *testing.T) {
	root := t.TempDir()
	l, err := Acquire(context.Background(), root, Write, "build", Wait, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := Acquire(ctx, root, Write, "paper", Wait, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire after cancel: %v, want context.Canceled", err)
	}
}

// deadPID is the PID of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skipf("no `true` to make a dead PID: %v", err)
	}
	return c.Process.Pid
}

func TestStaleLockIsReportedAndTakenOver(t *testing.T) {
	root := t.TempDir()
	pid := deadPID(t)
	stale := Holder{PID: pid, Target: "net:run", Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := os.MkdirAll(filepath.Join(root, Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Path(root, Write), stale.encode(), 0o644); err != nil {
		t.Fatal(err)
	}
	st, h, err := Inspect(root, Write)
	if err != nil || st != Stale || h.PID != pid || h.Target != "net:run" {
		t.Fatalf("Inspect: %v %+v %v, want stale net:run PID %d", st, h, err, pid)
	}
	l, err := Acquire(context.Background(), root, Write, "tls:run", Refuse, nil)
	if err != nil {
		t.Fatalf("Acquire over a dead holder: %v", err)
	}
	if st, h, _ := Inspect(root, Write); st != Held || h.Target != "tls:run" || h.PID != os.Getpid() {
		t.Errorf("after take-over: %v %+v", st, h)
	}
	l.Release()
	if st, _, _ := Inspect(root, Write); st != Free {
		t.Errorf("after Release: %v, want Free", st)
	}
}

// The lock survives the deletion of its folder (a hand rm -r .cache/locks,
// clean of an older version): a second writer is still refused, and names
// the holder as unknown with the record's path.
func TestRemovedLockFolderIsNotShared(t *testing.T) {
	root := t.TempDir()
	a, err := Acquire(context.Background(), root, Write, "a", Wait, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	if err := os.RemoveAll(filepath.Join(root, Dir)); err != nil {
		t.Fatal(err)
	}
	b, err := Acquire(context.Background(), root, Write, "b", Refuse, nil)
	if err == nil {
		b.Release()
		t.Fatal("b got the write lock after its folder was deleted while a holds it")
	}
	if !strings.Contains(err.Error(), "unknown command") || !strings.Contains(err.Error(), Path(root, Write)) {
		t.Errorf("error %q does not name the holder as unknown with the record's path", err)
	}
	if st, h, err := Inspect(root, Write); err != nil || st != Held || h.Record == "" {
		t.Errorf("Inspect = %v %+v %v, want held by an unknown holder", st, h, err)
	}
}

// A held lock whose record holds garbage is shown as an unknown holder
// with the record's path, not as "(PID 0, started 00:00:00)".
func TestGarbledRecordShownAsUnknown(t *testing.T) {
	root := t.TempDir()
	a, err := Acquire(context.Background(), root, Write, "a", Wait, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	if err := os.WriteFile(Path(root, Write), []byte("\x00garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, h, err := Inspect(root, Write)
	if err != nil || st != Held {
		t.Fatalf("Inspect = %v %v, want Held", st, err)
	}
	if s := h.String(); strings.Contains(s, "PID 0") || !strings.Contains(s, "unknown") || !strings.Contains(s, Path(root, Write)) {
		t.Errorf("holder shown as %q", s)
	}
}

func TestParseHolder(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"", false},
		{"\n", false},
		{"12 2026-01-02T03:04:05Z build\n", true},
		{"12 2026-01-02T03:04:05Z pico:run with spaces\n", true},
		{"-3 2026-01-02T03:04:05Z build", false},
		{"x 2026-01-02T03:04:05Z build", false},
		{"12 yesterday build", false},
		{"12 2026-01-02T03:04:05Z", false},
	} {
		if _, ok := parseHolder([]byte(tc.in)); ok != tc.ok {
			t.Errorf("parseHolder(%q) ok = %v, want %v", tc.in, ok, tc.ok)
		}
	}
}

func FuzzParseHolder(f *testing.F) {
	f.Add([]byte("12 2026-01-02T03:04:05Z build\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, ok := parseHolder(b)
		if !ok {
			return
		}
		if h2, ok2 := parseHolder(h.encode()); !ok2 || h2.PID != h.PID || !h2.Start.Equal(h.Start) {
			t.Errorf("round trip of %q: %+v -> %+v", b, h, h2)
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestRecordNotFollowed: a symbolic link, a FIFO or a device planted as
// a lock's record is refused with a message saying to remove it; the
// link's target is left as it was (before, Acquire truncated it and wrote
// its record there) and nothing blocks or reads without end.
func TestRecordNotFollowed(t *testing.T) {
	for _, name := range []string{Write, Compile} {
		for _, tc := range []struct {
			kind string
			make func(t *testing.T, path string) (check func())
			want string
		}{
			{"link to a file", func(t *testing.T, path string) func() {
				victim := filepath.Join(t.TempDir(), "precious")
				if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(victim, path); err != nil {
					t.Fatal(err)
				}
				return func() {
					if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
						t.Errorf("the link's target now holds %q", b)
					}
				}
			}, "is a symbolic link"},
			{"link to /dev/zero", func(t *testing.T, path string) func() {
				if err := os.Symlink("/dev/zero", path); err != nil {
					t.Fatal(err)
				}
				return func() {}
			}, "is a symbolic link"},
			{"FIFO", func(t *testing.T, path string) func() {
				if err := syscall.Mkfifo(path, 0o644); err != nil {
					t.Fatal(err)
				}
				return func() {}
			}, "not a regular file"},
		} {
			t.Run(name+"/"+tc.kind, func(t *testing.T) {
				root := t.TempDir()
				path := Path(root, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				check := tc.make(t, path)
				done := make(chan error, 1)
				go func() {
					l, err := Acquire(context.Background(), root, name, "build", Refuse, nil)
					l.Release()
					if err == nil {
						_, _, err = Inspect(root, name)
					}
					done <- err
				}()
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "remove it") {
						t.Errorf("Acquire: %v, want %q and what to do", err, tc.want)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("Acquire blocked")
				}
				if _, _, err := Inspect(root, name); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Inspect: %v, want %q", err, tc.want)
				}
				check()
			})
		}
	}
}

// TestHolderPrintable: a record's target with control characters (a
// terminal escape written into the file) is printed quoted, never raw.
func TestHolderPrintable(t *testing.T) {
	for _, tc := range []struct{ target, want string }{
		{"tls:run", "tls:run (PID 7, "},
		{"x\x1b]0;pwned\x07", `"x\x1b]0;pwned\a" (PID 7, `},
		{"a\u202eb", `"a\u202eb" (PID 7, `},
	} {
		h := Holder{PID: 7, Target: tc.target, Start: time.Unix(0, 0)}
		if got := h.String(); !strings.HasPrefix(got, tc.want) || strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("%q prints as %q, want it to start with %q", tc.target, got, tc.want)
		}
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := strconv.Itoa(os.Getpid()) + " 2026-01-01T00:00:00Z \x1b[2Jbuild\n"
	if err := os.WriteFile(Path(root, Compile), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	h := readHolder(Path(root, Compile))
	if s := h.String(); strings.Contains(s, "\x1b") || !strings.Contains(s, `\x1b[2Jbuild`) {
		t.Errorf("a record's escape prints as %q", s)
	}
}
