package gapmodel

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Definition is one way to time a handshake from a capture: from Start to
// Stop, both seen at End of the emulated link.
type Definition struct {
	Name  string // e.g. "ch-cfin"
	End   string // "client" or "server": whose side of the link the capture is on
	About string // what it times, in words
	Short string // the same, for a table's column
}

// Key names the definition in Row.ThsByDefMs and in output: Name@End.
func (d Definition) Key() string { return d.Name + "@" + d.End }

// Definitions are the registered Ths definitions of the joint fit
// (registration2.txt), at the client's end first. ch-cfin@client is ours.
var Definitions = func() []Definition {
	about := []struct{ name, about, short string }{
		{"ch-cfin", "ClientHello to the client's Finished", "ClientHello, Finished"},
		{"ch-slast", "ClientHello to the server's last handshake segment", "ClientHello, server's last"},
		{"ch2-cfin", "second ClientHello (after an HRR) to the client's Finished", "2nd ClientHello, Finished"},
		{"syn-cfin", "the client's SYN to its Finished", "SYN, Finished"},
	}
	var out []Definition
	for _, end := range []string{"client", "server"} {
		for _, a := range about {
			out = append(out, Definition{Name: a.name, End: end, About: a.about, Short: a.short})
		}
	}
	return out
}()

// JointRow is the joint fit of one definition, client group list and
// chain to the four published medians.
type JointRow struct {
	Definition Definition
	Combo      Combo
	// RTTMs is the grid RTT minimising WorstPct, the largest of the four
	// |predicted - published| / published (%) in ErrPct (Roles order).
	RTTMs    float64
	WorstPct float64
	ErrPct   []float64
	// IncRTTMs minimises IncWorstPct, the largest relative error of the
	// three increases over the baseline; BaselineOffsetMs is the
	// predicted baseline minus the published one at IncRTTMs.
	IncRTTMs         float64
	IncWorstPct      float64
	BaselineOffsetMs float64
	// MinRTTMs and MaxRTTMs bound the grid: the measured levels' RTTs.
	MinRTTMs, MaxRTTMs float64
	Reaches            bool // WorstPct <= the registered target
}

// JointFit fits, per definition in defs (Definition keys), client group
// list and chain, the RTT at which the cells best reproduce the published
// medians (registration2.txt).
//
// A cell's median under a definition is interpolated linearly in the
// self-tested RTT between its measured levels, without extrapolation, and
// the RTT R on a grid of reg.JointStepMs from the lowest measured RTT,
// with the highest measured RTT added as its last point, is the one minimising
// max_j |pred_j(R) - P_j| / P_j (the smallest such R on a tie). A row that
// lacks a definition is an error naming the cell: the joint fit never
// falls back to another definition.
func JointFit(rows []Row, defs []string, pub Published, reg Registration2) ([]JointRow, error) {
	want, err := pub.medians()
	if err != nil {
		return nil, fmt.Errorf("gapmodel: %w", err)
	}
	byKey := map[string]Definition{}
	for _, d := range Definitions {
		byKey[d.Key()] = d
	}
	var out []JointRow
	for _, key := range defs {
		def, ok := byKey[key]
		if !ok {
			return nil, fmt.Errorf("gapmodel: joint fit: definition %q is not registered (%v)", key, defKeys())
		}
		curves := map[Combo][][]rttPoint{} // per combo, per role
		for i := range rows {
			r := &rows[i]
			v, ok := r.ThsByDefMs[key]
			if !ok || !(v > 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("gapmodel: joint fit: cell %s has no Ths by %s (%s): the run's captures cannot give it (a capture missing the item, or a run captured at one end only); record the run with both ends captured", r.Label(), key, def.About)
			}
			if curves[r.combo()] == nil {
				curves[r.combo()] = make([][]rttPoint, len(Roles))
			}
			j := slices.Index(Roles, r.Role)
			curves[r.combo()][j] = append(curves[r.combo()][j], rttPoint{r.RTTMs, v})
		}
		combos := make([]Combo, 0, len(curves))
		for c := range curves {
			combos = append(combos, c)
		}
		slices.SortFunc(combos, func(a, b Combo) int { return cmp.Or(cmp.Compare(a.Groups, b.Groups), cmp.Compare(a.Chain, b.Chain)) })
		for _, c := range combos {
			lo, hi := math.Inf(-1), math.Inf(1)
			for j, ps := range curves[c] {
				if len(ps) < 2 {
					return nil, fmt.Errorf("gapmodel: joint fit: %s, %s has %d level(s) of %s: interpolation needs two", c, key, len(ps), Roles[j])
				}
				slices.SortFunc(ps, func(a, b rttPoint) int { return cmp.Compare(a.rtt, b.rtt) })
				lo, hi = max(lo, ps[0].rtt), min(hi, ps[len(ps)-1].rtt)
			}
			at := func(j int, R float64) float64 {
				ps := curves[c][j]
				k := max(1, firstAtOrAbove(ps, R))
				a, b := ps[k-1], ps[k]
				if b.rtt == a.rtt {
					return a.ths
				}
				return a.ths + (b.ths-a.ths)*(R-a.rtt)/(b.rtt-a.rtt)
			}
			row := JointRow{Definition: def, Combo: c, MinRTTMs: lo, MaxRTTMs: hi, WorstPct: math.Inf(1), IncWorstPct: math.Inf(1)}
			steps := int(math.Floor((hi-lo)/reg.JointStepMs + 1e-9))
			for n := 0; n <= steps+1; n++ {
				R := lo + float64(n)*reg.JointStepMs
				if n > steps { // the grid's last point: the highest RTT measured
					if R = hi; hi-(lo+float64(steps)*reg.JointStepMs) < 1e-12 {
						break
					}
				}
				pred := make([]float64, len(Roles))
				worst, incWorst := 0.0, 0.0
				errs := make([]float64, len(Roles))
				for j := range Roles {
					pred[j] = at(j, R)
					errs[j] = 100 * (pred[j] - want[j]) / want[j]
					worst = max(worst, math.Abs(errs[j]))
				}
				for j := 1; j < len(Roles); j++ {
					inc, pinc := pred[j]-pred[0], want[j]-want[0]
					incWorst = max(incWorst, math.Abs(100*(inc-pinc)/pinc))
				}
				if worst < row.WorstPct {
					row.RTTMs, row.WorstPct, row.ErrPct = R, worst, errs
				}
				if incWorst < row.IncWorstPct {
					row.IncRTTMs, row.IncWorstPct, row.BaselineOffsetMs = R, incWorst, pred[0]-want[0]
				}
			}
			if math.IsInf(row.WorstPct, 1) {
				return nil, fmt.Errorf("gapmodel: joint fit: %s, %s: the roles' measured RTTs do not overlap (%.3f to %.3f ms)", c, key, lo, hi)
			}
			row.Reaches = row.WorstPct <= reg.JointTargetPct
			out = append(out, row)
		}
	}
	return out, nil
}

// rttPoint is one level of a cell: its self-tested RTT and median Ths.
type rttPoint struct{ rtt, ths float64 }

// firstAtOrAbove returns the index of the first point with rtt >= R, at
// most len(ps) - 1; ps is sorted by rtt.
func firstAtOrAbove(ps []rttPoint, R float64) int {
	k, _ := slices.BinarySearchFunc(ps, R, func(p rttPoint, r float64) int { return cmp.Compare(p.rtt, r) })
	return min(k, len(ps)-1)
}

func defKeys() []string {
	var ks []string
	for _, d := range Definitions {
		ks = append(ks, d.Key())
	}
	return ks
}
