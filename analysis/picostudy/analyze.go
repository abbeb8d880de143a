package picostudy

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"pqrepro/analysis/stats"
	"pqrepro/datasets/picodata"
	"pqrepro/internal/jsonnum"
	"pqrepro/internal/provenance"
)

// Defaults of Params.
const (
	// DefaultPowerMilliwatts is the paper's power model: 3.3 V x 24 mA.
	DefaultPowerMilliwatts = 3.3 * 24
	// DefaultPQM4 is the committed table of pqm4's Cortex-M4 numbers,
	// published values like those of published.go (its source is its
	// first lines).
	DefaultPQM4 = "analysis/picostudy/pqm4.csv"
)

// DefaultRequire are the schemes a run must have for the analysis to run:
// the post-quantum ones. The classical baselines are compared when present
// and recorded as not measured when absent.
var DefaultRequire = append(slices.Clone(picodata.KEMSchemes), picodata.DSASchemes...)

// requiredOps are the operations every post-quantum scheme must have.
var requiredOps = map[string][]string{
	"kem":       {"keygen", "encaps", "decaps"},
	"signature": {"keygen", "sign", "verify"},
}

// ErrInput is wrapped by every error about the run's data.
var ErrInput = errors.New("pico analysis: bad input")

// input is what the analyze stage reads: the run's files and the pqm4 table.
type input struct {
	runDir  string
	files   []string // every input file, relative to the root
	read    func(rel string) ([]byte, error)
	pqm4    string
	power   float64
	require []string
}

type imageData struct {
	name    string // the run folder: <image>[+<configuration>][@<board number>]
	image   string // the image: the folder name without +<configuration> and @<n>
	board   string // image.json's board; "" in runs made before boards were recorded
	factors Factors
	header  picodata.Header
	ms      []picodata.Measurement
	size    picodata.SizeReport
}

// analyze turns a run into Results. It fails, naming the file and what is
// wrong, on any damage: a missing file or scheme, a serial log that does
// not end, a device failure line, records that disagree with the log, or a
// host check that did not pass.
func analyze(ctx context.Context, in input) (*Results, error) {
	metaRel := path.Join(in.runDir, provenance.FileName)
	mb, err := in.read(metaRel)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInput, metaRel, err)
	}
	var meta provenance.Meta
	if err := json.Unmarshal(mb, &meta); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInput, metaRel, err)
	}
	if meta.Study != picodata.Study || meta.RunID == "" || meta.Board == "" {
		return nil, fmt.Errorf("%w: %s: study %q, run %q, board %q: not a pico run's provenance", ErrInput, metaRel, meta.Study, meta.RunID, meta.Board)
	}
	have := map[string]bool{}
	var dirs []string
	for _, f := range in.files {
		have[f] = true
		if path.Base(f) == picodata.MeasurementsFile && path.Dir(path.Dir(f)) == in.runDir {
			dirs = append(dirs, path.Dir(f))
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: no <image>/%s in %s", ErrInput, picodata.MeasurementsFile, in.runDir)
	}
	slices.Sort(dirs)
	var images []imageData
	for _, dir := range dirs {
		img, err := readImage(ctx, in, dir, have)
		if err != nil {
			return nil, err
		}
		images = append(images, img)
	}

	emulated := strings.Contains(meta.Board, "(emulated)")
	label := "board"
	if emulated {
		label = "emulated"
	}
	for i := range images {
		if images[i].board == "" {
			images[i].board = DefaultBoard(emulated)
		}
	}
	h := images[0].header
	res := &Results{Study: picodata.Study, Run: meta.RunID, Profile: meta.Profile, Board: meta.Board,
		Emulated: emulated, Label: label, ClockHz: h.ClockHz, Compiler: h.CC, CFlags: h.CFlags, Seed: h.Seed,
		Quantiles: "R type 7 (Hyndman and Fan 1996, definition 7; NumPy's default)",
		Energy: EnergyModel{Volts: 3.3, Milliamps: in.power / 3.3, Milliwatts: in.power,
			Formula: fmt.Sprintf("E[mJ] = t[ms] x %s mW / 1000 (datasheet power model, P = V x I)", strconv.FormatFloat(in.power, 'f', -1, 64))},
		SRAMBytes: picodata.SRAMSize}
	res.initMaps()
	for _, img := range images {
		if img.header.CFlags != h.CFlags || img.header.Seed != h.Seed {
			return nil, fmt.Errorf("%w: image %s ran with %q and seed %d, image %s with %q and seed %d: one run must use one flag set and seed",
				ErrInput, images[0].name, h.CFlags, h.Seed, img.name, img.header.CFlags, img.header.Seed)
		}
	}
	// Each configuration has its own clock; the primary's is the run's.
	primary, others, err := groupConfigurations(images)
	if err != nil {
		return nil, err
	}
	res.ClockHz = primary[0].factors.ClockHz
	if err := addImages(res, primary, in.power, timerMs); err != nil {
		return nil, err
	}
	var signs []picodata.Measurement
	for _, img := range primary {
		signs = append(signs, img.ms...)
	}
	if res.SigningLoops, err = signingLoops(signs); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	for _, s := range in.require {
		if res.Schemes[s] == nil {
			return nil, fmt.Errorf("%w: missing scheme %s: the run has %s (a run restricted to some images cannot be analysed; run the whole profile)",
				ErrInput, s, strings.Join(slices.Sorted(maps.Keys(res.Schemes)), ", "))
		}
	}
	for name, sc := range res.Schemes {
		for _, op := range requiredOps[sc.Family] {
			if sc.Ops[op] == nil && slices.Contains(in.require, name) {
				return nil, fmt.Errorf("%w: scheme %s has no %s measurements", ErrInput, name, op)
			}
		}
	}
	if err := addConfigurations(res, primary[0].factors, others, in.power); err != nil {
		return nil, err
	}
	hostRel := path.Join(in.runDir, picodata.HostTimingsFile)
	if have[hostRel] {
		if err := hostBlock(res, in, hostRel, meta); err != nil {
			return nil, err
		}
	} else {
		res.NotMeasured["host"] = "the run has no host timings"
	}
	exchanges(res, in.power)
	res.Recommendation = recommendation(res)
	if err := m4(res, in); err != nil {
		return nil, err
	}
	res.Published = publishedValues(res)
	if err := configurationsPublished(res, in); err != nil {
		return nil, err
	}
	return res, nil
}

// configurationsPublished sets each configuration's figures beside the
// original's, derived from its own summaries as the primary's are.
func configurationsPublished(res *Results, in input) error {
	if res.Configurations == nil {
		return nil
	}
	for _, c := range res.Configurations.Others {
		tmp := newResults()
		tmp.Schemes = c.Schemes
		exchanges(tmp, in.power)
		if err := m4(tmp, in); err != nil {
			return err
		}
		c.Published = publishedValues(tmp)
	}
	return nil
}

// initMaps makes r's maps, which the summaries fill.
func (r *Results) initMaps() {
	r.Schemes, r.Exchanges, r.Versus = map[string]*Scheme{}, map[string]*Exchange{}, map[string]*Versus{}
	r.SignVerify, r.SignVerifyVsECDSA, r.NotMeasured = map[string]*Cost{}, map[string]float64{}, map[string]string{}
}

// newResults is an empty Results for a configuration's summaries.
func newResults() *Results {
	r := &Results{}
	r.initMaps()
	return r
}

// publishedValues sets each published figure beside ours from r, with
// the ratio; a figure r cannot give (a scheme it lacks) has neither.
func publishedValues(r *Results) []PublishedValue {
	var out []PublishedValue
	for _, p := range published {
		v := PublishedValue{Key: p.key, Quantity: p.quantity, Unit: p.unit, Paper: p.paper}
		if o, ok := p.ours(r); ok && !math.IsNaN(o) {
			o = round(o)
			v.Ours = &o
			ratio := round(o / p.paper)
			v.Ratio = &ratio
		}
		out = append(out, v)
	}
	return out
}

// readImage reads and cross-checks one image's files.
func readImage(ctx context.Context, in input, dir string, have map[string]bool) (imageData, error) {
	img := imageData{name: path.Base(dir)}
	img.image, _, _ = strings.Cut(img.name, "@")
	need := func(name string) ([]byte, error) {
		rel := path.Join(dir, name)
		if !have[rel] {
			return nil, fmt.Errorf("%w: image %s: %s is missing", ErrInput, img.name, rel)
		}
		b, err := in.read(rel)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInput, rel, err)
		}
		return b, nil
	}
	b, err := need(picodata.MeasurementsFile)
	if err != nil {
		return img, err
	}
	if img.ms, err = picodata.DecodeMeasurements(bytes.NewReader(b)); err != nil {
		return img, fmt.Errorf("%w: %s: %v", ErrInput, path.Join(dir, picodata.MeasurementsFile), err)
	}
	raw, err := need(picodata.SerialLogFile)
	if err != nil {
		return img, err
	}
	logRel := path.Join(dir, picodata.SerialLogFile)
	ds, rerr := picodata.ReadRun(ctx, bytes.NewReader(raw), picodata.ReadOptions{IdleTimeout: 10 * time.Second})
	for _, f := range ds.Failures {
		return img, fmt.Errorf("%w: %s: device failure line: %s %s iteration %d: %s", ErrInput, logRel, f.Scheme, f.Op, f.Iter, f.Msg)
	}
	if ds.Fault != nil {
		return img, fmt.Errorf("%w: %s: the firmware faulted at pc=0x%08x", ErrInput, logRel, ds.Fault.PC)
	}
	if rerr != nil || !ds.Complete || len(ds.Problems) > 0 {
		var ps []string
		for _, p := range ds.Problems {
			ps = append(ps, p.String())
		}
		return img, fmt.Errorf("%w: %s: the run is not whole (%v; %s)", ErrInput, logRel, rerr, strings.Join(ps, "; "))
	}
	if !slices.Equal(ds.Measurements, img.ms) {
		return img, fmt.Errorf("%w: %s holds %d records that differ from the %d in %s", ErrInput,
			path.Join(dir, picodata.MeasurementsFile), len(img.ms), len(ds.Measurements), logRel)
	}
	for _, m := range img.ms {
		if !m.OK {
			return img, fmt.Errorf("%w: %s: %s %s iteration %d failed its device check", ErrInput, logRel, m.Scheme, m.Op, m.Iter)
		}
	}
	img.header = ds.Header
	rel := path.Join(dir, picodata.ImageFile)
	var rec *imageRecord
	if have[rel] {
		b, err := in.read(rel)
		if err != nil {
			return img, fmt.Errorf("%w: %s: %v", ErrInput, rel, err)
		}
		if rec, err = parseImageRecord(b); err != nil {
			return img, fmt.Errorf("%w: %s: %v", ErrInput, rel, err)
		}
		img.board = rec.Board
	}
	if err := readFactors(&img, rec, rel); err != nil {
		return img, err
	}
	if b, err = need(picodata.SizeFile); err != nil {
		return img, err
	}
	if err := json.Unmarshal(b, &img.size); err != nil {
		return img, fmt.Errorf("%w: %s: %v", ErrInput, path.Join(dir, picodata.SizeFile), err)
	}
	if b, err = need(picodata.VerifyFile); err != nil {
		return img, err
	}
	var checks []picodata.Check
	if err := json.Unmarshal(b, &checks); err != nil {
		return img, fmt.Errorf("%w: %s: %v", ErrInput, path.Join(dir, picodata.VerifyFile), err)
	}
	if len(checks) == 0 {
		return img, fmt.Errorf("%w: %s lists no host checks", ErrInput, path.Join(dir, picodata.VerifyFile))
	}
	for _, c := range checks {
		if !c.OK {
			return img, fmt.Errorf("%w: %s: host check %s %s (%s) failed", ErrInput, path.Join(dir, picodata.VerifyFile), c.Scheme, c.Name, c.Lib)
		}
	}
	return img, nil
}

func family(scheme string) string {
	switch {
	case slices.Contains(picodata.KEMSchemes, scheme):
		return "kem"
	case scheme == "ecdh-p256":
		return "key-exchange"
	}
	return "signature"
}

// addImages adds the images' schemes to res, with each measurement's time
// in ms from msOf. A replicated run has one folder per image and board:
// their measurements are pooled per operation, and the board factor
// (boards.go) compares them.
func addImages(res *Results, images []imageData, power float64, msOf func(picodata.Measurement) float64) error {
	type pooled struct {
		image   string
		first   imageData
		byOp    map[string][]picodata.Measurement
		byBoard map[string]map[string][]picodata.Measurement // op -> board -> measurements
	}
	pools := map[string]*pooled{}
	ran := map[[2]string]string{} // image, board -> folder
	for _, img := range images {
		k := [2]string{img.image, img.board}
		if prev, ok := ran[k]; ok {
			return fmt.Errorf("%w: image %s ran twice on board %s (folders %s and %s)", ErrInput, img.image, img.board, prev, img.name)
		}
		ran[k] = img.name
		for _, m := range img.ms {
			p := pools[m.Scheme]
			if p == nil {
				p = &pooled{image: img.image, first: img, byOp: map[string][]picodata.Measurement{}, byBoard: map[string]map[string][]picodata.Measurement{}}
				pools[m.Scheme] = p
			}
			if p.image != img.image {
				return fmt.Errorf("%w: scheme %s appears in images %s and %s", ErrInput, m.Scheme, p.image, img.image)
			}
			if img.header.FirmwareID != p.first.header.FirmwareID {
				return fmt.Errorf("%w: image %s ran as firmware %s in %s and %s in %s: one run must run one build of each image",
					ErrInput, img.image, p.first.header.FirmwareID, p.first.name, img.header.FirmwareID, img.name)
			}
			p.byOp[m.Op] = append(p.byOp[m.Op], m)
			if p.byBoard[m.Op] == nil {
				p.byBoard[m.Op] = map[string][]picodata.Measurement{}
			}
			p.byBoard[m.Op][img.board] = append(p.byBoard[m.Op][img.board], m)
		}
	}
	byBoard := map[string]map[string]map[string][]picodata.Measurement{}
	for _, s := range slices.Sorted(maps.Keys(pools)) {
		p := pools[s]
		byBoard[s] = p.byBoard
		img := p.first
		sc := &Scheme{Family: family(s), Image: img.image, Ops: map[string]*Op{},
			ImageFlashBytes: img.size.Image, ImageStaticRAMBytes: img.size.StaticRAM}
		for _, o := range img.size.Owners {
			if o.Owner == s {
				sc.Code = CodeSize{Text: o.Text, Rodata: o.Rodata, Data: o.Data, Bss: o.Bss,
					FlashBytes: o.Text + o.Rodata + o.Data, RAMBytes: o.Data + o.Bss}
			}
		}
		for _, op := range slices.Sorted(maps.Keys(p.byOp)) {
			ms := p.byOp[op]
			o, err := describe(ms, power, msOf)
			if err != nil {
				return fmt.Errorf("%w: %s %s: %v", ErrInput, s, op, err)
			}
			if op == "sign" {
				lo, hi := ms[0].Cycles, ms[0].Cycles
				for _, m := range ms {
					o.SamplesMs = append(o.SamplesMs, msOf(m))
					lo, hi = min(lo, m.Cycles), max(hi, m.Cycles)
				}
				o.MinCycles, o.MaxCycles = &lo, &hi
				o.CVLower, o.CVUpper = cvInterval(s, o.SamplesMs)
			}
			sc.Ops[op] = o
			if o.PeakStackBytes > sc.PeakStackBytes {
				sc.PeakStackBytes, sc.PeakStackOp = o.PeakStackBytes, op
			}
		}
		res.Schemes[s] = sc
	}
	boards := map[string][]string{}
	for _, img := range images {
		boards[img.board] = append(boards[img.board], img.name)
	}
	if len(boards) > 1 {
		f, err := boardFactor(boards, byBoard)
		if err != nil {
			return err
		}
		res.Boards = f
	}
	return nil
}

// describe summarises one operation: times in ms from msOf (the 1 MHz
// timer, or cycles at a configuration's clock), R type 7 quantiles
// (analysis/stats), energy = mean time x power.
func describe(ms []picodata.Measurement, power float64, msOf func(picodata.Measurement) float64) (*Op, error) {
	x := make([]float64, len(ms))
	var cyc float64
	o := &Op{N: len(ms)}
	for i, m := range ms {
		x[i] = msOf(m)
		cyc += float64(m.Cycles)
		o.PeakStackBytes = max(o.PeakStackBytes, m.Stack)
		o.PeakHeapBytes = max(o.PeakHeapBytes, m.Heap)
	}
	s, err := stats.Describe(x)
	if err != nil {
		return nil, err
	}
	o.MeanMs, o.SDMs, o.MedianMs = num(s.Mean), num(s.SD), num(s.Median)
	o.Q1Ms, o.Q3Ms = num(s.Q1), num(s.Q3)
	o.P95Ms, o.P99Ms, o.CV = num(s.P95), num(s.P99), num(s.CV)
	o.MinMs, o.MaxMs = num(s.Min), num(s.Max)
	o.MeanCycles = num(cyc / float64(len(ms)))
	o.EnergyMJ = num(s.Mean * power / 1000)
	iters, counted := 0.0, true
	for _, m := range ms {
		iters += float64(m.Loop.Iters)
		counted = counted && m.Loop.Counted()
	}
	if counted && len(ms) > 0 {
		o.MeanIterations = num(iters / float64(len(ms)))
	}
	return o, nil
}

// CV interval of a signing operation: the percentile bootstrap of the
// coefficient of variation over its repetitions (Efron and Tibshirani
// 1993, ch. 13), cvResamples resamples at cvLevel from a PCG stream named
// after the scheme (cvStream), so the interval does not depend on the
// order of the analysis. The repetitions are independent signatures of
// fresh messages, so they are the units resampled.
const (
	cvResamples = 2000
	cvLevel     = 0.95
	cvSeed      = 1
)

// cvStream is the PCG stream of a scheme's CV bootstrap: FNV-1a of its
// name.
func cvStream(scheme string) uint64 {
	h := fnv.New64a()
	h.Write([]byte("cv|" + scheme))
	return h.Sum64()
}

// cvInterval returns the cvLevel percentile bootstrap interval of the
// coefficient of variation of x, or nils when there is none (fewer than
// two values, or a resample with a zero mean).
func cvInterval(scheme string, x []float64) (*float64, *float64) {
	cv := func(idx []int) float64 {
		var sum, sq float64
		for _, i := range idx {
			sum += x[i]
		}
		m := sum / float64(len(idx))
		for _, i := range idx {
			sq += (x[i] - m) * (x[i] - m)
		}
		return math.Sqrt(sq/float64(len(idx)-1)) / m
	}
	r, err := stats.ClusterBootstrap(len(x), cv, stats.ClusterConfig{Seed: cvSeed, Stream: cvStream(scheme), Resamples: cvResamples, Level: cvLevel})
	if err != nil {
		return nil, nil
	}
	return num(r.Lower), num(r.Upper)
}

// exchanges fills the full key exchanges, the ML-KEM vs ECDH comparison
// and the sign+verify costs.
func exchanges(res *Results, power float64) {
	mean := func(s, op string) (float64, bool) {
		sc := res.Schemes[s]
		if sc == nil || sc.Ops[op] == nil || sc.Ops[op].MeanMs == nil {
			return 0, false
		}
		return *sc.Ops[op].MeanMs, true
	}
	for _, s := range picodata.KEMSchemes {
		k, ok1 := mean(s, "keygen")
		e, ok2 := mean(s, "encaps")
		d, ok3 := mean(s, "decaps")
		if ok1 && ok2 && ok3 {
			t := k + e + d
			res.Exchanges[s] = &Exchange{Method: "sum of means", Ops: []string{"keygen", "encaps", "decaps"},
				Ms: round(t), EnergyMJ: round(t * power / 1000)}
		}
	}
	const ecdh = "ecdh-p256"
	if t, ok := mean(ecdh, "exchange"); ok {
		res.Exchanges[ecdh] = &Exchange{Method: "measured", Ops: []string{"keygen", "keygen", "shared", "shared"},
			Ms: round(t), EnergyMJ: round(t * power / 1000)}
	} else if k, ok1 := mean(ecdh, "keygen"); ok1 {
		if sh, ok2 := mean(ecdh, "shared"); ok2 {
			t := 2*k + 2*sh
			res.Exchanges[ecdh] = &Exchange{Method: "sum of means", Ops: []string{"keygen", "keygen", "shared", "shared"},
				Ms: round(t), EnergyMJ: round(t * power / 1000)}
		}
	}
	if x := res.Exchanges[ecdh]; x != nil {
		for _, s := range picodata.KEMSchemes {
			if k := res.Exchanges[s]; k != nil {
				res.Versus[s] = &Versus{Speedup: round(x.Ms / k.Ms), EnergyRatio: round(k.EnergyMJ / x.EnergyMJ),
					EnergySaving: round(1 - k.EnergyMJ/x.EnergyMJ)}
			}
		}
	} else {
		why := "ECDH P-256 is not in this run (no classical image ran)"
		if res.Schemes[ecdh] != nil {
			why = "ECDH P-256 ran but has neither an exchange operation nor keygen and shared"
		}
		res.NotMeasured["ecdh-p256 exchange"] = why
		res.NotMeasured["mlkem_vs_ecdh"] = why
	}
	for _, s := range append(slices.Clone(picodata.DSASchemes), "ecdsa-p256", "rsa-2048") {
		sg, ok1 := mean(s, "sign")
		v, ok2 := mean(s, "verify")
		if ok1 && ok2 {
			res.SignVerify[s] = &Cost{Ops: []string{"sign", "verify"}, Ms: round(sg + v), EnergyMJ: round((sg + v) * power / 1000)}
		} else if slices.Contains(picodata.ClassicalSchemes, s) {
			res.NotMeasured[s+" sign_verify"] = s + " is not in this run"
		}
	}
	if e := res.SignVerify["ecdsa-p256"]; e != nil {
		for _, s := range picodata.DSASchemes {
			if c := res.SignVerify[s]; c != nil {
				res.SignVerifyVsECDSA[s] = round(c.EnergyMJ / e.EnergyMJ)
			}
		}
	} else {
		res.NotMeasured["sign_verify_energy_vs_ecdsa"] = "ECDSA P-256 is not in this run"
	}
}

// hostBlock reads the host timings: statistics per scheme, op and library.
func hostBlock(res *Results, in input, rel string, meta provenance.Meta) error {
	b, err := in.read(rel)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInput, rel, err)
	}
	hs, err := picodata.DecodeHostTimings(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInput, rel, err)
	}
	h := &Host{CPU: meta.Host.CPUModel, Cores: meta.Host.Cores, Ops: map[string]map[string]map[string]*HostOp{}}
	for _, t := range hs {
		x := make([]float64, len(t.Durations))
		for i, d := range t.Durations {
			x[i] = float64(d.Nanoseconds()) / 1000
		}
		s, err := stats.Describe(x)
		if err != nil {
			return fmt.Errorf("%w: %s: %s %s %s: %v", ErrInput, rel, t.Scheme, t.Op, t.Lib, err)
		}
		if h.Ops[t.Scheme] == nil {
			h.Ops[t.Scheme] = map[string]map[string]*HostOp{}
		}
		if h.Ops[t.Scheme][t.Op] == nil {
			h.Ops[t.Scheme][t.Op] = map[string]*HostOp{}
		}
		h.Ops[t.Scheme][t.Op][t.Lib] = &HostOp{N: s.N, MeanUs: num(s.Mean), MedianUs: num(s.Median), P95Us: num(s.P95),
			MinUs: num(s.Min), MaxUs: num(s.Max)}
	}
	res.Host = h
	return nil
}

// HostMean is the host column's value for a scheme and operation. The
// mean of circl when it has the operation (the same library for every
// post-quantum scheme), else of the first library by name.
func (r *Results) HostMean(scheme, op string) (float64, string, bool) {
	if r.Host == nil || r.Host.Ops[scheme] == nil || len(r.Host.Ops[scheme][op]) == 0 {
		return 0, "", false
	}
	libs := r.Host.Ops[scheme][op]
	lib := "circl"
	if libs[lib] == nil {
		lib = slices.Sorted(maps.Keys(libs))[0]
	}
	if libs[lib].MeanUs == nil {
		return 0, "", false
	}
	return *libs[lib].MeanUs, lib, true
}

// pqm4Row is one line of the pqm4 table.
type pqm4Row struct {
	scheme, op   string
	cycles       float64
	stack, execs int
}

// parsePQM4 reads analysis/picostudy/pqm4.csv: '#' comment lines, a header,
// then scheme,op,impl,executions,cycles_mean,cycles_min,cycles_max,stack_bytes.
// Only the "clean" implementation is used.
func parsePQM4(b []byte) ([]pqm4Row, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.Comment = '#'
	r.FieldsPerRecord = 8
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	want := []string{"scheme", "op", "impl", "executions", "cycles_mean", "cycles_min", "cycles_max", "stack_bytes"}
	if !slices.Equal(head, want) {
		return nil, fmt.Errorf("header %q, want %q", head, want)
	}
	var out []pqm4Row
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := r.FieldPos(0)
		if rec[2] != "clean" {
			continue
		}
		row := pqm4Row{scheme: rec[0], op: rec[1]}
		ex, e1 := strconv.Atoi(rec[3])
		cyc, e2 := strconv.ParseFloat(rec[4], 64)
		st, e3 := strconv.Atoi(rec[7])
		if err := errors.Join(e1, e2, e3); err != nil || cyc <= 0 || ex <= 0 || st < 0 {
			return nil, fmt.Errorf("line %d: bad number in %q", line, rec)
		}
		row.cycles, row.stack, row.execs = cyc, st, ex
		out = append(out, row)
	}
	if len(out) == 0 {
		return nil, errors.New("no clean rows")
	}
	return out, nil
}

// m4 compares our M0+ cycle counts with pqm4's Cortex-M4 ones.
func m4(res *Results, in input) error {
	b, err := in.read(in.pqm4)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInput, in.pqm4, err)
	}
	rows, err := parsePQM4(b)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInput, in.pqm4, err)
	}
	res.M4.Source = "mupq/pqm4 benchmarks.md at commit e0a31090cffc019ec8843c8d348708bc4496c4cf (clean implementations; NUCLEO-L4R5ZI at 24 MHz)"
	logSum := 0.0
	for _, r := range rows {
		sc := res.Schemes[r.scheme]
		if sc == nil || sc.Ops[r.op] == nil || sc.Ops[r.op].MeanCycles == nil {
			continue
		}
		o := sc.Ops[r.op]
		ratio := *o.MeanCycles / r.cycles
		res.M4.Rows = append(res.M4.Rows, M4Row{Scheme: r.scheme, Op: r.op, M4Cycles: r.cycles, M0Cycles: *o.MeanCycles,
			Ratio: round(ratio), M4StackBytes: r.stack, M0StackBytes: o.PeakStackBytes})
		logSum += math.Log(ratio)
		if len(res.M4.Rows) == 1 || ratio < res.M4.RatioMin {
			res.M4.RatioMin = round(ratio)
		}
		if ratio > res.M4.RatioMax {
			res.M4.RatioMax = round(ratio)
		}
	}
	if n := len(res.M4.Rows); n > 0 {
		res.M4.RatioGeoMean = round(math.Exp(logSum / float64(n)))
	} else {
		res.NotMeasured["cortex_m4"] = "no scheme of the run is in the pqm4 table"
	}
	return nil
}

// round keeps 10 significant digits, so that a last-bit difference in
// floating point (fused multiply-add on another CPU) does not change the
// results' bytes.
func round(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return x
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 10, 64), 64)
	return v
}

// num is a rounded statistic, or nil when it is undefined.
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	v := round(x)
	return &v
}

// Marshal encodes results canonically (internal/jsonnum). That is,
// indented JSON with every object's keys sorted, numbers rounded to 12
// significant digits so the file is the same on every platform, a final
// newline.
func (r *Results) Marshal() ([]byte, error) { return jsonnum.Marshal(r) }
