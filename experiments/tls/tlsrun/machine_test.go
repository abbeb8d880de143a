package tlsrun

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/instruments/runlife"
	"pqrepro/internal/provenance"
	"pqrepro/internal/quiet"
	"pqrepro/internal/spec"
)

// The runs of these tests watch a stand-in machine that is always quiet:
// they must not depend on how busy the machine running them is (a busy
// one would leave their runs unpinned), nor wait for a pre-flight. The
// busy case is TestBusyRunNotPinned's.
func TestMain(m *testing.M) {
	runlife.DefaultMachine = func() quiet.Watcher { return quiet.NewFixed(quiet.Quiet) }
	os.Exit(m.Run())
}

// A Study A quick run on a machine the sampler finds busy is committed
// with the verdict in meta.json but not pinned, and the error says what
// to do; with PQREPRO_PIN_BUSY it is pinned and the reason recorded.
func TestBusyRunNotPinned(t *testing.T) {
	needRoot(t)
	defer func(d func() quiet.Watcher) { runlife.DefaultMachine = d }(runlife.DefaultMachine)
	runlife.DefaultMachine = func() quiet.Watcher { return quiet.NewFixed(quiet.Busy) }
	for i, override := range []string{"", "the only host of its kind"} {
		e := newEnv(t, tinySpec)
		before, _ := os.ReadFile(e.spec)
		cfg := e.config(time.Date(2026, 11, 30, 14, 0, i, 0, time.UTC))
		cfg.PinBusy = override
		res, err := Run(context.Background(), cfg)
		if res == nil {
			t.Fatalf("override %q: not committed: %v\n%s", override, err, e.log.String())
		}
		after, _ := os.ReadFile(e.spec)
		pin, _ := spec.PinnedIn(e.spec, "quick")
		if override == "" {
			if !errors.Is(err, runlife.ErrBusy) || !errors.Is(err, runlife.ErrNotPinned) || !strings.HasPrefix(err.Error(), "tls:run: ") {
				t.Fatalf("err = %v, want tls:run: ... ErrBusy, ErrNotPinned", err)
			}
			if string(after) != string(before) || pin != "" {
				t.Errorf("a busy run was pinned (%q):\n%s", pin, after)
			}
		} else if err != nil || pin != res.RunID {
			t.Fatalf("with %s: err %v, pin %q, want %s pinned", runlife.PinBusyEnv, err, pin, res.RunID)
		}
		m, err := provenance.Read(res.Dir)
		if err != nil {
			t.Fatal(err)
		}
		mach, _ := m.Measured[runlife.MachineKey].(map[string]any)
		if mach["verdict"] != quiet.Busy || (override != "" && mach["override"] != override) || (override == "" && mach["override"] != nil) {
			t.Errorf("measured.machine %v", mach)
		}
		log := e.log.String()
		for _, w := range []string{"tls:run: machine before the run: BUSY", "stop other jobs; see docs/quiet.md", "; machine: load 6.00, other processes 1.20 core, steal 0.0 % (BUSY); top other: cc1 4242 1.20 core"} {
			if !strings.Contains(log, w) {
				t.Errorf("log lacks %q:\n%s", w, log)
			}
		}
	}
}
