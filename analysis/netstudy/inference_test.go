package netstudy

import (
	"math"
	"strings"
	"testing"

	"pqrepro/datasets/netdata"
)

func analyzeSynth(t *testing.T, d Design, edit func([]Row)) (*Results, error) {
	t.Helper()
	rows := readRows(t, netdata.ColumnsV1, synthRows(d))
	if edit != nil {
		edit(rows)
	}
	return Analyze(&d, rows, Params{}, "data/net/x", "x", "synth")
}

// A series too short for the block length rule, or constant, gets no
// interval: a null and a note, rendered "---" with the reason, never a
// silent interval; the rest of the analysis goes on.
func TestInferenceBadSeries(t *testing.T) {
	d := synthDesign()
	d.Rounds = []int{8, 40}
	res, err := analyzeSynth(t, d, func(rows []Row) {
		for i := range rows {
			if rows[i].Scenario == "wan" && rows[i].Round == 40 && rows[i].Group == "X25519" {
				rows[i].ThsMs = 31.5
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Comparisons {
		bad := c.Round == 8 || (c.Scenario == "wan" && c.Round == 40)
		hasCI := !math.IsNaN(float64(c.DiffLowerMs)) && !math.IsNaN(float64(c.DiffUpperMs))
		switch {
		case bad && (hasCI || c.Note == "" || !math.IsNaN(float64(c.P)) || c.Significant):
			t.Errorf("%s/%d: interval [%v, %v], p %v, note %q; want none, with a reason", c.Scenario, c.Round, c.DiffLowerMs, c.DiffUpperMs, c.P, c.Note)
		case !bad && (!hasCI || c.Note != "" || !(c.DiffLowerMs <= c.DiffMs && c.DiffMs <= c.DiffUpperMs)):
			t.Errorf("%s/%d: interval [%v, %v] around %v, note %q", c.Scenario, c.Round, c.DiffLowerMs, c.DiffUpperMs, c.DiffMs, c.Note)
		}
		if c.Round == 8 && !strings.Contains(c.Note, "too few") {
			t.Errorf("%s/8: note %q does not say the series is too short", c.Scenario, c.Note)
		}
		if c.Scenario == "wan" && c.Round == 40 && !strings.Contains(c.Note, "identical") {
			t.Errorf("wan/40: note %q does not say the values are all equal", c.Note)
		}
	}
	files, err := Tables(res)
	if err != nil {
		t.Fatal(err)
	}
	if tab := files[TableComparison]; !strings.Contains(tab, "[---]") || !strings.Contains(tab, "no block bootstrap interval") {
		t.Errorf("comparison table does not show the missing intervals with their reason:\n%s", tab)
	}
	// Scenarios whose rounds lack a standard error still get the t
	// interval over the rounds' differences; Q needs every SE.
	for _, e := range res.Scenarios {
		if e.K != 2 || math.IsNaN(float64(e.LowerMs)) || !math.IsNaN(float64(e.Q)) {
			t.Errorf("%s: k %d, interval [%v, %v], Q %v", e.Scenario, e.K, e.LowerMs, e.UpperMs, e.Q)
		}
	}
}

// One round: a scenario has a single series, so no between-series
// variance and no scenario interval, with the reason.
func TestInferenceSingleSeries(t *testing.T) {
	d := synthDesign()
	d.Rounds = []int{40}
	res, err := analyzeSynth(t, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Scenarios {
		if e.K != 1 || !math.IsNaN(float64(e.LowerMs)) || !strings.Contains(e.Note, "1 series") {
			t.Errorf("%s: %+v, want no interval and a note", e.Scenario, e)
		}
	}
	files, err := Tables(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(files[TableComparison], "1 series: no between-series variance") {
		t.Error("scenario table does not say why there is no interval")
	}
	if !strings.Contains(files[NumbersFile], `\newcommand{\NetScenarioTQuantile}{---}`) {
		t.Error("t quantile macro with one series is not a dash")
	}
}

// NaN or infinite times are refused with an error naming the series.
func TestInferenceNonFinite(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		_, err := analyzeSynth(t, synthDesign(), func(rows []Row) { rows[3].ThsMs = v })
		if err == nil || !strings.Contains(err.Error(), "NaN or Inf") || !strings.Contains(err.Error(), "scenario lan") {
			t.Errorf("ths %v: error %v", v, err)
		}
	}
}

// The scenario interval is the t interval over the rounds' differences,
// and the block interval is the same in the comparisons without the
// flagged handshakes when none is flagged (same series, same stream).
func TestScenarioEffectsAndStreams(t *testing.T) {
	res, err := analyzeSynth(t, synthDesign(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Scenarios {
		var ds []float64
		for _, c := range res.Comparisons {
			if c.Scenario == e.Scenario {
				ds = append(ds, float64(c.DiffMs))
			}
		}
		m := (ds[0] + ds[1]) / 2
		sd := math.Abs(ds[0]-ds[1]) / math.Sqrt2
		half := 12.706204736174698 * sd / math.Sqrt2 // t_{0.975, 1}
		if math.Abs(float64(e.MeanMs)-m) > 1e-9 || math.Abs(float64(e.LowerMs)-(m-half)) > 1e-6 {
			t.Errorf("%s: mean %v lower %v, want %v, %v", e.Scenario, e.MeanMs, e.LowerMs, m, m-half)
		}
	}
	var none hygieneInput
	h, err := hygiene(res, &res.Design, readRows(t, netdata.ColumnsV1, synthRows(synthDesign())), none, Params{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range h.WithoutFlagged.Comparisons {
		if a := res.Comparisons[i]; c.DiffLowerMs != a.DiffLowerMs || c.DiffUpperMs != a.DiffUpperMs {
			t.Errorf("%s/%d: without flagged (none flagged) [%v, %v], all [%v, %v]", c.Scenario, c.Round, c.DiffLowerMs, c.DiffUpperMs, a.DiffLowerMs, a.DiffUpperMs)
		}
	}
}
