package tlsstudy

import (
	"cmp"
	"math/rand/v2"
	"strings"
	"testing"

	"pqrepro/datasets/tlsdata"
)

// withEmulated appends to base (a run's records) emulated-path records,
// Ths = 2.5 ms + k RTT + noise with k round trips, over the given one-way
// delays, two group lists and both chains, one block of perRound
// connections (after a warm-up) per configuration and round.
func withEmulated(base []tlsdata.Record, delays []float64, rounds, perRound int) []tlsdata.Record {
	rng := rand.New(rand.NewPCG(30, 1))
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
						rtt := 2*d + 0.1
						for j := 0; j <= perRound; j++ {
							seq++
							ths := 2.5 + float64(k)*rtt + 0.05*rng.NormFloat64()
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

// TestAnalyzeRunEmulated: a run's emulated-path cells leave the
// comparisons and come back from AnalyzeRun as samples, one per cell and
// configuration, sorted, with every round's median Ths; without them
// there are none.
func TestAnalyzeRunEmulated(t *testing.T) {
	recs := withEmulated(paperSpec.records(), []float64{0, 0.5, 1, 2}, 10, 2)
	res, em, err := AnalyzeRun(recs, testParams(), Input{Path: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Gap.Cells {
		if strings.HasPrefix(c.Cell.Path, tlsdata.EmulatedPathPrefix) {
			t.Errorf("emulated cell %s in the gap analysis", c.Cell)
		}
	}
	if len(em) != 4*2*2*4 {
		t.Fatalf("%d samples, want 64", len(em))
	}
	for i, s := range em {
		if _, ok := tlsdata.ParseEmulatedPath(s.Cell.Path); !ok || s.ID.ID() != s.Config || len(s.Records) != 20 || len(s.RoundThsMs) != 10 {
			t.Errorf("sample %s on %s: %d records, %d rounds", s.Config, s.Cell, len(s.Records), len(s.RoundThsMs))
		}
		if i > 0 && cmp.Or(cmp.Compare(em[i-1].Cell.String(), s.Cell.String()), cmp.Compare(em[i-1].Config, s.Config)) >= 0 {
			t.Errorf("samples %d and %d out of order", i-1, i)
		}
	}
	// The per-config cells, one per delay and chain, are compared as the
	// primary cell is, and the curve counts them as alternatives.
	if len(res.Gap.Emulated) != 4*2 {
		t.Fatalf("%d emulated per-config families, want 8", len(res.Gap.Emulated))
	}
	for _, e := range res.Gap.Emulated {
		if !e.complete() || len(e.Comparisons) != 3 || e.Groups != tlsdata.ClientGroupsPerConfig {
			t.Fatalf("%s: missing %v, %d comparisons", e.Name(), e.Missing, len(e.Comparisons))
		}
		d, _ := tlsdata.ParseEmulatedPath(e.Cell.Path)
		sig := e.role("pq-sig")
		want := 0.0
		if e.Chain == "leaf+ca" {
			want = 2*d + 0.1 // the stall's round trip
		}
		if got := float64(sig.Rounds.IncreaseMs); got < want-0.1 || got > want+0.1 {
			t.Errorf("%s: ML-DSA-87's increase %v ms, want about %v", e.Name(), got, want)
		}
	}
	alts, err := CellAlternatives(res)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range alts {
		if strings.Contains(a.Name, tlsdata.ClientGroupsPerConfig) && a.Results != nil {
			n++
		}
	}
	if n != 8 {
		t.Errorf("%d emulated alternatives with results, want 8", n)
	}
	if _, em, err := AnalyzeRun(paperSpec.records(), testParams(), Input{Path: "synthetic"}); err != nil || em != nil {
		t.Errorf("no emulated cells: %d samples, %v", len(em), err)
	}
}
