package picostudy

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"pqrepro/analysis/stats"
	"pqrepro/datasets/picodata"
)

// DefaultBoard is the board of an image whose image.json names none. Runs
// made before boards were recorded ran on one board, the emulator or a
// single Pico.
func DefaultBoard(emulated bool) string {
	if emulated {
		return "rp2040js"
	}
	return "pico"
}

// BoardTest names the between-board test of BoardFactor.
const BoardTest = "Kruskal-Wallis H (tie-corrected, chi-squared p) across boards per scheme and operation, " +
	"epsilon-squared = H/(N-1), p Holm-adjusted across the operations tested"

// BoardFactor is the board as a factor. That is, which board ran which
// image, and, for every operation measured on two or more boards (a
// replicated run, experiments/pico.toml [board] replicate = true),
// whether its time differs between boards.
type BoardFactor struct {
	// Boards maps each board ID to the run folders it wrote.
	Boards map[string][]string `json:"boards"`
	Test   string              `json:"test"`
	// Ops are the operations measured on at least two boards, by scheme
	// and operation; empty when every image ran on one board (a spread
	// run), and then Note says so.
	Ops  []BoardOp `json:"ops"`
	Note string    `json:"note,omitempty"`
}

// BoardOp is one operation's between-board comparison.
type BoardOp struct {
	Scheme string   `json:"scheme"`
	Op     string   `json:"op"`
	Boards []string `json:"boards"` // sorted; the slices below follow it
	N      []int    `json:"n"`
	// MedianMs is the median time per board.
	MedianMs []float64 `json:"median_ms"`
	// Identical is true when every board gave the same multiset of times
	// (the deterministic emulator does): H = 0, p = 1.
	Identical bool    `json:"identical"`
	H         float64 `json:"h"`
	DF        int     `json:"df" range:"0,"`
	P         float64 `json:"p" range:"0,1"`
	PHolm     float64 `json:"p_holm" range:"0,1"`
	Epsilon2  float64 `json:"epsilon2" range:"0,1"`
}

// boardFactor tests, per scheme and operation measured on two or more
// boards, whether the times differ between boards (BoardTest). byBoard is
// scheme -> op -> board -> measurements.
func boardFactor(boards map[string][]string, byBoard map[string]map[string]map[string][]picodata.Measurement) (*BoardFactor, error) {
	f := &BoardFactor{Boards: map[string][]string{}, Test: BoardTest, Ops: []BoardOp{}}
	for b, dirs := range boards {
		f.Boards[b] = slices.Sorted(slices.Values(dirs))
	}
	for _, s := range slices.Sorted(maps.Keys(byBoard)) {
		for _, op := range slices.Sorted(maps.Keys(byBoard[s])) {
			per := byBoard[s][op]
			if len(per) < 2 {
				continue
			}
			o := BoardOp{Scheme: s, Op: op, Boards: slices.Sorted(maps.Keys(per)), Identical: true}
			var groups [][]float64
			for _, b := range o.Boards {
				x := make([]float64, len(per[b]))
				for i, m := range per[b] {
					x[i] = float64(m.Micros) / 1000
				}
				med, err := stats.Median(x)
				if err != nil {
					return nil, fmt.Errorf("%w: %s %s on board %s: %v", ErrInput, s, op, b, err)
				}
				o.N = append(o.N, len(x))
				o.MedianMs = append(o.MedianMs, round(med))
				sorted := slices.Sorted(slices.Values(x))
				if len(groups) > 0 && !slices.Equal(sorted, slices.Sorted(slices.Values(groups[0]))) {
					o.Identical = false
				}
				groups = append(groups, x)
			}
			o.DF = len(groups) - 1
			kw, err := stats.KruskalWallis(groups...)
			switch {
			case errors.Is(err, stats.ErrAllTied):
				// Every time equal on every board: no difference at all.
				o.H, o.P, o.Epsilon2 = 0, 1, 0
			case err != nil:
				return nil, fmt.Errorf("%w: %s %s: between-board test: %v", ErrInput, s, op, err)
			default:
				o.H, o.P, o.Epsilon2 = round(kw.H), round(kw.P), round(kw.Epsilon2)
				if o.Identical {
					o.H, o.P, o.Epsilon2 = 0, 1, 0 // exactly, not up to rounding
				}
			}
			f.Ops = append(f.Ops, o)
		}
	}
	if len(f.Ops) == 0 {
		f.Note = "every image ran on one board (images spread over the boards): no operation can be compared between boards; set replicate = true in experiments/pico.toml [board] to test the board as a factor"
		return f, nil
	}
	p := make([]float64, len(f.Ops))
	for i, o := range f.Ops {
		p[i] = o.P
	}
	for i, q := range stats.Holm(p) {
		f.Ops[i].PHolm = round(q)
	}
	return f, nil
}
