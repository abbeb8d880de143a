package ttlbmechanism_test

import (
	"strconv"
	"strings"
	"testing"

	"pqrepro/analysis/ttlb"
	"pqrepro/analysis/ttlbmechanism"
)

// TestParseRegistration: the committed second registration parses to its
// values; each bad line is an error naming the line (or, for a missing
// key, the key), an unknown key included; the first registration's
// keys are refused.
func TestParseRegistration(t *testing.T) {
	want := ttlbmechanism.Registration{Model: "intervention", Arm: "X25519-padded", PadBytes: 1080, Alpha: 0.05, Resamples: 2000, Seed: 41}
	got, err := ttlbmechanism.ParseRegistration(ttlb.Mechanism2Text)
	if err != nil || got != want {
		t.Fatalf("the committed registration: %+v, %v; want %+v", got, err, want)
	}
	if ttlbmechanism.Registered != want {
		t.Errorf("Registered %+v, want %+v", ttlbmechanism.Registered, want)
	}
	if _, err := ttlbmechanism.ParseRegistration(ttlb.MechanismText); err == nil || !strings.Contains(err.Error(), "model") {
		t.Errorf("the first registration parsed as the second: %v", err)
	}
	text := string(ttlb.Mechanism2Text)
	lineOf := func(prefix string) string {
		for n, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, prefix) {
				return "line " + strconv.Itoa(n+1)
			}
		}
		t.Fatalf("no line %q in the registration", prefix)
		return ""
	}
	seedLine, _ := strconv.Atoi(strings.TrimPrefix(lineOf("seed:"), "line "))
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"model", "model: intervention", "model: standardised-window", lineOf("model:")},
		{"arm", "arm: X25519-padded", "arm: X25519-pad", lineOf("arm:")},
		{"pad", "pad-bytes: 1080", "pad-bytes: 1088", lineOf("pad-bytes:")},
		{"pad not a number", "pad-bytes: 1080", "pad-bytes: 1,080", lineOf("pad-bytes:")},
		{"alpha 0", "alpha: 0.05", "alpha: 0", lineOf("alpha:")},
		{"alpha above 1", "alpha: 0.05", "alpha: 1.5", lineOf("alpha:")},
		{"alpha not a number", "alpha: 0.05", "alpha: five percent", lineOf("alpha:")},
		{"resamples 99", "resamples: 2000", "resamples: 99", lineOf("resamples:")},
		{"resamples not whole", "resamples: 2000", "resamples: 2e3", lineOf("resamples:")},
		{"seed negative", "seed: 41", "seed: -1", lineOf("seed:")},
		{"unknown key", "seed: 41", "seed: 41\nfit: other-toolchain", "line " + strconv.Itoa(seedLine+1) + ": unknown key"},
		{"key twice", "seed: 41", "seed: 41\nseed: 42", "given twice"},
		{"missing arm", "arm: X25519-padded\n", "", `no "arm" line`},
		{"missing seed", "seed: 41\n", "", `no "seed" line`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(text, tc.old) {
				t.Fatalf("the registration has no %q", tc.old)
			}
			_, err := ttlbmechanism.ParseRegistration([]byte(strings.Replace(text, tc.old, tc.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
