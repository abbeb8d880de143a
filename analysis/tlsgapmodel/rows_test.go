package tlsgapmodel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"pqrepro/analysis/stats"
	"pqrepro/analysis/tlshost"
	"pqrepro/analysis/tlsstudy"
	"pqrepro/datasets/tlsdata"
)

// hostMeta is a meta.json with every `openssl speed` figure the paper's
// four configurations need.
const hostMeta = `{"study": "tls", "measured": {"host_crypto": {
 "before": {"cpu_settings": "x", "ms_per_op": {"ecdh-p384": 0.9, "ecdh-x25519": 0.04, "mlkem1024-keygen": 0.03, "mlkem1024-encaps": 0.035, "mlkem1024-decaps": 0.045,
  "ed25519-sign": 0.02, "ed25519-verify": 0.05, "mldsa87-sign": 0.4, "mldsa87-verify": 0.1}},
 "implementations": {"P-384": "generic"}}}}`

func runMeta(t *testing.T, s string) tlsstudy.RunMeta {
	t.Helper()
	m, err := tlsstudy.ParseRunMeta("meta.json", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// emulatedSamples makes the samples tlsstudy.AnalyzeRun returns for
// emulated-path cells made by the model itself, Ths = c0 + k RTT + s CPU
// + noise: per one-way delay, group list, chain and paper configuration,
// perRound connections in each of rounds rounds.
func emulatedSamples(t *testing.T, delays []float64, rounds, perRound int, c0, s float64) []tlsstudy.EmulatedSample {
	t.Helper()
	rng := rand.New(rand.NewPCG(30, 1))
	msPerOp := tlshost.MsPerOp(runMeta(t, hostMeta).HostCrypto)
	var out []tlsstudy.EmulatedSample
	seq := 0
	for _, d := range delays {
		cell := tlsstudy.Cell{Stack: tlsdata.StackOpenSSLCLI, Path: tlsdata.EmulatedPath(d), KeyShare: tlsstudy.KeyShareDirect}
		rtt := 2*d + 0.1
		for _, groups := range []string{tlsdata.ClientGroupsPerConfig, tlsdata.ClientGroupsX25519First} {
			for _, chain := range []bool{false, true} {
				for _, paper := range tlsstudy.DefaultParams("quick").Paper {
					id, err := tlsdata.ParseConfigID(paper)
					if err != nil {
						t.Fatal(err)
					}
					id.Chain, id.Stack, id.Groups = chain, tlsdata.StackOpenSSLCLI, groups
					hrr, verifies, k := tlsdata.ExpectHRR(groups, id.Group), 0, int64(1)
					if hrr {
						k++
					}
					if chain {
						verifies = 1
						if id.CertKey == "mldsa87" {
							k++
						}
					}
					cpu, err := tlshost.ConfigCPUMs(msPerOp, id.CertKey, id.Group, hrr, verifies)
					if err != nil {
						t.Fatal(err)
					}
					sm := tlsstudy.EmulatedSample{Cell: cell, Config: id.ID(), ID: id}
					for round := range rounds {
						var block []float64
						for range perRound {
							seq++
							rt, rttNs := k, int64(rtt*1e6)
							ths := c0 + float64(k)*rtt + s*cpu + 0.05*rng.NormFloat64()
							at := func(ms float64) *int64 { v := int64(seq)*1e9 + int64(ms*1e6); return &v }
							rec := &tlsdata.Record{Seq: seq, HRR: hrr, RoundTrips: &rt, LinkRTTNs: &rttNs,
								SynNs: at(0), ClientHelloNs: at(rtt), ServerFlightEndNs: at(rtt + ths - rtt/2), ClientFinishedNs: at(rtt + ths)}
							if hrr {
								rec.ClientHello2Ns = at(2 * rtt)
							}
							sm.Records = append(sm.Records, rec)
							sm.Rounds = append(sm.Rounds, round)
							block = append(block, ths)
						}
						m, _ := stats.Median(block)
						sm.RoundThsMs = append(sm.RoundThsMs, m)
					}
					out = append(out, sm)
				}
			}
		}
	}
	return out
}

// TestAttach: the emulated-path cells' samples become the gap model's
// rows (median round trips, the link's RTT, CPU with 3 or 4 P-384
// operations), and the fit recovers the model that made them; the
// outputs then show values, not "not measured".
func TestAttach(t *testing.T) {
	p := tlsstudy.DefaultParams("quick")
	res := &tlsstudy.Results{}
	if err := Attach(res, emulatedSamples(t, []float64{0, 0.5, 1, 2}, 10, 2, 2.5, 1.1), p, runMeta(t, hostMeta)); err != nil {
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
	f, _, err := fit(res.GapModelRows)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.C0.Est-2.5) > 0.1 || math.Abs(f.S.Est-1.1) > 0.1 || !f.Pass {
		t.Errorf("fit c0 %v s %v pass %v, want 2.5, 1.1, pass", f.C0.Est, f.S.Est, f.Pass)
	}
	tab, err := modelsTable(res)
	if err != nil || strings.Contains(tab, notMeasured) {
		t.Errorf("table (err %v):\n%s", err, tab)
	}
	// The client's end gives every definition; the server's end none.
	if len(res.GapModelMissing) != 4 || res.GapModelMissing["syn-cfin@server"] != "the run captured the client's end only" {
		t.Errorf("missing definitions %v: want the server's end, for want of its capture", res.GapModelMissing)
	}
	for _, r := range res.GapModelRows {
		ours, syn := r.ThsByDefMs["ch-cfin@client"], r.ThsByDefMs["syn-cfin@client"]
		if r.SignMs != map[bool]float64{true: 0.4, false: 0.02}[r.Role == "pq-sig"] || math.Abs(syn-ours-r.RTTMs) > 0.01 {
			t.Errorf("row %s: sign %v ms, SYN-to-Finished %v against ours %v: want the leaf's sign time and one RTT more", r.Label(), r.SignMs, syn, ours)
		}
	}
	// A record without its SYN: the definition is missing, and the
	// reason names the cell.
	samples := emulatedSamples(t, []float64{0, 0.5, 1, 2}, 10, 2, 2.5, 1.1)
	samples[3].Records[0].SynNs = nil
	res = &tlsstudy.Results{}
	if err := Attach(res, samples, p, runMeta(t, hostMeta)); err != nil {
		t.Fatal(err)
	}
	if why := res.GapModelMissing["syn-cfin@client"]; !strings.Contains(why, "1 record(s) lack its times") || !strings.Contains(why, "at 0 ms one way") {
		t.Errorf("a record without its SYN: reason %q", why)
	}

	// Bad input: no host_crypto, or too few delay levels for the split.
	if err := Attach(&tlsstudy.Results{}, emulatedSamples(t, []float64{0, 1, 2}, 10, 2, 2.5, 1.1), p, tlsstudy.RunMeta{}); err == nil || !strings.Contains(err.Error(), "host_crypto") {
		t.Errorf("without host_crypto: %v", err)
	}
	if err := Attach(&tlsstudy.Results{}, emulatedSamples(t, []float64{0, 2}, 10, 2, 2.5, 1.1), p, runMeta(t, hostMeta)); err == nil || !strings.Contains(err.Error(), "at least 3") {
		t.Errorf("two levels: %v", err)
	}
	// Without emulated cells: no rows, the outputs say so.
	res = &tlsstudy.Results{}
	if err := Attach(res, nil, p, runMeta(t, hostMeta)); err != nil || res.GapModelRows != nil {
		t.Errorf("no emulated cells: rows %v, %v", res.GapModelRows, err)
	}
}
