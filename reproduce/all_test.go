package reproduce

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"pqrepro/analysis/agreement"
	"pqrepro/internal/settings"
)

// mustContain reports each of wants that out lacks.
func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A study whose items are all host-independent (Study C's emulated
// cycles) is not said to have its times "not judged" on another host.
func TestHasHostDependent(t *testing.T) {
	s := &summary{items: &agreement.Report{Items: []agreement.Judged{
		{Study: "pico", Item: agreement.Item{Class: agreement.HostIndependent}},
		{Study: "tls", Item: agreement.Item{Class: agreement.HostIndependent}},
		{Study: "tls", Item: agreement.Item{Class: agreement.HostDependent}},
	}}}
	if s.hasHostDependent("pico") || !s.hasHostDependent("tls") || !(&summary{}).hasHostDependent("net") {
		t.Error("hasHostDependent: want false for pico, true for tls and for a summary without items")
	}
}

// TestPlanCountsOneTimeWork checks that the plan names a fresh machine's
// installs and builds, puts them in the total and says they are one-time.
func TestPlanCountsOneTimeWork(t *testing.T) {
	var log bytes.Buffer
	cfg := Config{Root: t.TempDir(), Profile: settings.Quick, Log: &log}
	s := Study{Name: "alpha", Title: "fake study alpha",
		Estimate: func(profile string) time.Duration { return time.Minute },
		OneTime: func() []OneTimeWork {
			return []OneTimeWork{{What: "apt-get install tshark", Estimate: 24 * time.Second}, {What: "build X into .cache/x", Estimate: 6 * time.Minute}}
		},
	}
	ready := s
	ready.OneTime = nil
	for _, tc := range []struct {
		name  string
		s     Study
		wants []string
		not   string
	}{
		{"fresh machine", s, []string{
			"first, once on this machine: apt-get install tshark [about 24s]",
			"first, once on this machine: build X into .cache/x [about 6m0s]",
			"quick: estimated time about 7m54s, of which about 6m24s is one-time work on this machine that a second run skips",
		}, ""},
		{"second run", ready, []string{"quick: estimated time about 1m30s (experiments"}, "once on this machine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log.Reset()
			p := studyPlan{s: tc.s, estimate: time.Minute, oneTime: tc.s.oneTimeWork()}
			printPlan(cfg, "quick", []studyPlan{p}, "")
			mustContain(t, log.String(), tc.wants...)
			if tc.not != "" && strings.Contains(log.String(), tc.not) {
				t.Errorf("plan says %q:\n%s", tc.not, log.String())
			}
		})
	}
}
