package tlsstudy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/tlsdata"
	"pqrepro/internal/repro"
)

// tinyRecords makes complete measured records with the given Ths in ms
// per config, in config order, plus one warm-up per config that would
// break every statistic if it were counted.
func tinyRecords(ths map[string][]float64) []tlsdata.Record {
	var out []tlsdata.Record
	for _, id := range slices.Sorted(maps.Keys(ths)) {
		c, err := tlsdata.ParseConfigID(id)
		if err != nil {
			panic(err)
		}
		mk := func(ms float64, warm bool) tlsdata.Record {
			t := int64(1_000_000_000) * int64(len(out)+1)
			ns := int64(math.Round(ms * 1e6))
			return tlsdata.Record{
				Seq: len(out), Config: id, CertKey: c.CertKey, Group: c.Group, Chain: c.Chain, Warmup: warm,
				SynNs: ptr(t - 50_000), ClientHelloNs: ptr(t), ServerHelloNs: ptr(t + ns/2), ClientFinishedNs: ptr(t + ns),
				NegotiatedGroup: c.Group, HRR: c.HRR, PacketsC2S: 5, PacketsS2C: 6,
				FrameBytesC2S: 1000, FrameBytesS2C: 3000, TCPPayloadBytesC2S: 700, TCPPayloadBytesS2C: 2600,
				ThsNs: ptr(ns), Complete: true, InprocClientNs: ptr(ns + 100_000),
			}
		}
		out = append(out, mk(1000, true))
		for _, ms := range ths[id] {
			out = append(out, mk(ms, false))
		}
	}
	return out
}

// TestAnalyzeByHand checks the wiring against values worked out by hand:
// baseline {1,2,3} ms, ML-DSA-87 {4,5,6}: every pair favours the target,
// so Cliff's delta is 1, U of the baseline is 0, the exact two-sided
// Mann-Whitney p is 2/C(6,3) = 0.1, the median difference is 3 ms (+150 %)
// and the Hodges-Lehmann shift is the median of {1..5 with repeats} = 3.
func TestAnalyzeByHand(t *testing.T) {
	recs := tinyRecords(map[string][]float64{
		"ed25519/X25519":             {1, 2, 3},
		"mldsa87/X25519":             {4, 5, 6},
		"ed25519/MLKEM1024":          {1.5, 2.5, 3.5},
		"ed25519/SecP384r1MLKEM1024": {7, 8, 9},
		"mldsa44/X25519":             {0.5, 0.6, 0.7},
	})
	res, err := Analyze(recs, testParams(), Input{Path: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Input.Rows != len(recs) || res.Input.Warmups != 5 || res.Input.Measured != 15 {
		t.Errorf("input counts %+v", res.Input)
	}
	paper := res.Families["paper"]
	if !slices.Equal(paper.Configs, DefaultParams("").Paper) {
		t.Errorf("paper configs %v", paper.Configs)
	}
	c := paper.Comparisons[0]
	near := func(name string, got Num, want float64) {
		t.Helper()
		if math.Abs(float64(got)-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if c.Target != "mldsa87/X25519" || c.Role != "pq-sig" || c.Published == nil || c.Published.IncreaseMs != 4.651 {
		t.Errorf("first comparison %s role %s published %+v", c.Target, c.Role, c.Published)
	}
	near("median diff", c.MedianDiffMs, 3)
	near("median diff %", c.MedianDiffPct, 150)
	near("U baseline", c.MannWhitney.U, 0)
	near("U target", c.MannWhitney.UTarget, 9)
	near("p", c.MannWhitney.P, 0.1)
	near("delta", c.Cliff.Delta, 1)
	near("HL shift", c.HodgesLehmann.Shift, 3)
	if c.MannWhitney.Method != "exact" || c.Cliff.Magnitude != "large" {
		t.Errorf("method %s magnitude %s", c.MannWhitney.Method, c.Cliff.Magnitude)
	}
	// Holm over the paper's three p-values: 0.1 (sig), 0.7 (kem: U=3 of 9,
	// p = 2 P(U<=3) = 0.7), 0.1 (hybrid) -> 0.3, 0.7, 0.3.
	for i, want := range []float64{0.3, 0.7, 0.3} {
		near(fmt.Sprintf("holm[%d]", i), paper.Comparisons[i].PHolm, want)
		near(fmt.Sprintf("bonferroni[%d]", i), paper.Comparisons[i].PBonferroni, min(1, 3*float64(paper.Comparisons[i].MannWhitney.P)))
	}
	// The matrix family holds every configuration, baseline first, and a
	// faster target has a negative delta.
	m := res.Families["matrix"]
	if m.Configs[0] != "ed25519/X25519" || len(m.Comparisons) != 4 {
		t.Fatalf("matrix %v", m.Configs)
	}
	for _, c := range m.Comparisons {
		if c.Target == "mldsa44/X25519" {
			near("faster delta", c.Cliff.Delta, -1)
			near("faster diff", c.MedianDiffMs, 0.6-2)
			if c.Role != "" || c.Published != nil {
				t.Errorf("matrix-only target has role %q", c.Role)
			}
		}
	}
	base := res.config("ed25519/X25519")
	near("baseline median", base.ThsMs.Median, 2)
	near("baseline sd", base.ThsMs.SD, 1)
	near("agreement", base.Agreement.Ths.MedianDiffMs, 0.1)
	near("agreement syn", base.Agreement.SynToFinished.MedianDiffMs, 0.05)
	near("frame total", base.Bytes.Frame.Total, 4000)
	if len(base.ECDFMs) != 101 || base.ECDFMs[0] != 1 || base.ECDFMs[50] != 2 || base.ECDFMs[100] != 3 {
		t.Errorf("ECDF %v", base.ECDFMs)
	}
	// Table order: cert key, then group.
	var order []string
	for _, c := range res.Configs {
		order = append(order, c.Config)
	}
	want := []string{"ed25519/X25519", "ed25519/MLKEM1024", "ed25519/SecP384r1MLKEM1024", "mldsa44/X25519", "mldsa87/X25519"}
	if !slices.Equal(order, want) {
		t.Errorf("config order %v, want %v", order, want)
	}
}

// Results are written with every object's keys in order, and read back.
func TestResultsCanonicalJSON(t *testing.T) {
	res, err := Analyze(paperSpec.records(), testParams(), Input{Path: "p", SHA256: repro.HashBytes(nil)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := MarshalResults(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSortedKeys(b); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeResults("tls.json", b)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := MarshalResults(back)
	if !bytes.Equal(again, b) {
		t.Fatal("results do not survive a read and write unchanged")
	}
	if _, err := DecodeResults("tls.json", bytes.Replace(b, []byte(`"schema": 1`), []byte(`"schema": 2`), 1)); err == nil ||
		!strings.Contains(err.Error(), "schema 2, want 1") {
		t.Errorf("wrong schema: %v", err)
	}
}

func TestNumJSON(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{math.NaN(), "null"}, {math.Inf(1), "null"}, {3.2956866000000002, "3.2956866"},
		{0.1 + 0.2, "0.3"}, {1.5e-65, "1.5e-65"}, {4000, "4000"}, {-0.12345678901234, "-0.123456789012"},
	} {
		b, err := json.Marshal(Num(c.in))
		if err != nil || string(b) != c.want {
			t.Errorf("Num(%v) = %s, %v; want %s", c.in, b, err, c.want)
		}
	}
	var n Num
	if err := json.Unmarshal([]byte("null"), &n); err != nil || !math.IsNaN(float64(n)) {
		t.Errorf("null -> %v, %v", n, err)
	}
}

func TestPValueFormat(t *testing.T) {
	for _, c := range []struct {
		p          float64
		cell, text string
	}{
		{0.5, `\ensuremath{0.500}`, "$p = 0.500$"},
		{0.001, `\ensuremath{0.001}`, "$p = 0.001$"},
		{0.00049, `\ensuremath{4.9\times10^{-4}}`, `$p = 4.9\times10^{-4}$`},
		{2.5e-6, `\ensuremath{2.5\times10^{-6}}`, `$p = 2.5\times10^{-6}$`},
		{1.53e-65, `\ensuremath{<10^{-6}}`, `$p <10^{-6}$`}, // stats.PFloor
		{0, `\ensuremath{<10^{-6}}`, `$p <10^{-6}$`},
		{math.NaN(), "---", `$p = \text{---}$`},
	} {
		if got := pValue(c.p); got != c.cell {
			t.Errorf("pValue(%v) = %q, want %q", c.p, got, c.cell)
		}
		if got := pIs(c.p); got != c.text {
			t.Errorf("pIs(%v) = %q, want %q", c.p, got, c.text)
		}
	}
}

func TestParamsValidate(t *testing.T) {
	ok := DefaultParams("full")
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(*Params){
		"profile is empty":                 func(p *Params) { p.Profile = "" },
		"paper[0] (the paper's baseline)":  func(p *Params) { p.Baseline = "ecdsa-p256/X25519" },
		"paper lists ed25519/X25519 twice": func(p *Params) { p.Paper[3] = "ed25519/X25519" },
		"paper hybrid: config":             func(p *Params) { p.Paper[3] = "ed25519/P384" },
		"bootstrap resamples -1":           func(p *Params) { p.BootstrapResamples = -1 },
	}
	for want, mut := range cases {
		p := DefaultParams("full")
		p.Paper = slices.Clone(p.Paper)
		mut(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
	// Stage parameters carry every field and come back unchanged.
	p := DefaultParams("quick")
	p.BootstrapResamples = 500
	sp := p.stageParams()
	back, err := paramsFrom(func(k string) string { return sp[k] })
	if err != nil || !slices.Equal(back.Paper, p.Paper) || back.BootstrapSeed != p.BootstrapSeed || back.BootstrapResamples != 500 || back.Profile != "quick" {
		t.Errorf("params round trip: %+v, %v", back, err)
	}
}

func BenchmarkAnalyzeMatrix(b *testing.B) {
	recs := matrixSpec.records()
	p := DefaultParams("quick")
	for b.Loop() {
		if _, err := Analyze(recs, p, Input{Path: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

// checkSortedKeys walks the JSON tokens and checks that every object's
// keys are in ascending order.
func checkSortedKeys(b []byte) error {
	type frame struct {
		object, wantKey bool
		keys            []string
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			if len(stack) != 0 {
				return fmt.Errorf("truncated JSON: %v", err)
			}
			return nil
		}
		top := (*frame)(nil)
		if n := len(stack); n > 0 {
			top = stack[n-1]
		}
		if top != nil && top.object && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				if !slices.IsSorted(top.keys) {
					return fmt.Errorf("keys not sorted: %v", top.keys)
				}
				stack = stack[:len(stack)-1]
				valueDone()
				continue
			}
			top.keys = append(top.keys, tok.(string))
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

func TestCheckSortedKeys(t *testing.T) {
	if err := checkSortedKeys([]byte(`{"a":{"x":1,"y":[{"b":"z","c":2}]},"b":"a"}`)); err != nil {
		t.Error(err)
	}
	if err := checkSortedKeys([]byte(`{"a":[{"c":1,"b":2}]}`)); err == nil {
		t.Error("unsorted keys not found")
	}
}

// FuzzResults: whatever DecodeResults accepts, the table renderer
// handles without panicking (an error is fine). The figures are left to
// TestFiguresOddResults: rendering a plot per input makes coverage-guided
// fuzzing crawl.
func FuzzResults(f *testing.F) {
	res, err := Analyze(tinyRecords(map[string][]float64{
		"ed25519/X25519": {1, 2, 3}, "mldsa87/X25519": {4, 5, 6},
		"ed25519/MLKEM1024": {1.5, 2.5, 3.5}, "ed25519/SecP384r1MLKEM1024": {7, 8, 9},
	}), testParams(), Input{Path: "tiny"})
	if err != nil {
		f.Fatal(err)
	}
	b, err := MarshalResults(res)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(bytes.Replace(b, []byte(`"median": 2`), []byte(`"median": null`), 1))
	f.Add(bytes.Replace(b, []byte(`"role": "hybrid"`), []byte(`"role": "x"`), 1))
	f.Add([]byte(`{"schema":1}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := DecodeResults("fuzz.json", in)
		if err != nil {
			return
		}
		_, _ = Tables(r)
	})
}

// TestFiguresOddResults: results that read back but carry odd values
// (null, zero, negative, huge) give an error or a figure, never a panic
// or an endless tick loop.
func TestFiguresOddResults(t *testing.T) {
	res, err := Analyze(tinyRecords(map[string][]float64{
		"ed25519/X25519": {1, 2, 3}, "mldsa87/X25519": {4, 5, 6},
		"ed25519/MLKEM1024": {1.5, 2.5, 3.5}, "ed25519/SecP384r1MLKEM1024": {7, 8, 9},
	}), testParams(), Input{Path: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{math.NaN(), 0, -1, 1e-300, 1e300, math.MaxFloat64} {
		for field := range 4 {
			r := *res
			r.Configs = slices.Clone(res.Configs)
			c := &r.Configs[1]
			c.ECDFMs = slices.Clone(c.ECDFMs)
			switch field {
			case 0:
				c.ThsMs.Median = Num(v)
			case 1:
				c.ECDFMs[95] = Num(v)
			case 2:
				c.Bytes.Frame.S2C = Num(v)
			case 3:
				r.Configs[0].ThsMs.Median = Num(v)
			}
			b, err := MarshalResults(&r)
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeResults("odd.json", b)
			if err != nil {
				continue
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = Figures(back, time.Unix(0, 0))
				_, _ = Tables(back)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("rendering with value %v in field %d does not finish", v, field)
			}
		}
	}
}

// TestAnalyzeOneRound: a dataset with a single round (each configuration
// one block) has estimates but no round-level interval or test, and the
// tables say "---" with the reason.
func TestAnalyzeOneRound(t *testing.T) {
	recs := tinyRecords(map[string][]float64{
		"ed25519/X25519":             {1, 2, 3},
		"mldsa87/X25519":             {4, 5, 6},
		"ed25519/MLKEM1024":          {1.5, 2.5, 3.5},
		"ed25519/SecP384r1MLKEM1024": {7, 8, 9},
	})
	res, err := Analyze(recs, DefaultParams("quick"), Input{Path: "p", SHA256: repro.HashBytes(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Families["paper"].Comparisons {
		if c.Rounds.NEff != 1 || !math.IsNaN(float64(c.PHolm)) || !math.IsNaN(float64(c.Rounds.Lower)) || !strings.Contains(c.Rounds.Note, "need at least 6") {
			t.Errorf("%s: %+v, p_holm %v", c.Target, c.Rounds, c.PHolm)
		}
	}
	if c := res.Families["paper"].Comparisons[0]; float64(c.Rounds.IncreaseMs) != 3 {
		t.Errorf("one round: increase %v, want the difference of the block medians, 3", c.Rounds.IncreaseMs)
	}
	files, err := Tables(res)
	if err != nil {
		t.Fatal(err)
	}
	paper := string(files[TablePaper])
	for _, want := range []string{"``---'': ", "1 paired round(s): the interval and the signed-rank test need at least 6"} {
		if !strings.Contains(paper, want) {
			t.Errorf("paper table lacks %q:\n%s", want, paper)
		}
	}
	if _, err := figureList(res, nil); err != nil {
		t.Fatalf("figures of a one-round run: %v", err)
	}
	b, err := MarshalResults(res)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeResults("tls.json", b); err != nil {
		t.Fatalf("the results of a one-round run do not read back: %v", err)
	}
}
