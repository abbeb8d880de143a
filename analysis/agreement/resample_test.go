package agreement

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// sharedShock is a study of n estimate items that move together: one
// pseudo-run adds the same shock (sd shock) to every item, on top of its
// own noise at its standard error. The parametric draw cannot see the
// shock; a resampler of the run's data would.
func sharedShock(n int, se, shock float64) (Study, Resampler) {
	var items []Item
	for i := range n {
		items = append(items, Item{Name: "t" + itoa(i), Kind: Estimate, Class: HostDependent, Ref: V(10, se)})
	}
	items = append(items, Item{Name: "bytes", Kind: Exact, Ref: V(1000, 0)})
	s := Study{Name: "s", Items: items, RefProfile: "quick", NewProfile: "quick"}
	r := func(rng *rand.Rand) []Value {
		z := shock * rng.NormFloat64()
		out := make([]Value, len(items))
		for i, it := range items {
			out[i] = it.Ref
			if it.Kind == Estimate {
				out[i].Est += z + se*rng.NormFloat64()
			}
		}
		return out
	}
	return s, r
}

// TestResampled: the pairs are two resamples (exact items unchanged),
// the same seed gives the same figures, a run-wide shock that no
// standard error reflects raises the resampled false-alarm rate far
// above the parametric one, without the shock both stay low, and a
// resampler that gives the wrong number of values is refused.
func TestResampled(t *testing.T) {
	for _, tc := range []struct {
		name        string
		shock       float64
		resampledHi bool
	}{
		{"no shock", 0, false},
		{"a shock 5 standard errors wide", 0.5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, r := sharedShock(30, 0.1, tc.shock)
			d, err := Resampled(s, r)
			if err != nil {
				t.Fatal(err)
			}
			p := d(rand.New(rand.NewPCG(1, 2)))
			if last := p.Items[len(p.Items)-1]; last.Ref.Est != 1000 || last.New.Est != 1000 {
				t.Errorf("the exact item moved: %+v", last)
			}
			if p.Items[0].Ref.Est == p.Items[0].New.Est || !p.HostsMatch || p.NewProfile != p.RefProfile {
				t.Errorf("not a pair of two resamples on one host: %+v", p.Items[0])
			}
			ctx := context.Background()
			res, _ := CalibrateDraws(ctx, DefaultRule, []Draw{d}, 100, 3, nil, 0)
			if again, _ := CalibrateDraws(ctx, DefaultRule, []Draw{d}, 100, 3, nil, 0); res != again {
				t.Error("the same seed and K gave different rates")
			}
			par, _ := CalibrateDraws(ctx, DefaultRule, []Draw{Parametric(s)}, 100, 3, nil, 0)
			if par.Rate > 0.15 {
				t.Errorf("parametric false-alarm rate %s", par)
			}
			if hi := res.Rate > 0.5; hi != tc.resampledHi {
				t.Errorf("resampled false-alarm rate %s (parametric %s), want high: %v", res, par, tc.resampledHi)
			}
		})
	}
	s, _ := sharedShock(3, 0.1, 0)
	short := func(*rand.Rand) []Value { return []Value{V(1, 1)} }
	if _, err := Resampled(s, short); err == nil || !strings.Contains(err.Error(), "1 values for 4 items") {
		t.Errorf("a resampler of the wrong length: %v", err)
	}
}

// TestDrawNormal: a value with a positive standard error moves, keeping
// its standard error; one without, an absent one and a null one do not.
func TestDrawNormal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		v     Value
		moves bool
	}{
		{V(1, 1), true}, {V(1, 0), false}, {V(1, math.NaN()), false}, {V(math.NaN(), 1), false}, {Absent, false},
	} {
		got := DrawNormal(rng, tc.v)
		moved := got.Est != tc.v.Est && !math.IsNaN(got.Est)
		if moved != tc.moves || got.Absent != tc.v.Absent || (tc.moves && got.SE != tc.v.SE) {
			t.Errorf("%+v drawn as %+v: want moved %v", tc.v, got, tc.moves)
		}
	}
}

// TestCalibrateDrawsStops: a calibration whose context ends (its
// launcher stopped: SIGTERM from timeout, a killed go run) returns the
// cause after the pseudo-replicate it was drawing, instead of computing
// all K; SmallestDetectedDraws passes the stop on.
func TestCalibrateDrawsStops(t *testing.T) {
	s := Study{Name: "s", Items: []Item{{Name: "t", Kind: Estimate, Class: HostDependent, Ref: V(10, 1), New: V(10, 1)}}, RefProfile: "quick", NewProfile: "quick", HostsMatch: true}
	stop := errors.New("launcher gone")
	ctx, cancel := context.WithCancelCause(context.Background())
	drawn := 0
	draw := func(rng *rand.Rand) Study {
		drawn++
		if drawn == 3 {
			cancel(stop)
		}
		return Parametric(s)(rng)
	}
	c, err := CalibrateDraws(ctx, DefaultRule, []Draw{draw}, 1_000_000, 1, nil, 0)
	if !errors.Is(err, stop) || drawn != 3 || c.K != 0 {
		t.Errorf("after a cancel at draw 3: %d draws, %+v, %v", drawn, c, err)
	}
	size, _, err := SmallestDetectedDraws(ctx, DefaultRule, []Draw{Parametric(s)}, 10, 1, Change{Name: "x", Apply: func(string, []Item, float64) bool { return true }})
	if !errors.Is(err, stop) || !math.IsNaN(size) {
		t.Errorf("SmallestDetectedDraws on an ended context: %v, %v", size, err)
	}
}
