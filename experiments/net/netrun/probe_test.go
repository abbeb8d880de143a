package netrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/netdata"
)

// The probe's output is read strictly: one line per group in the order
// asked, N handshakes each, positive ordered quantiles, then done.
func TestParseProbe(t *testing.T) {
	groups := []string{"X25519", "X25519MLKEM768"}
	n := "1000"
	good := "probe,X25519," + n + ",456426,426893,533804\nprobe,X25519MLKEM768," + n + ",682109,651677,769285\ndone\n"
	got, err := parseProbe(good, groups)
	if err != nil {
		t.Fatal(err)
	}
	if s := got["X25519MLKEM768"]; s.MedianMs != 0.682109 || s.P25Ms != 0.651677 || s.P75Ms != 0.769285 || len(got) != 2 {
		t.Errorf("parseProbe = %+v", got)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "printed 0 lines"},
		{"no done", strings.TrimSuffix(good, "done\n"), "printed 2 lines"},
		{"groups swapped", strings.Replace(strings.Replace(good, "probe,X25519,", "probe,TMP,", 1), "probe,X25519MLKEM768,", "probe,X25519,", 1), "want probe,X25519,"},
		{"other n", strings.Replace(good, ","+n+",", ",999,", 1), "want probe,X25519,1000"},
		{"zero time", strings.Replace(good, ",456426,", ",0,", 1), "field 4 is not a positive count"},
		{"not a number", strings.Replace(good, ",426893,", ",4e5,", 1), "field 5 is not a positive count"},
		{"out of order", strings.Replace(good, ",533804", ",400000", 1), "quantiles out of order"},
		{"short line", strings.Replace(good, ",533804", "", 1), "want probe,X25519,1000"},
		{"bad CSV", "probe,\"X25519\n", "endpoint probe output"},
	} {
		if _, err := parseProbe(tc.in, groups); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func FuzzParseProbe(f *testing.F) {
	f.Add("probe,X25519,1000,1,1,1\nprobe,X25519MLKEM768,1000,2,1,3\ndone\n")
	f.Add("done\n")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseProbe(s, []string{"X25519", "X25519MLKEM768"})
		if err != nil {
			return
		}
		if len(got) != 2 {
			t.Fatalf("accepted %q as %+v", s, got)
		}
		for g, sp := range got {
			if !(sp.P25Ms > 0 && sp.P25Ms <= sp.MedianMs && sp.MedianMs <= sp.P75Ms) {
				t.Fatalf("accepted %s %+v", g, sp)
			}
		}
	})
}

// A probe that fails, prints nonsense or hangs is an error with its
// reason, within its context; the run records the reason in
// host_probe.errors and goes on (probeMeta).
func TestRunProbeFailures(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	groups := []string{"X25519", "X25519MLKEM768"}
	for _, tc := range []struct {
		name, bin, want string
		timeout         time.Duration
	}{
		{"missing binary", filepath.Join(dir, "none"), "no such file", time.Minute},
		{"exit 1", script("fail", "echo 'endpoint: probe: bad key' >&2; exit 1"), "bad key", time.Minute},
		{"nonsense", script("nonsense", "echo hello"), "printed 1 lines", time.Minute},
		{"hangs", script("hang", "exec sleep 30"), "context deadline exceeded", 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			t0 := time.Now()
			_, err := runProbe(ctx, tc.bin, "c", "k", "r", groups)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
			if d := time.Since(t0); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	r := &runner{plan: Plan{Toolchains: []string{"go1.24.4"}}}
	p := r.probeMeta(nil, map[string]map[string]netdata.ProbeSpan{"go1.24.4": {"X25519": {MedianMs: 1, P25Ms: 1, P75Ms: 1}}},
		nil, &netdata.ProbeIdle{WaitedS: 1.5, Busy: 0.02}, errors.New("boom"), nil)
	if p == nil || p.Before != nil || p.Errors["before"] != "boom" || p.Errors["after"] != "" || p.N != ProbeN || p.Idle["after"].WaitedS != 1.5 || len(p.Idle) != 1 {
		t.Errorf("probeMeta = %+v", p)
	}
	if p := (&runner{}).probeMeta(nil, nil, nil, nil, nil, nil); p != nil {
		t.Errorf("a run in process has a probe: %+v", p)
	}
}
