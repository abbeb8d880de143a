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
	f.Add("probe,X25519,1000,456426,426893,533804\nprobe,X25519MLKEM768,1000,682109,651677,769285\ndone\n")
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
			lo, hi := float64(minProbeSpan)/1e6, float64(maxProbeSpan)/1e6
			if !(sp.P25Ms >= lo && sp.P25Ms <= sp.MedianMs && sp.MedianMs <= sp.P75Ms && sp.P75Ms <= hi) {
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

// TestParseProbeBounds is issue 44's item 6: a probe line whose spans no
// TLS 1.3 handshake on loopback can have (1 ns, 9.2e18 ns) or whose
// hybrid is implausibly faster or slower than X25519 is refused, naming
// the bound, and the error quotes at most a short prefix of the output.
func TestParseProbeBounds(t *testing.T) {
	groups := []string{"X25519", "X25519MLKEM768"}
	line := func(x, h string) string {
		return "probe,X25519,1000," + x + "\nprobe,X25519MLKEM768,1000," + h + "\ndone\n"
	}
	for _, tc := range []struct{ name, in, want string }{
		{"measured", line("456426,426893,533804", "682109,651677,769285"), ""},
		{"1 ns", line("1,1,1", "682109,651677,769285"), "under 1µs"},
		{"9.2e18 ns", line("456426,426893,533804", "9200000000000000000,9200000000000000000,9200000000000000000"), "over 10s"},
		{"hybrid 5,000 times faster", line("456426,426893,533804", "91,91,91"), "field 4, 91ns, is under 1µs"},
		{"hybrid 5,000 times faster within the span bounds", line("9000000000,9000000000,9000000000", "1800000,1800000,1800000"), "X25519MLKEM768's median is 0.0002 times X25519's: want 0.5 to 20"},
		{"hybrid 50 times slower", line("456426,426893,533804", "22821300,22821300,22821300"), "50 times X25519's"},
		{"a long field", line("456426,426893,"+strings.Repeat("9", 5000), "682109,651677,769285"), "field 6 is not"},
		{"a long line", strings.Repeat("x", 5000) + "\ndone\n", "printed 2 lines"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			_, err := parseProbe(tc.in, groups)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("parseProbe: %v", err)
			case tc.want == "":
				return
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if n := len(err.Error()); n > 600 {
				t.Errorf("the error is %d bytes long: it should quote a short prefix of the output", n)
			}
		})
	}
}

// TestRunProbeReadLimit is issue 44's item 6: a probe that prints 50 MB
// is read up to maxProbeOutput, stopped, and reported in a short error,
// not held in memory and quoted whole (a 50 MB output was a 50 MB error
// message). The output is finite, so that the test cannot fill the
// memory of a machine where the limit is missing.
func TestRunProbeReadLimit(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body string }{
		{"stdout", "yes probe,X25519,1000,1,1,1 | head -c 50000000"},
		{"stderr", "yes 'endpoint: probe: failing' | head -c 50000000 >&2; exit 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := filepath.Join(dir, tc.name)
			if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+tc.body+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			t0 := time.Now()
			_, err := runProbe(ctx, bin, "c", "k", "r", []string{"X25519", "X25519MLKEM768"})
			if err == nil {
				t.Fatal("an endless output was accepted")
			}
			if n := len(err.Error()); n > 1000 {
				t.Errorf("the error is %d bytes long: %.300s...", n, err)
			}
			if tc.name == "stdout" && !strings.Contains(err.Error(), "more than") {
				t.Errorf("err = %.300s, want it to say the output exceeded the limit", err)
			}
			if d := time.Since(t0); d > 4*time.Second {
				t.Errorf("took %v: the probe was not stopped at the limit", d)
			}
		})
	}
}
