package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"pqrepro/analysis/stats"
)

func TestCompareKruskalOnlyWithThreeSamples(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    [][]float64
		kruskal bool
	}{
		{"two samples", [][]float64{{1, 2, 3}, {4, 5, 6}}, false},
		{"three samples", [][]float64{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := []string{"a", "b", "c"}[:len(tc.data)]
			doc, _, err := Compare(RunSteps, names, tc.data, nil)
			if err != nil {
				t.Fatal(err)
			}
			if (doc.Kruskal != nil) != tc.kruskal {
				t.Fatalf("kruskal = %+v, want present %v", doc.Kruskal, tc.kruskal)
			}
			if len(doc.Pairs) != len(tc.data)-1 || doc.Pairs[0].A != "a" || doc.Pairs[0].B != "b" {
				t.Fatalf("pairs = %+v", doc.Pairs)
			}
			if got := float64(doc.Pairs[0].MedianDiff); got != 3 {
				t.Fatalf("median diff = %v, want 3", got)
			}
		})
	}
}

// TestCompareUndefinedValuesAreNull: one value in A leaves its sd and
// Cliff's interval undefined; all values equal over three samples leave
// Kruskal-Wallis H undefined. They encode as null.
func TestCompareUndefinedValuesAreNull(t *testing.T) {
	doc, _, err := Compare(RunSteps, []string{"a", "b", "c"}, [][]float64{{5}, {5, 5}, {5, 5, 5}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var dec struct {
		Samples []struct {
			SD *float64 `json:"sd"`
		} `json:"samples"`
		Pairs []struct {
			P  *float64    `json:"p"`
			CI [2]*float64 `json:"cliffs_delta_ci"`
		} `json:"pairs"`
		Kruskal *struct {
			H *float64 `json:"h"`
		} `json:"kruskal"`
	}
	if err := json.Unmarshal(b, &dec); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if dec.Samples[0].SD != nil || dec.Pairs[0].CI[0] != nil || dec.Kruskal == nil || dec.Kruskal.H != nil {
		t.Fatalf("want nulls:\n%s", b)
	}
	if *dec.Pairs[0].P != 1 {
		t.Fatalf("p = %v, want 1 for all-equal samples", *dec.Pairs[0].P)
	}
}

// TestCompareBootstrapMethods: the table's interval is the one
// stats.BootstrapMedianDiff gives for the method chosen, on the samples in
// the order given (the values method draws by index).
func TestCompareBootstrapMethods(t *testing.T) {
	x := []float64{4.1, 3.2, 5.9, 3.3, 4.8, 3.9, 6.2, 3.1, 4.4}
	y := []float64{5.2, 4.9, 7.1, 4.2, 6.6, 5.5, 4.7, 6.0}
	for _, m := range []stats.BootstrapMethod{stats.ResampleOrderStats, stats.ResampleValues} {
		cfg := stats.BootstrapConfig{Seed: 5, Resamples: 400, Level: 0.95, Method: m}
		want, err := stats.BootstrapMedianDiff(x, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		doc, det, err := Compare(RunSteps, []string{"a", "b"}, [][]float64{x, y}, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		WriteTable(&out, doc, det)
		line := fmt.Sprintf("bootstrap CI [%s, %s] (400 resamples, %s, seed 5)", FormatNum(Num(want.Lower)), FormatNum(Num(want.Upper)), m)
		if !strings.Contains(out.String(), line) {
			t.Errorf("%s: table lacks %q:\n%s", m, line, out.String())
		}
	}
}

func TestCompareBadInput(t *testing.T) {
	if _, _, err := Compare(RunSteps, []string{"a", "b"}, [][]float64{{}, {1}}, nil); err == nil {
		t.Fatal("empty sample: no error")
	}
}

// TestCompareStopsAtRunError: Compare returns the error of its run
// function, so a reporter that stops (an interruption) stops it.
func TestCompareStopsAtRunError(t *testing.T) {
	stop := errors.New("stop")
	var names []string
	_, _, err := Compare(func(steps []Step) error {
		for _, s := range steps {
			names = append(names, s.Name)
			if s.Cost <= 0 || s.Run == nil {
				t.Errorf("step %q: cost %v", s.Name, s.Cost)
			}
		}
		return stop
	}, []string{"a", "b"}, [][]float64{{1, 2}, {3, 4}}, nil)
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want %v", err, stop)
	}
	if len(names) != 5 || names[0] != "describe a" || names[2] != "Mann-Whitney b vs a" {
		t.Fatalf("steps = %q", names)
	}
}

func TestNumJSON(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{1.5, "1.5"}, {0.1, "0.1"}, {math.NaN(), "null"}, {math.Inf(1), "null"}, {math.Inf(-1), "null"}} {
		b, err := json.Marshal(Num(tc.v))
		if err != nil || string(b) != tc.want {
			t.Errorf("Num(%v) = %s, %v; want %s", tc.v, b, err, tc.want)
		}
		if tc.want == "null" && FormatNum(Num(tc.v)) != "-" {
			t.Errorf("FormatNum(%v) = %q, want -", tc.v, FormatNum(Num(tc.v)))
		}
	}
}

func ExampleCompare() {
	doc, _, err := Compare(RunSteps, []string{"x25519", "hybrid"}, [][]float64{{1.0, 1.1, 1.2, 0.9}, {1.4, 1.5, 1.6, 1.3}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := doc.Pairs[0]
	fmt.Printf("%s vs %s: median diff %s, Cliff's delta %s (%s)\n", p.B, p.A, FormatNum(p.MedianDiff), FormatNum(p.CliffsDelta), p.CliffsMagnitude)
	// Output: hybrid vs x25519: median diff 0.4, Cliff's delta 1 (large)
}

// RunSteps runs steps in order and stops at the first error: Compare's
// run without progress reports.
func RunSteps(steps []Step) error {
	for _, s := range steps {
		if err := s.Run(); err != nil {
			return err
		}
	}
	return nil
}
