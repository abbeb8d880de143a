package tlsstudy

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"pqrepro/datasets/tlsdata"
)

// gapMeta is a meta.json with every `openssl speed` figure the paper's
// four configurations need.
const gapMeta = `{"study": "tls", "measured": {"host_crypto": {
 "before": {"cpu_settings": "x", "ms_per_op": {"ecdh-p384": 0.9, "ecdh-x25519": 0.04, "mlkem1024-keygen": 0.03, "mlkem1024-encaps": 0.035, "mlkem1024-decaps": 0.045,
  "ed25519-sign": 0.02, "ed25519-verify": 0.05, "mldsa87-sign": 0.4, "mldsa87-verify": 0.1}},
 "implementations": {"P-384": "generic"}}}}`

// withEmulated appends to base (a run's records) emulated-path records
// made by the model itself, Ths = c0 + k RTT + s CPU + noise, over the
// given one-way delays, two group lists and both chains, one block of
// perRound connections (after a warm-up) per configuration and round.
func withEmulated(base []tlsdata.Record, delays []float64, rounds, perRound int, c0, s float64) []tlsdata.Record {
	rng := rand.New(rand.NewPCG(30, 1))
	ms := HostMsPerOp(mustMeta(gapMeta).HostCrypto)
	tmpl := base[len(base)-1]
	seq := tmpl.Seq
	out := append([]tlsdata.Record(nil), base...)
	p := DefaultParams("quick")
	for r := 0; r < rounds; r++ {
		for _, d := range delays {
			for _, mode := range []string{tlsdata.ClientGroupsPerConfig, tlsdata.ClientGroupsX25519First} {
				for _, chain := range []bool{false, true} {
					for _, basID := range p.Paper {
						b, _ := tlsdata.ParseConfigID(basID)
						id := tlsdata.ConfigID{CertKey: b.CertKey, Group: b.Group, Chain: chain, Stack: tlsdata.StackOpenSSLCLI, Groups: mode}
						hrr := tlsdata.ExpectHRR(mode, b.Group)
						k := int64(1)
						if hrr {
							k++
						}
						if chain && b.CertKey == "mldsa87" {
							k++
						}
						verifies := 0
						if chain {
							verifies = 1
						}
						cpu, err := ConfigCPUMs(ms, b.CertKey, b.Group, hrr, verifies)
						if err != nil {
							panic(err)
						}
						rtt := 2*d + 0.1
						for j := 0; j <= perRound; j++ {
							seq++
							ths := c0 + float64(k)*rtt + s*cpu + 0.05*rng.NormFloat64()
							rec := tmpl
							rec.Seq, rec.Config, rec.CertKey, rec.Group, rec.Chain, rec.Warmup = seq, id.ID(), b.CertKey, b.Group, chain, j == 0
							rec.Stack, rec.Path, rec.ClientGroups, rec.HRR, rec.NegotiatedGroup = tlsdata.StackOpenSSLCLI, tlsdata.EmulatedPath(d), mode, hrr, b.Group
							ch := *tmpl.ClientHelloNs + int64(seq)*10_000_000
							cf, thsNs, rt, rttNs := ch+int64(ths*1e6), int64(ths*1e6), k, int64(rtt*1e6)
							rec.ClientHelloNs, rec.ClientFinishedNs, rec.ThsNs, rec.RoundTrips, rec.LinkRTTNs = &ch, &cf, &thsNs, &rt, &rttNs
							out = append(out, rec)
						}
					}
				}
			}
		}
	}
	return out
}

func mustMeta(s string) RunMeta {
	m, err := ParseRunMeta("meta.json", []byte(s))
	if err != nil {
		panic(err)
	}
	return m
}

// TestGapModelFromRun: a run's emulated-path cells become the gap model's
// rows (median round trips, the link's RTT, CPU with 3 or 4 P-384
// operations), the comparisons ignore them, and the fit recovers the
// model that made them; the outputs then show values, not "not measured".
func TestGapModelFromRun(t *testing.T) {
	recs := withEmulated(paperSpec.records(), []float64{0, 0.5, 1, 2}, 10, 2, 2.5, 1.1)
	p := testParams()
	res, em, err := AnalyzeRun(recs, p, Input{Path: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Gap.Cells {
		if strings.HasPrefix(c.Cell.Path, tlsdata.EmulatedPathPrefix) {
			t.Errorf("emulated cell %s in the gap analysis", c.Cell)
		}
	}
	if err := AttachGapModel(res, em, p, mustMeta(gapMeta)); err != nil {
		t.Fatal(err)
	}
	if len(res.GapModelRows) != 4*2*2*4 {
		t.Fatalf("%d rows, want 64", len(res.GapModelRows))
	}
	for _, r := range res.GapModelRows {
		wantK := 1.0
		if r.Groups == tlsdata.ClientGroupsX25519First && (r.Role == "pq-kem" || r.Role == "hybrid") {
			wantK++
		}
		if r.Chain == "leaf+ca" && r.Role == "pq-sig" {
			wantK++
		}
		if r.RoundTrips != wantK || math.Abs(r.RTTMs-(2*r.OneWayDelayMs+0.1)) > 1e-5 || len(r.RoundThsMs) != 10 || (r.HRRShare == 1) != (wantK > 1 && r.Role != "pq-sig") {
			t.Errorf("row %s: k %v rtt %v rounds %d hrr %v", r.Label(), r.RoundTrips, r.RTTMs, len(r.RoundThsMs), r.HRRShare)
		}
	}
	f, _, err := gapModel(res.GapModelRows)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.C0.Est-2.5) > 0.1 || math.Abs(f.S.Est-1.1) > 0.1 || !f.Pass {
		t.Errorf("fit c0 %v s %v pass %v, want 2.5, 1.1, pass", f.C0.Est, f.S.Est, f.Pass)
	}
	tab, err := gapModelTable(res)
	if err != nil || strings.Contains(tab, notMeasured) {
		t.Errorf("table (err %v):\n%s", err, tab)
	}

	// Bad input: no host_crypto, or too few delay levels for the split.
	res, em, _ = AnalyzeRun(recs, p, Input{Path: "synthetic"})
	if err := AttachGapModel(res, em, p, RunMeta{}); err == nil || !strings.Contains(err.Error(), "host_crypto") {
		t.Errorf("without host_crypto: %v", err)
	}
	two := withEmulated(paperSpec.records(), []float64{0, 2}, 10, 2, 2.5, 1.1)
	res, em, err = AnalyzeRun(two, p, Input{Path: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	if err := AttachGapModel(res, em, p, mustMeta(gapMeta)); err == nil || !strings.Contains(err.Error(), "at least 3") {
		t.Errorf("two levels: %v", err)
	}
	// Without emulated cells: no rows, the outputs say so.
	res, em, _ = AnalyzeRun(paperSpec.records(), p, Input{Path: "synthetic"})
	if err := AttachGapModel(res, em, p, mustMeta(gapMeta)); err != nil || res.GapModelRows != nil {
		t.Errorf("no emulated cells: rows %v, %v", res.GapModelRows, err)
	}
}
