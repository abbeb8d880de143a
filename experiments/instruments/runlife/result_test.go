package runlife

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestResult: a run has a Result once Commit published it, pinned or
// not, and none before or when Commit failed before publishing.
func TestResult(t *testing.T) {
	const id = "20261130T120000Z-quick"
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// run takes the lifecycle as far as the case goes and returns
		// Commit's error (nil when it does not commit).
		run        func(t *testing.T, l *Life, specPath string) error
		wantResult bool
		wantPinned bool
		wantErr    error
	}{
		{name: "before Begin", run: func(*testing.T, *Life, string) error { return nil }},
		{name: "begun, not committed", run: func(t *testing.T, l *Life, _ string) error {
			if err := l.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
		{name: "commit failed", wantErr: os.ErrExist, run: func(t *testing.T, l *Life, _ string) error {
			if err := l.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(l.Run.Final, 0o755); err != nil { // another process's run
				t.Fatal(err)
			}
			err := l.Commit(ctx, l.Meta(ctx, nil))
			if err == nil {
				return errors.New("Commit succeeded over another run")
			}
			return os.ErrExist
		}},
		{name: "committed and pinned", wantResult: true, wantPinned: true, run: func(t *testing.T, l *Life, _ string) error {
			return record(t, ctx, l, -1, nil)
		}},
		{name: "a repeat run", wantResult: true, run: func(t *testing.T, l *Life, _ string) error {
			l.NoPin = true
			return record(t, ctx, l, -1, nil)
		}},
		{name: "committed, pin failed", wantResult: true, wantErr: ErrNotPinned, run: func(t *testing.T, l *Life, specPath string) error {
			if err := l.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			// The spec turns into something Pin cannot edit.
			if err := os.Remove(specPath); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(specPath, 0o755); err != nil {
				t.Fatal(err)
			}
			return l.Commit(ctx, l.Meta(ctx, nil))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, specPath, _ := testRoot(t, "")
			l, err := New(testConfig(root))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Abort()
			if err := tc.run(t, l, specPath); !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			res := l.Result()
			if (res != nil) != tc.wantResult {
				t.Fatalf("Result %+v, want one: %v", res, tc.wantResult)
			}
			if res == nil {
				return
			}
			want := Result{RunID: id, Dir: filepath.Join(root, "data", study, id), Pinned: tc.wantPinned}
			if *res != want {
				t.Errorf("Result %+v, want %+v", *res, want)
			}
			if _, err := os.Stat(filepath.Join(res.Dir, "MANIFEST.sha256")); err != nil {
				t.Errorf("Result names %s, which is not a committed run: %v", res.Dir, err)
			}
		})
	}
}
