package render

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// MinTicks is the fewest labelled ticks a numeric axis may have: with
// fewer a reader cannot interpolate a value (the layout tests enforce
// it).
const MinTicks = 4

// LinearTicks labels a linear axis with at least MinTicks labels at round
// steps.
//
// It labels it at multiples of the largest step of 1, 2 or 5 times a power
// of ten that still gives MinTicks labels inside [lo, hi] (so 4 to about 10
// labels), with an unlabelled tick halfway between labels. Labels use
// Thousands (1,000).
type LinearTicks struct{}

// Ticks implements plot.Ticker.
func (LinearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) || (hi-lo) < 1e-12*max(math.Abs(lo), math.Abs(hi)) {
		return nil // empty, not finite, or too narrow to step through
	}
	e := int(math.Ceil(math.Log10(hi - lo)))
	step := 0.0
	for k := e; k > e-3 && step == 0; k-- {
		for _, m := range []string{"5", "2", "1"} {
			s, _ := strconv.ParseFloat(fmt.Sprintf("%se%d", m, k), 64)
			if math.Floor(hi/s)-math.Ceil(lo/s)+1 >= MinTicks {
				step = s
				break
			}
		}
	}
	if step == 0 {
		return nil
	}
	var ts []plot.Tick
	for i := math.Ceil(lo / step * 2); i/2*step <= hi*(1+1e-12); i++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(i/2*step, 'g', 12, 64), 64)
		if v == 0 {
			v = 0 // not -0, which would be labelled "-0"
		}
		t := plot.Tick{Value: v}
		if math.Mod(i, 2) == 0 {
			t.Label = Thousands(v)
		}
		ts = append(ts, t)
	}
	return ts
}

// LogTicks labels a log axis so that every range from a decade up gets at
// least MinTicks labels.
//
// It labels every integer times each power of ten when the axis spans less
// than a decade, 1, 2, 3 and 5 times when less than 1.5 decades, 1, 2 and 5
// when less than 3.5, and the powers of ten otherwise, with unlabelled ticks
// at the other integer multiples.
type LogTicks struct {
	// Coarse labels only the powers of ten from a span of 3 decades on
	// (not 1, 2 and 5 up to 3.5), for a narrow axis whose labels would
	// otherwise touch.
	Coarse bool
}

// Ticks implements plot.Ticker.
func (lt LogTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi >= lo && hi/lo < 1e30) { // also false for NaN and Inf
		return nil
	}
	labelled := map[int]bool{1: true}
	switch span := math.Log10(hi / lo); {
	case span < 1:
		for m := 2; m <= 9; m++ {
			labelled[m] = true
		}
	case span < 1.5:
		labelled[2], labelled[3], labelled[5] = true, true, true
	case span < 3.5 && !(lt.Coarse && span >= 3):
		labelled[2], labelled[5] = true, true
	}
	var ts []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); math.Pow(10, float64(e)) <= hi; e++ {
		for m := 1; m <= 9; m++ {
			// Parsing "me" gives the double nearest to m*10^e, so 0.3 is 0.3.
			v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, e), 64)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled[m] {
				t.Label = Thousands(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}
