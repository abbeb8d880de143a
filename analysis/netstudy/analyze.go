package netstudy

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"pqrepro/analysis/stats"
)

// Analyze computes the results of a run from its design and rows. runDir,
// runID and profile are recorded, not used.
func Analyze(d *Design, rows []Row, p Params, runDir, runID, profile string) (*Results, error) {
	p = p.WithDefaults()
	if err := p.validate(); err != nil {
		return nil, err
	}
	all := rows
	rows, _ = primary(d, rows)
	if err := checkRows(d, rows); err != nil {
		return nil, fmt.Errorf("the dataset does not match its design: %w", err)
	}
	res := &Results{
		Study: "net", Run: runDir, RunID: runID, Profile: profile, Design: *d,
		Latency: "ths: first segment of the ClientHello to first segment of the client Finished, captured on the client's side of the link, in ms",
		Bytes:   "per connection, both directions, SYN to end of connection: IP datagram bytes (frame; TUN has no link header) and TCP payload bytes",
		Params: ResultParams{MaxLag: p.MaxLag, Alpha: p.Alpha, BootstrapSeed: p.BootstrapSeed, BootstrapStream: stats.BootstrapStream,
			BootstrapResamples: p.BootstrapResamples, Resampling: resampling, Level: Level, Quantiles: "R type 7"},
		Published: published,
	}
	prim := PrimaryToolchain(d, all)
	byKey := map[sampleKey][]Row{}
	for _, r := range rows {
		k := sampleKey{prim, r.Scenario, r.Group, r.Round}
		byKey[k] = append(byKey[k], r)
	}
	samples := map[sampleKey]*sample{}
	for _, sc := range d.Scenarios {
		for _, rd := range d.Rounds {
			for _, g := range d.Groups {
				k := sampleKey{prim, sc.Name, g, rd}
				rs := byKey[k]
				slices.SortStableFunc(rs, func(a, b Row) int { return a.Seq - b.Seq })
				s, ser, err := series(sc.Name, rd, g, rs, p.MaxLag)
				if err != nil {
					return nil, fmt.Errorf("scenario %s round %d group %s: %w", sc.Name, rd, g, err)
				}
				s.stream = SeriesStream(prim, sc.Name, rd, g, "")
				samples[k] = s
				res.Series = append(res.Series, ser)
				res.Reproduced.Attempts += ser.Attempts
				res.Reproduced.Failed += ser.Failed
				res.Reproduced.Handshakes += ser.OK
			}
		}
	}
	var err error
	res.Comparisons, err = comparisons(d, func(sc string, rd int, g string) *sample { return samples[sampleKey{prim, sc, g, rd}] }, p)
	if err != nil {
		return nil, err
	}
	res.Scenarios = scenarioEffects(d, res.Comparisons)
	largest := slices.Max(d.Rounds)
	probs := make([]float64, 99)
	for i := range probs {
		probs[i] = float64(i+1) / 100
	}
	for _, sc := range d.Scenarios {
		for _, g := range d.Groups {
			s := samples[sampleKey{prim, sc.Name, g, largest}]
			sorted := slices.Clone(s.lat)
			slices.Sort(sorted)
			q := make([]Num, len(probs))
			for i, pr := range probs {
				q[i] = Num(stats.QuantileSorted(sorted, pr))
			}
			res.Distributions = append(res.Distributions, Distribution{Scenario: sc.Name, Round: largest, Group: g, Probs: probs, QuantilesMs: q})
		}
	}
	res.Reproduced.fill(d, res.Comparisons, largest)
	if res.Toolchains, err = toolchainFactor(d, all, p, samples); err != nil {
		return nil, err
	}
	return res, nil
}

// comparisons compares the target group with the baseline group in every
// scenario and round of the design, the samples from get, with the block
// bootstrap z test's p and the Mann-Whitney p (a supplement) each
// Bonferroni-adjusted over them.
func comparisons(d *Design, get func(scenario string, round int, group string) *sample, p Params) ([]Comparison, error) {
	base, target := d.Groups[0], d.Groups[1]
	var out []Comparison
	var ps, pb []float64
	for _, sc := range d.Scenarios {
		for _, rd := range d.Rounds {
			c, err := compare(get(sc.Name, rd, base), get(sc.Name, rd, target), p)
			if err != nil {
				return nil, fmt.Errorf("scenario %s round %d: %w", sc.Name, rd, err)
			}
			c.Scenario, c.RTTms, c.Round, c.Baseline, c.Target = sc.Name, sc.RTTms, rd, base, target
			out = append(out, c)
			ps, pb = append(ps, float64(c.MWUP)), append(pb, float64(c.P))
		}
	}
	for i, padj := range stats.Bonferroni(ps) {
		out[i].MWUPAdj = Num(padj)
	}
	for i, padj := range stats.Bonferroni(pb) {
		out[i].PAdj = Num(padj)
		out[i].Significant = padj < p.Alpha
	}
	return out, nil
}

// sample is one series' values in time order, with its block
// bootstrap (computed once, from the PCG stream stream: SeriesStream).
type sample struct {
	lat, frame, payload []float64
	stream              uint64
	boot                *stats.SeriesBootstrap
	bootErr             error
}

func series(scenario string, round int, group string, rows []Row, maxLag int) (*sample, Series, error) {
	ser := Series{Scenario: scenario, Round: round, Group: group, Attempts: len(rows)}
	s := &sample{}
	var c2s, s2c, pc2s, ps2c []float64
	for _, r := range rows {
		if !r.OK {
			ser.Failed++
			if ser.FailureReasons == nil {
				ser.FailureReasons = map[string]int{}
			}
			ser.FailureReasons[r.Failure]++
			continue
		}
		if !r.HasThs || !r.HasBytes {
			continue // succeeded in process but the capture missed it (counted in meta.json)
		}
		s.lat = append(s.lat, r.ThsMs)
		s.frame = append(s.frame, r.Frame[0]+r.Frame[1])
		s.payload = append(s.payload, r.Payload[0]+r.Payload[1])
		c2s, s2c = append(c2s, r.Frame[0]), append(s2c, r.Frame[1])
		pc2s, ps2c = append(pc2s, r.Payload[0]), append(ps2c, r.Payload[1])
		ser.Retransmissions += r.Retrans
	}
	ser.OK = len(s.lat)
	var err error
	desc := func(x []float64) Summary {
		if err != nil {
			return Summary{}
		}
		var sm stats.Summary
		sm, err = stats.Describe(x)
		return summary(sm)
	}
	med := func(x []float64) Num {
		m, e := stats.Median(x)
		if e != nil && err == nil {
			err = e
		}
		return Num(m)
	}
	ser.LatencyMs, ser.FrameBytes, ser.PayloadBytes = desc(s.lat), desc(s.frame), desc(s.payload)
	ser.FrameC2S, ser.FrameS2C, ser.PayloadC2S, ser.PayloadS2C = med(c2s), med(s2c), med(pc2s), med(ps2c)
	if err != nil {
		return nil, ser, err
	}
	ser.Serial = serial(s.lat, maxLag)
	return s, ser, nil
}

// serial computes the diagnostics on the raw values and on their ranks,
// the effective sample size and the block length (both on the ranks); a
// series too short or constant for one of them gets nulls and a note
// instead of failing the analysis.
func serial(x []float64, maxLag int) Serial {
	nan := Num(math.NaN())
	out := Serial{LjungBoxQ: nan, LjungBoxP: nan, RankLjungBoxQ: nan, RankLjungBoxP: nan, NEff: nan, Tau: nan, RunsZ: nan, RunsP: nan,
		ACF: []Num{}, RankACF: []Num{}}
	lags := min(maxLag, len(x)-1)
	var notes []error
	if lags < maxLag {
		notes = append(notes, fmt.Errorf("only %d values: lags 1..%d", len(x), lags))
	}
	ranks := stats.Ranks(x)
	if lags >= 1 {
		out.Lags = lags
		acf := func(v []float64, what string, r *[]Num, q, pq *Num) {
			a, err := stats.ACF(v, lags)
			if err != nil {
				notes = append(notes, fmt.Errorf("%sACF: %w", what, err))
				return
			}
			for _, x := range a[1:] {
				*r = append(*r, Num(x))
			}
			lb := stats.LjungBoxACF(a, len(v))
			*q, *pq = Num(lb.Q), Num(lb.P)
		}
		acf(x, "", &out.ACF, &out.LjungBoxQ, &out.LjungBoxP)
		acf(ranks, "rank ", &out.RankACF, &out.RankLjungBoxQ, &out.RankLjungBoxP)
	}
	if ne, err := stats.EffectiveN(ranks); err != nil {
		notes = append(notes, fmt.Errorf("effective n: %w", err))
	} else {
		out.NEff, out.Tau, out.NEffLag = Num(ne.NEff), Num(ne.Tau), ne.K
	}
	if bl, err := stats.BlockLength(ranks); err != nil {
		notes = append(notes, fmt.Errorf("block length: %w", err))
	} else if len(x) < stats.BlockBootstrapMinBlocks*bl.Circular {
		notes = append(notes, fmt.Errorf("block length %d: %w", bl.Circular, stats.ErrBlockTooLong))
	} else {
		out.Block = bl.Circular
	}
	if rt, err := stats.RunsTest(x); err != nil {
		notes = append(notes, fmt.Errorf("runs test: %w", err))
	} else {
		out.Runs, out.RunsZ, out.RunsP = rt.Runs, Num(rt.Z), Num(rt.P)
	}
	if err := errors.Join(notes...); err != nil {
		out.Note = err.Error()
	}
	return out
}

func compare(x, y *sample, p Params) (Comparison, error) {
	var c Comparison
	c.NBase, c.NTarget = len(x.lat), len(y.lat)
	mx, err := stats.Median(x.lat)
	if err != nil {
		return c, err
	}
	my, err := stats.Median(y.lat)
	if err != nil {
		return c, err
	}
	c.BaseMedianMs, c.TargetMedianMs = Num(mx), Num(my)
	c.DiffMs = Num(my - mx)
	c.DiffPct = Num(100 * (my - mx) / mx)
	c.HigherLatency = my > mx
	// The independent-sample interval, for the record: medians drawn as
	// order statistics (the same estimator as resampling every value).
	bs, err := stats.BootstrapMedianDiff(x.lat, y.lat, stats.BootstrapConfig{Seed: p.BootstrapSeed, Resamples: p.BootstrapResamples, Level: Level, Method: stats.ResampleOrderStats})
	if err != nil {
		return c, fmt.Errorf("bootstrap: %w", err)
	}
	c.IndepLowerMs, c.IndepUpperMs = Num(bs.Lower), Num(bs.Upper)
	nan := Num(math.NaN())
	c.DiffLowerMs, c.DiffUpperMs, c.DiffSEMs, c.P, c.NEffBase, c.NEffTarget = nan, nan, nan, nan, nan, nan
	if bx, err := x.bootstrap(p); err == nil {
		c.BlockBase, c.NEffBase = bx.Block.Circular, Num(bx.NEff.NEff)
	}
	if by, err := y.bootstrap(p); err == nil {
		c.BlockTarget, c.NEffTarget = by.Block.Circular, Num(by.NEff.NEff)
	}
	if s, err := contrast(p, term{-1, x}, term{1, y}); err != nil {
		c.Note = "no block bootstrap interval: " + err.Error()
	} else {
		c.DiffLowerMs, c.DiffUpperMs, c.DiffSEMs, c.P = Num(s.Lower), Num(s.Upper), Num(s.SE), Num(s.P)
	}
	a, err := stats.VarghaDelaneyA12(x.lat, y.lat)
	if err != nil {
		return c, fmt.Errorf("A12: %w", err)
	}
	c.A12, c.A12Magnitude = Num(a.A12), string(a.Magnitude)
	mw, err := stats.MannWhitneyU(x.lat, y.lat)
	if err != nil {
		return c, fmt.Errorf("Mann-Whitney: %w", err)
	}
	c.MWU, c.MWUP, c.MWUMethod = Num(mw.U), Num(mw.P), string(mw.Method)
	fx, _ := stats.Median(x.frame)
	fy, _ := stats.Median(y.frame)
	px, _ := stats.Median(x.payload)
	py, _ := stats.Median(y.payload)
	c.BaseFrame, c.TargetFrame, c.FrameGrowthPct = Num(fx), Num(fy), Num(100*(fy-fx)/fx)
	c.BasePayload, c.TargetPayload, c.PayloadGrowthPct = Num(px), Num(py), Num(100*(py-px)/px)
	c.HigherBytes = fy > fx && py > px
	return c, nil
}

func (r *Reproduced) fill(d *Design, cs []Comparison, largest int) {
	r.Comparisons = len(cs)
	r.Round = largest
	fast, slow := d.Scenarios[0], d.Scenarios[0]
	for _, s := range d.Scenarios {
		if s.RTTms < fast.RTTms {
			fast = s
		}
		if s.RTTms > slow.RTTms {
			slow = s
		}
	}
	r.Fastest, r.Slowest = fast.Name, slow.Name
	inf := math.Inf(1)
	dmin, dmax, fmin, fmax, pmin, pmax := inf, -inf, inf, -inf, inf, -inf
	for _, c := range cs {
		if c.HigherLatency {
			r.HigherLatency++
		}
		if c.HigherBytes {
			r.HigherBytes++
		}
		if c.Significant {
			r.Significant++
		}
		fmin, fmax = min(fmin, float64(c.FrameGrowthPct)), max(fmax, float64(c.FrameGrowthPct))
		pmin, pmax = min(pmin, float64(c.PayloadGrowthPct)), max(pmax, float64(c.PayloadGrowthPct))
		if c.Round != largest {
			continue
		}
		dmin, dmax = min(dmin, float64(c.DiffMs)), max(dmax, float64(c.DiffMs))
		if c.Scenario == fast.Name {
			r.RelIncFastestPct = c.DiffPct
		}
		if c.Scenario == slow.Name {
			r.RelIncSlowestPct = c.DiffPct
		}
	}
	r.DiffMsMin, r.DiffMsMax = Num(dmin), Num(dmax)
	r.FrameGrowthMin, r.FrameGrowthMax = Num(fmin), Num(fmax)
	r.PayloadGrowthMin, r.PayloadGrowthMax = Num(pmin), Num(pmax)
}
