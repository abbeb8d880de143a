package tlscrosshost

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/analysis/tlscompare"
	"pqrepro/analysis/tlshost"
	"pqrepro/analysis/tlsstudy"
)

// TestNormalisedIncreasesCommitted reads the committed results: every
// role has a ratio or a reason, and ML-KEM-1024's increase, whose
// prediction is a few hundredths of a millisecond, is never divided by it.
func TestNormalisedIncreasesCommitted(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "results", "tls.json"))
	if err != nil {
		t.Skipf("no committed results: %v", err)
	}
	var r tlsstudy.Results
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	ns, err := NormalisedIncreases(&r)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 3 {
		t.Fatalf("%d roles, want 3", len(ns))
	}
	for _, n := range ns {
		if (n.NotJudged == "") == math.IsNaN(n.Ratio) {
			t.Errorf("%s: ratio %v with reason %q: want exactly one", n.Role, n.Ratio, n.NotJudged)
		}
		if n.Role == "pq-kem" && !strings.Contains(n.NotJudged, "below") {
			t.Errorf("pq-kem: %+v, want not judged (prediction too small)", n)
		}
	}
}

func TestNormalisedIncreasesBadInput(t *testing.T) {
	base := func() *tlsstudy.Results {
		return &tlsstudy.Results{
			Primary: tlsstudy.PrimaryChoice{Status: tlsstudy.PrimaryStated, Judged: tlsstudy.Cell{Stack: "openssl-cli", Path: "docker", KeyShare: tlsstudy.KeyShareDirect}},
			Configs: []tlsstudy.ConfigResult{
				{Config: "ed25519/X25519/openssl-cli", CertKey: "ed25519", Group: "X25519"},
				{Config: "ed25519/SecP384r1MLKEM1024/openssl-cli", CertKey: "ed25519", Group: "SecP384r1MLKEM1024"},
			},
			Families: map[string]*tlsstudy.Family{"paper": {Comparisons: []tlsstudy.Comparison{{Role: "hybrid", Target: "ed25519/SecP384r1MLKEM1024/openssl-cli",
				Baseline: "ed25519/X25519/openssl-cli", Rounds: tlscompare.RoundComparison{IncreaseMs: 3.3, SE: 0.1}}}}},
			Host: &tlshost.Account{
				Before: map[string]tlsstudy.Num{"ecdh-x25519": 0.03, "ecdh-p384": 1.0, "mlkem1024-encaps": 0.02, "mlkem1024-decaps": 0.02, "ed25519-sign": 0.02, "ed25519-verify": 0.05},
				After:  map[string]tlsstudy.Num{"ecdh-x25519": 0.03, "ecdh-p384": 1.0, "mlkem1024-encaps": 0.02, "mlkem1024-decaps": 0.02, "ed25519-sign": 0.02, "ed25519-verify": 0.05},
			},
		}
	}
	for _, tc := range []struct {
		name      string
		change    func(r *tlsstudy.Results)
		notJudged string // "" for a judged ratio
	}{
		{"judged", func(*tlsstudy.Results) {}, ""},
		{"no speed", func(r *tlsstudy.Results) { r.Host = nil }, "no `openssl speed`"},
		{"drift", func(r *tlsstudy.Results) { r.Host.After["ecdh-p384"] = 1.2 }, "moved 20.3 %"},
		{"unknown group", func(r *tlsstudy.Results) { r.Configs[1].Group = "FFDHE2048" }, "no prediction"},
		{"missing primitive", func(r *tlsstudy.Results) { delete(r.Host.Before, "ecdh-p384"); delete(r.Host.After, "ecdh-p384") }, "no prediction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			tc.change(r)
			ns, err := NormalisedIncreases(r)
			if err != nil {
				t.Fatal(err)
			}
			n := ns[0]
			if tc.notJudged == "" {
				// 3 x (1.0 - 0.03) + 0.04 = 2.95 ms predicted.
				if n.NotJudged != "" || math.Abs(n.PredictedMs-2.95) > 1e-9 || math.Abs(n.Ratio-3.3/2.95) > 1e-9 {
					t.Errorf("got %+v, want predicted 2.95 ms, ratio %.4f", n, 3.3/2.95)
				}
				return
			}
			if !strings.Contains(n.NotJudged, tc.notJudged) || !math.IsNaN(n.Ratio) {
				t.Errorf("got %+v, want not judged with %q", n, tc.notJudged)
			}
		})
	}
	r := base()
	r.Primary.Status = tlsstudy.PrimaryAbsent
	r.Primary.Note = "primary cell not in this run"
	if _, err := NormalisedIncreases(r); err == nil {
		t.Error("no judged cell: want an error")
	}
}
