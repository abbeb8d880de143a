package runlife

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/internal/provenance"
	"pqrepro/internal/quiet"
)

func TestCheckReason(t *testing.T) {
	for _, tc := range []struct {
		name, s, want string // want "" accepts s
	}{
		{"a sentence", "the reference host has no idle hours this week", ""},
		{"LaTeX's special characters", `load 50% & steal_time ~2 {see #3} $5 \ ^`, ""},
		{"hyphens break long words", "SPHINCS+-SHA2-128f-signing-on-a-shared-runner", ""},
		{"13-letter word", "WWWWWWWWWWWWW", ""},
		{"200 characters", strings.Repeat("abcd ", 40), ""},
		{"blank", "   ", "is blank"},
		{"emoji", "busy \U0001F600", "character 6 is U+1F600"},
		{"line separator", "busy\u2028host", "character 5 is U+2028"},
		{"paragraph separator", "busy\u2029host", "U+2029"},
		{"newline", "busy\nhost", "U+000A"},
		{"tab", "busy\thost", "U+0009"},
		{"accented letter", "r\u00e9seau", "U+00E9"},
		{"not UTF-8", "busy \xff", "a byte that is not UTF-8"},
		{"14-letter word", "WWWWWWWWWWWWWW", `the word "WWWWWWWWWWWWWW" is 14 characters long: at most 13`},
		{"60-character word", strings.Repeat("x", 60), "is 60 characters long: at most 13"},
		{"a path has no break", "see /home/user/notes/busy.txt", "the word \"/home/user/notes/busy.txt\""},
		{"201 characters", strings.Repeat("abcd ", 40) + "x", "is 201 characters long: at most 200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckReason(PinBusyEnv, tc.s)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckReason(%q) = %v, want nil", tc.s, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), PinBusyEnv)):
				t.Errorf("CheckReason(%q) = %v, want an error saying %q", tc.s, err, tc.want)
			}
		})
	}
}

// A reason the paper cannot print stops the run before anything is
// recorded, from the Config (PQREPRO_PIN_BUSY, which internal/settings
// reads) or a context.
func TestBadPinBusyIsRefusedBeforeTheRun(t *testing.T) {
	for _, tc := range []struct{ name, cfg, ctx string }{
		{"config emoji", "busy \U0001F600", ""},
		{"config line separator", "busy\u2028host", ""},
		{"context", "", strings.Repeat("x", 60)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, specPath, body := testRoot(t, "")
			cfg := testConfig(root)
			cfg.Machine, cfg.PinBusy = quiet.NewFixed(quiet.Busy), tc.cfg
			ctx := context.Background()
			if tc.ctx != "" {
				ctx = WithPinBusy(ctx, tc.ctx)
			}
			l, err := New(cfg)
			if err == nil {
				err = l.Begin(ctx)
				defer l.Abort()
			}
			if err == nil || !strings.HasPrefix(err.Error(), "lifetest:run: ") || !strings.Contains(err.Error(), "nothing was recorded") {
				t.Fatalf("err = %v, want a refusal before the run", err)
			}
			if ents, _ := os.ReadDir(filepath.Join(root, "data")); len(ents) != 0 {
				t.Errorf("data/ holds %d entries", len(ents))
			}
			if b, _ := os.ReadFile(specPath); string(b) != string(body) {
				t.Errorf("the spec changed:\n%s", b)
			}
		})
	}
}

// A CPU model or board the paper cannot print stops Commit before the
// run is sealed.
func TestCommitRefusesUnprintableMeta(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(m *provenance.Meta)
		want string
	}{
		{"cpu model", func(m *provenance.Meta) { m.Host.CPUModel = "Xeon\u2122 Gold" }, "meta.json host.cpu_model: character 5 is U+2122"},
		{"board", func(m *provenance.Meta) { m.Board = "Pico \U0001F600" }, "meta.json board: character 6 is U+1F600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, specPath, body := testRoot(t, "")
			l, err := New(testConfig(root))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := l.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			defer l.Abort()
			m := l.Meta(ctx, nil)
			tc.set(&m)
			if err := l.Commit(ctx, m); err == nil || !strings.Contains(err.Error(), tc.want) || l.Committed() {
				t.Fatalf("Commit: %v (committed %v), want an error saying %q", err, l.Committed(), tc.want)
			}
			l.Abort()
			if ents, _ := os.ReadDir(filepath.Join(root, "data", study)); len(ents) != 0 {
				t.Errorf("data/%s holds %d entries after Abort", study, len(ents))
			}
			if b, _ := os.ReadFile(specPath); string(b) != string(body) {
				t.Errorf("the spec changed:\n%s", b)
			}
		})
	}
}
