package tlsstudy

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/stats"
	"pqrepro/analysis/tlscompare"
	"pqrepro/analysis/tlshost"
	"pqrepro/datasets/tlsdata"
)

// methods are the definitions the results follow, repeated in the JSON so
// that the numbers carry their meaning.
var methods = map[string]string{
	"ths":            "capture Ths = time of the first segment of the client's Finished (first encrypted client record after the ServerHello) minus time of the first segment of the ClientHello, per connection, from AF_PACKET nanosecond timestamps",
	"units":          "times in ms (ns / 1e6), bytes in bytes; per-connection counts are summarised by their median",
	"warmups":        "warm-up connections are dropped before any statistic",
	"validity":       "every measured connection must be complete, negotiate its configured group and show a HelloRetryRequest exactly when its configuration expects one; otherwise the dataset is refused",
	"quantiles":      "R type 7 (NumPy linear): h = (n-1)p, Q = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]); sd with divisor n-1; CV = sd/mean",
	"ecdf":           "ecdf_ms lists the type 7 quantiles at p = 0, 0.01, ..., 1",
	"rounds":         "the unit of replication is the round: tlsrun runs, in round r, the r-th block of every configuration in a freshly shuffled order; a block is a run of one configuration's records in seq order starting with its warm-ups, round = its ordinal among the configuration's blocks. Per round the paired difference d_r = median(target's block) - median(baseline's block); the increase is the median of the d_r over the n_eff rounds with both blocks (robust to a round a host transient hit unevenly), increase_pct = 100 increase / median of the baseline's block medians; its 95 % interval is the percentile cluster bootstrap over rounds (rounds resampled with replacement, B = params.bootstrap.resamples, PCG(bootstrap seed, FNV-1a 64 of \"<cell>|<config>\")); its test the two-sided Wilcoxon signed-rank test of the d_r (scipy.stats.wilcoxon zero_method='wilcox', exact for up to 50 untied rounds, else normal with tie correction); p_holm/p_bonferroni adjust these round-level p over the family; fewer than params.min_rounds paired rounds give a null interval and test with a note",
	"friedman":       "Friedman's chi-square over rounds (scipy.stats.friedmanchisquare) of the configurations' block medians, in the rounds where every configuration of the family has a block; Kendall's W = Q/(n(k-1)); n_eff = rounds",
	"independent":    "mann_whitney, cliff_delta, hodges_lehmann_ms, bootstrap_median_diff_ms and kruskal_wallis treat every handshake as an independent observation; the handshakes of a block are serially dependent and the host drifts between rounds, so their p-values and intervals overstate the evidence: descriptive only",
	"dependence":     "per primary-cell configuration, in record (time) order over all blocks: lag-1 autocorrelation of the mid-ranks of Ths (statsmodels acf on scipy rankdata) and the runs test about the median (statsmodels runstest_1samp); fifths: the run cut into five equal spans of ClientHello time (all measured connections), per fifth the baseline median and each paper target's median minus it",
	"mann_whitney":   "two-sided Mann-Whitney U of baseline (x) vs target (y), scipy.stats.mannwhitneyu method='auto' of SciPy 1.10: exact when min(n) <= 8 without ties, else normal approximation with tie and continuity correction",
	"multiplicity":   "Holm (step-down, not Holm-Sidak) and Bonferroni adjustment within each family, as R's p.adjust",
	"kruskal":        "Kruskal-Wallis H with tie correction over all configurations of a family (scipy.stats.kruskal); epsilon-squared = H/(N-1)",
	"cliff":          "Cliff's delta = P(target > baseline) - P(target < baseline) with Cliff's unbiased variance and the asymmetric Feng-Cliff interval (Student t, n+m-2 df), as effsize::cliff.delta; magnitude thresholds 0.147/0.33/0.474 (Romano et al. 2006)",
	"median_diff":    "median(target) - median(baseline) in ms and as 100 (median_t - median_b)/median_b %",
	"hodges_lehmann": "Hodges-Lehmann shift = median of all target - baseline differences, with the distribution-free interval of R's wilcox.test(conf.int=TRUE)",
	"bootstrap":      "percentile bootstrap of median(target) - median(baseline), resampling each sample independently; PCG(seed, stream) from math/rand/v2, the same seed for every comparison",
	"agreement":      "in-process client timer (dial start to handshake complete) minus capture Ths (and minus client Finished - SYN): median of the differences and 95th percentile of their absolute values, over connections with both values",
	"families":       "paper: the paper's four configurations vs its baseline; matrix: every configuration in the dataset vs the same baseline; both within the primary cell (params.primary_cell, stack/path/keyshare); each family is corrected separately",
	"cells":          "gap.cells: the paper's four configurations in every cell (stack x path x key-share mode) of the run, each target vs the cell's own baseline with the statistics of the paper family (round level, Holm over the cell's three comparisons); the primary cell's comparisons are families.paper's",
	"host_cost":      "host_cost: " + tlshost.Model + "; its interval the percentile cluster bootstrap over the rounds with both blocks, PCG(bootstrap seed, FNV-1a 64 of \"<cell>|host-cost\")",
	"stalls":         "stalls: per cell over its measured connections, server flight = server_flight_end_ns - server_hello_ns and client gap = client_finished_ns - server_flight_end_ns (ms, type 7 quantiles); stalled = connections with either >= threshold_ms (below Linux's 40 ms minimum delayed-ACK timer, above any handshake's compute here); socket options from meta.json measured.socket_options",
	"primary_choice": "the claims are judged on the first of params.primary_cell ([paper.cell]) and its fallback ([paper.fallback]) that the run has connections in, both stated before the run; with neither, the families describe the complete cell nearest the stated one (fewest factors in which it differs, then table order) and no claim is judged",
	"factors":        "gap.factors: for each factor (stack go->openssl, process openssl->openssl-cli, path loopback->bridge, runtime bridge->docker, keyshare direct->hrr) and each pair of complete cells that differ in that factor only, the change of each role's increase (median_t - median_b in the To cell minus in the From cell), the increases being the round-level ones (rounds), with a 95 % percentile cluster-bootstrap interval over the n_eff rounds both cells share (each resampled round carries the four blocks, PCG(bootstrap seed, FNV-1a 64 of \"<from cell>><to cell>|<role>\")) and the two-sided Wilcoxon signed-rank p of the per-round changes, Holm over all effects that have one; toward_ms = |published - from increase| - |published - to increase| (positive: the switch moves the increase toward the published one), closed_pct = 100 toward_ms / |published - from increase|; the cells are not fully crossed, so a factor's missing_pairs lists the cells whose partner is not in the run; the primary pair (primary: true, the paper's macros) is the pair nearest the primary cell: a cell's distance is the number of factor steps between it and the primary cell, a pair's the smaller of its cells', ties broken by the larger, then by table order",
}

// measured is one configuration's valid measured connections.
type measured struct {
	id      tlsdata.ConfigID
	recs    []*tlsdata.Record
	ths     []float64 // ms
	warmups int
	// round is the 0-based round of each measured connection (parallel
	// to ths): the ordinal of its block among the configuration's blocks
	// in record order (tlsrun.Plan runs a configuration's r-th block in
	// round r); blocks counts the blocks seen so far.
	round  []int
	blocks int
}

// roundMedians returns the median Ths of each round's block of m, indexed
// by round. A round in which the configuration has no measured connection
// is NaN.
func (m *measured) roundMedians() []float64 {
	n := 0
	for _, r := range m.round {
		n = max(n, r+1)
	}
	byRound := make([][]float64, n)
	for i, r := range m.round {
		byRound[r] = append(byRound[r], m.ths[i])
	}
	out := make([]float64, n)
	for r, x := range byRound {
		out[r] = math.NaN()
		if len(x) > 0 {
			out[r], _ = stats.Median(x)
		}
	}
	return out
}

// An EmulatedSample is one configuration's valid measured connections in
// one emulated-path cell, the gap model's input (analysis/tlsgapmodel).
type EmulatedSample struct {
	// Cell is the emulated-path cell; its Path names the delay.
	Cell Cell
	// Config is the records' configuration, as written (tlsdata.ConfigID.ID).
	Config string
	// ID is Config parsed.
	ID tlsdata.ConfigID
	// Records are the valid measured connections, in record order.
	Records []*tlsdata.Record
	// RoundThsMs is the median Ths of each round's block, NaN for a
	// round without one.
	RoundThsMs []float64
	// Rounds is the 0-based round of each record (parallel to Records).
	Rounds []int
}

// Analyze computes the results of a dataset. in describes the dataset
// (path and hash); its row counts are filled in here. The error names the
// first problems found (configuration and seq) and says what to do.
func Analyze(recs []tlsdata.Record, p Params, in Input) (*Results, error) {
	res, _, err := AnalyzeRun(recs, p, in)
	return res, err
}

// AnalyzeRun is Analyze that also returns the emulated-path cells'
// samples, which the results leave out, for AttachGapModel.
// They are sorted by cell, then configuration.
func AnalyzeRun(recs []tlsdata.Record, p Params, in Input) (*Results, []EmulatedSample, error) {
	res, emulated, err := analyze(recs, p, in)
	if err != nil {
		return nil, nil, err
	}
	var out []EmulatedSample
	for c, ms := range emulated {
		for config, m := range ms {
			out = append(out, EmulatedSample{Cell: c, Config: config, ID: m.id, Records: m.recs, RoundThsMs: m.roundMedians(), Rounds: m.round})
		}
	}
	slices.SortFunc(out, func(a, b EmulatedSample) int {
		return cmp.Or(cmp.Compare(a.Cell.String(), b.Cell.String()), cmp.Compare(a.Config, b.Config))
	})
	return res, out, nil
}

// analyze is AnalyzeRun with the emulated-path cells as measured.
func analyze(recs []tlsdata.Record, p Params, in Input) (*Results, cellSamples, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	cells := cellSamples{}
	rows := map[Cell]int{}
	get := func(r *tlsdata.Record) (*measured, Cell) {
		id, _ := tlsdata.ParseConfigID(r.Config) // the reader checked it
		c := id.CellOf(r.PathOrDefault())
		if cells[c] == nil {
			cells[c] = map[string]*measured{}
		}
		m := cells[c][r.Config]
		if m == nil {
			m = &measured{id: id}
			cells[c][r.Config] = m
		}
		return m, c
	}
	var bad []string
	in.Rows = len(recs)
	var prev *measured
	prevWarm := false
	for i := range recs {
		r := &recs[i]
		if err := r.Check(); err != nil {
			return nil, nil, fmt.Errorf("%s: seq %d: %w", in.Path, r.Seq, err)
		}
		m, c := get(r)
		// A block is a run of one configuration's records in seq order
		// that starts with its warm-ups: a new block begins where the
		// configuration changes, or where a warm-up follows a measured
		// connection of the same configuration.
		if m != prev || (r.Warmup && !prevWarm) {
			m.blocks++
		}
		prev, prevWarm = m, r.Warmup
		rows[c]++
		if r.Warmup {
			in.Warmups++
			m.warmups++
			continue
		}
		in.Measured++
		if why := invalid(r, m.id); why != "" {
			bad = append(bad, fmt.Sprintf("config %s seq %d: %s", r.Config, r.Seq, why))
			continue
		}
		m.recs = append(m.recs, r)
		m.ths = append(m.ths, float64(*r.ThsNs)/1e6)
		m.round = append(m.round, m.blocks-1)
	}
	if len(bad) > 0 {
		const show = 5
		total, more := len(bad), ""
		if total > show {
			more = fmt.Sprintf("; and %d more", total-show)
			bad = bad[:show]
		}
		return nil, nil, fmt.Errorf("%s: %d measured connection(s) are not valid samples: %s%s; a wrong connection is an error, not a sample: fix the experiment and record a new run",
			in.Path, total, strings.Join(bad, "; "), more)
	}
	if in.Measured == 0 {
		return nil, nil, fmt.Errorf("%s: no measured connections (%d rows, all warm-ups): record a run with measured connections", in.Path, in.Rows)
	}

	// The emulated-path cells are the gap model's (AnalyzeRun), not the
	// comparisons': they leave cells here.
	emulated := cellSamples{}
	for c, ms := range cells {
		if _, ok := tlsdata.ParseEmulatedPath(c.Path); ok {
			emulated[c] = ms
			delete(cells, c)
		}
	}

	choice, err := choosePrimary(p, cells)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", in.Path, err)
	}
	primary := choice.Judged
	in.OtherCells = in.Rows - rows[primary]

	// The primary cell's configurations in table order; each must have
	// enough connections.
	byID := cells[primary]
	for c, ms := range cells {
		for id, m := range ms {
			if c != primary && len(m.recs) > 0 && len(m.recs) < MinConnections {
				return nil, nil, fmt.Errorf("%s: cell %s: config %s has %d measured connection(s), at least %d are needed: record a run with more connections",
					in.Path, c, id, len(m.recs), MinConnections)
			}
		}
	}
	paper := make([]string, len(p.Paper))
	for i, id := range p.Paper {
		paper[i] = inCell(id, primary)
	}
	baseline := paper[0]
	var ids []string
	for id, m := range byID {
		if len(m.recs) == 0 {
			continue
		}
		if len(m.recs) < MinConnections {
			return nil, nil, fmt.Errorf("%s: config %s has %d measured connection(s), at least %d are needed (sd, Cliff's interval and the bootstrap are undefined below): record a run with more connections",
				in.Path, id, len(m.recs), MinConnections)
		}
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return compareConfigs(byID[a].id, byID[b].id) })
	for i, id := range paper {
		if m := byID[id]; m == nil || len(m.recs) == 0 {
			return nil, nil, fmt.Errorf("%s: the paper's %s configuration %s has no measured connections in the primary cell %s (it has %s): record a run that includes it, or fix the parameters",
				in.Path, Roles[i], id, primary, strings.Join(ids, ", "))
		}
	}

	res := &Results{
		Schema: Schema, Study: "tls", Profile: p.Profile, Input: in, Methods: methods,
		Params: ResultParams{
			Baseline: baseline, Paper: map[string]string{}, Cell: primary,
			Bootstrap: BootstrapParams{Seed: p.BootstrapSeed, Stream: fmt.Sprintf("%#x", uint64(stats.BootstrapStream)), Resamples: p.resamples(), Level: Level},
			Level:     Level, MinN: MinConnections, MinRounds: tlscompare.MinRounds,
		},
		Families:  map[string]*Family{},
		Published: Published,
		Primary:   choice,
	}
	for i, id := range paper {
		res.Params.Paper[Roles[i]] = id
	}
	var allInproc, allInprocSyn []float64
	for _, id := range ids {
		c, err := describeConfig(id, byID[id])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: config %s: %w", in.Path, id, err)
		}
		res.Configs = append(res.Configs, c)
		d, ds := agreementDiffs(byID[id].recs)
		allInproc = append(allInproc, d...)
		allInprocSyn = append(allInprocSyn, ds...)
	}
	res.Agreement = Agreement{Ths: agreementStat(allInproc), SynToFinished: agreementStat(allInprocSyn)}

	roles := map[string]string{}
	for i, id := range paper {
		roles[id] = Roles[i]
	}
	if res.Families["paper"], err = family(p, primary, paper, byID, roles); err != nil {
		return nil, nil, fmt.Errorf("%s: paper family: %w", in.Path, err)
	}
	matrix := append([]string{baseline}, slices.DeleteFunc(slices.Clone(ids), func(s string) bool { return s == baseline })...)
	if res.Families["matrix"], err = family(p, primary, matrix, byID, nil); err != nil {
		return nil, nil, fmt.Errorf("%s: matrix family: %w", in.Path, err)
	}
	if res.Dependence, err = dependence(ids, byID, cells, paper); err != nil {
		return nil, nil, fmt.Errorf("%s: dependence: %w", in.Path, err)
	}
	if res.Gap, err = gapAnalysis(p, cells, choice); err != nil {
		return nil, nil, fmt.Errorf("%s: gap analysis: %w", in.Path, err)
	}
	if res.Gap.Emulated, err = emulatedFamilies(p, emulated); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", in.Path, err)
	}
	res.Stalls = stalls(cells)
	return res, emulated, nil
}

// AttachMeta adds what the run's meta.json says to results of Analyze.
// That is, the host's cryptography (the primitive-cost account,
// hostAccount of res.Gap) and each stack's socket options beside the
// stall account.
func AttachMeta(res *Results, p Params, m RunMeta) {
	res.Host = hostAccount(res.Gap, p, m.HostCrypto)
	res.Stalls.attachSocketOptions(m.SocketOptions)
}

// hostAccount is the host's account (tlshost.NewAccount) of every
// complete cell of the gap analysis g.
//
// The cells' per-round increases are passed in, so that tlshost needs no
// type of this package.
func hostAccount(g *Gap, p Params, hc *tlshost.CryptoMeta) *tlshost.Account {
	var cells []tlshost.CellIncreases
	for i := range g.Cells {
		c := &g.Cells[i]
		hyb, kem := c.role("hybrid"), c.role("pq-kem")
		if hyb == nil || kem == nil {
			continue
		}
		cells = append(cells, tlshost.CellIncreases{Cell: c.Cell, HybridDiffsMs: floats(hyb.Rounds.DiffsMs),
			KemDiffsMs: floats(kem.Rounds.DiffsMs), KemIncreaseMs: float64(kem.Rounds.IncreaseMs)})
	}
	return tlshost.NewAccount(hc, cells, tlshost.Resampling{Seed: p.BootstrapSeed, Resamples: p.resamples(), Level: Level, MinRounds: tlscompare.MinRounds})
}

// SocketOptions is meta.json's measured.socket_options of one stack.
type SocketOptions struct {
	ClientNoDelay bool   `json:"client_tcp_nodelay"`
	ServerNoDelay bool   `json:"server_tcp_nodelay"`
	Source        string `json:"source"`
}

// RunMeta is what the analysis reads of a run's meta.json; both parts are
// absent in runs recorded before issue 24.
type RunMeta struct {
	HostCrypto    *tlshost.CryptoMeta
	SocketOptions map[string]SocketOptions
}

// ParseRunMeta reads measured.host_crypto and measured.socket_options of
// a run's meta.json; either may be missing. name is for the errors.
func ParseRunMeta(name string, b []byte) (RunMeta, error) {
	var m struct {
		Measured struct {
			HostCrypto    *tlshost.CryptoMeta      `json:"host_crypto"`
			SocketOptions map[string]SocketOptions `json:"socket_options"`
		} `json:"measured"`
	}
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil {
		return RunMeta{}, fmt.Errorf("%s: %w; the run folder is immutable: record a new run", name, err)
	}
	hc := m.Measured.HostCrypto
	if hc != nil {
		for when, s := range map[string]*tlshost.Speed{"before": hc.Before, "after": hc.After} {
			if s == nil {
				continue
			}
			for k, v := range s.MsPerOp {
				if !(v > 0) || math.IsInf(v, 0) {
					return RunMeta{}, fmt.Errorf("%s: measured.host_crypto.%s.ms_per_op[%q] = %v: want a positive time", name, when, k, v)
				}
			}
		}
	}
	for st := range m.Measured.SocketOptions {
		if !slices.Contains(tlsdata.Stacks, st) {
			return RunMeta{}, fmt.Errorf("%s: measured.socket_options names stack %q, not one of %v", name, st, tlsdata.Stacks)
		}
	}
	return RunMeta{HostCrypto: hc, SocketOptions: m.Measured.SocketOptions}, nil
}

// invalid says why a measured connection is not a valid sample, or "".
func invalid(r *tlsdata.Record, id tlsdata.ConfigID) string {
	var why []string
	if !r.Complete || r.ThsNs == nil {
		why = append(why, "incomplete handshake in the capture (no ClientHello, ServerHello or client Finished)")
	}
	if r.NegotiatedGroup != r.Group {
		g := r.NegotiatedGroup
		if g == "" {
			g = "none"
		}
		why = append(why, fmt.Sprintf("negotiated group %s, configured %s", g, r.Group))
	}
	wantHRR := id.HRR || tlsdata.ExpectHRR(id.GroupsName(), id.Group)
	if r.HRR && !wantHRR {
		why = append(why, "unexpected HelloRetryRequest")
	}
	if !r.HRR && wantHRR {
		why = append(why, "no HelloRetryRequest although the configuration expects one")
	}
	if r.ThsNs != nil && *r.ThsNs <= 0 {
		why = append(why, fmt.Sprintf("ths_ns %d is not positive", *r.ThsNs))
	}
	return strings.Join(why, ", ")
}

// compareConfigs orders configurations as tables list them: cert key,
// group (each in the order of the experiment's lists), chain, HRR.
func compareConfigs(a, b tlsdata.ConfigID) int {
	return cmp.Or(
		cmp.Compare(slices.Index(tlsdata.KnownCertKeys, a.CertKey), slices.Index(tlsdata.KnownCertKeys, b.CertKey)),
		cmp.Compare(slices.Index(tlsdata.KnownGroups, a.Group), slices.Index(tlsdata.KnownGroups, b.Group)),
		boolCmp(a.Chain, b.Chain), boolCmp(a.HRR, b.HRR))
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

var certKeyLabels = map[string]string{"ed25519": "Ed25519", "ecdsa-p256": "ECDSA P-256", "mldsa44": "ML-DSA-44", "mldsa65": "ML-DSA-65", "mldsa87": "ML-DSA-87"}
var groupLabels = map[string]string{"MLKEM1024": "ML-KEM-1024"}

func certKeyLabel(k string) string { return cmp.Or(certKeyLabels[k], k) }
func groupLabel(g string) string   { return cmp.Or(groupLabels[g], g) }

// rowLabel is the cert key part of a label with the options, e.g.
// "ML-DSA-87 (chain)".
func rowLabel(id tlsdata.ConfigID) string { return certKeyLabel(id.CertKey) + options(id) }

// Label is the human name of a configuration, e.g. "ML-DSA-87 + X25519"
// or "ECDSA P-256 + X25519MLKEM768 (chain)".
func Label(id tlsdata.ConfigID) string {
	return certKeyLabel(id.CertKey) + " + " + groupLabel(id.Group) + options(id)
}

func options(id tlsdata.ConfigID) string {
	var opts []string
	if id.Chain {
		opts = append(opts, "chain")
	}
	if id.HRR {
		opts = append(opts, "HRR")
	}
	if len(opts) == 0 {
		return ""
	}
	return " (" + strings.Join(opts, ", ") + ")"
}

func describeConfig(id string, m *measured) (ConfigResult, error) {
	s, err := stats.Describe(m.ths)
	if err != nil {
		return ConfigResult{}, err
	}
	sorted := slices.Sorted(slices.Values(m.ths))
	ecdf := make([]Num, 101)
	for i := range ecdf {
		ecdf[i] = Num(stats.QuantileSorted(sorted, float64(i)/100))
	}
	col := func(f func(r *tlsdata.Record) float64) Num {
		x := make([]float64, len(m.recs))
		for i, r := range m.recs {
			x[i] = f(r)
		}
		v, _ := stats.Median(x) // len >= MinConnections
		return Num(v)
	}
	dirs := func(c2s, s2c func(r *tlsdata.Record) float64) Directions {
		return Directions{C2S: col(c2s), S2C: col(s2c), Total: col(func(r *tlsdata.Record) float64 { return c2s(r) + s2c(r) })}
	}
	var rt Retransmissions
	var client, server []float64
	for _, r := range m.recs {
		rt.Total += r.Retransmissions
		if r.Retransmissions > 0 {
			rt.Connections++
		}
		rt.Max = max(rt.Max, r.Retransmissions)
		if r.InprocClientNs != nil {
			client = append(client, float64(*r.InprocClientNs)/1e6)
		}
		if r.InprocServerNs != nil {
			server = append(server, float64(*r.InprocServerNs)/1e6)
		}
	}
	d, ds := agreementDiffs(m.recs)
	return ConfigResult{
		Config: id, Label: Label(m.id), CertKey: m.id.CertKey, Group: m.id.Group, Chain: m.id.Chain, HRR: m.id.HRR,
		N: len(m.recs), Warmups: m.warmups,
		ThsMs:  s.JSON(),
		ECDFMs: ecdf,
		Bytes: Bytes{
			Frame:      dirs(func(r *tlsdata.Record) float64 { return float64(r.FrameBytesC2S) }, func(r *tlsdata.Record) float64 { return float64(r.FrameBytesS2C) }),
			TCPPayload: dirs(func(r *tlsdata.Record) float64 { return float64(r.TCPPayloadBytesC2S) }, func(r *tlsdata.Record) float64 { return float64(r.TCPPayloadBytesS2C) }),
		},
		Packets:         dirs(func(r *tlsdata.Record) float64 { return float64(r.PacketsC2S) }, func(r *tlsdata.Record) float64 { return float64(r.PacketsS2C) }),
		Retransmissions: rt,
		Agreement:       Agreement{Ths: agreementStat(d), SynToFinished: agreementStat(ds)},
		InprocClientMs:  medianOrNaN(client),
		InprocServerMs:  medianOrNaN(server),
	}, nil
}

func medianOrNaN(x []float64) Num {
	if len(x) == 0 {
		return Num(math.NaN())
	}
	v, _ := stats.Median(x)
	return Num(v)
}

// agreementDiffs returns, in ms, inproc_client - Ths and inproc_client -
// (client Finished - SYN) for the connections that have the values.
func agreementDiffs(recs []*tlsdata.Record) (ths, syn []float64) {
	for _, r := range recs {
		if r.InprocClientNs == nil {
			continue
		}
		ths = append(ths, float64(*r.InprocClientNs-*r.ThsNs)/1e6)
		if r.SynNs != nil {
			syn = append(syn, float64(*r.InprocClientNs-(*r.ClientFinishedNs-*r.SynNs))/1e6)
		}
	}
	return ths, syn
}

func agreementStat(d []float64) AgreementStat {
	if len(d) == 0 {
		return AgreementStat{MedianDiffMs: Num(math.NaN()), P95AbsDiffMs: Num(math.NaN())}
	}
	med, _ := stats.Median(d)
	abs := make([]float64, len(d))
	for i, v := range d {
		abs[i] = math.Abs(v)
	}
	p95, _ := stats.Quantile(abs, 0.95)
	return AgreementStat{N: len(d), MedianDiffMs: Num(med), P95AbsDiffMs: Num(p95)}
}

// family compares every configuration of ids after the first (the
// baseline) with the first, by round (tlscompare.RoundComparison, Holm over the
// round-level p-values) and, descriptively, as independent samples; and
// runs Friedman over rounds and Kruskal-Wallis over all of them.
func family(p Params, cell Cell, ids []string, ms map[string]*measured, roles map[string]string) (*Family, error) {
	f := &Family{Baseline: ids[0], Configs: ids}
	groups := make([][]float64, len(ids))
	perRound := make([][]float64, len(ids))
	n := 0
	for i, id := range ids {
		groups[i] = ms[id].ths
		perRound[i] = ms[id].roundMedians()
		n += len(groups[i])
	}
	if len(ids) < 2 {
		return nil, fmt.Errorf("only the baseline %s has measured connections: nothing to compare", ids[0])
	}
	kw, err := stats.KruskalWallis(groups...)
	if err != nil {
		return nil, fmt.Errorf("Kruskal-Wallis: %w", err)
	}
	f.Kruskal = Kruskal{H: Num(kw.H), DF: kw.DF, P: Num(kw.P), Epsilon2: Num(kw.Epsilon2), N: n}
	f.Friedman = tlscompare.FriedmanRounds(perRound)
	f.BaselineRoundsMs = nums(perRound[0])
	x := groups[0]
	mx, _ := stats.Median(x)
	var ps []float64
	for k, id := range ids[1:] {
		y := groups[k+1]
		c, err := compare(p, x, y)
		if err != nil {
			return nil, fmt.Errorf("%s vs %s: %w", id, ids[0], err)
		}
		if c.Rounds, err = tlscompare.CompareRounds(perRound[0], perRound[k+1], stats.ClusterConfig{Seed: p.BootstrapSeed, Stream: tlscompare.Stream(cell.String() + "|" + id), Resamples: p.resamples(), Level: Level}); err != nil {
			return nil, fmt.Errorf("%s vs %s by round: %w", id, ids[0], err)
		}
		my, _ := stats.Median(y)
		c.Target, c.Baseline = id, ids[0]
		c.NTarget, c.NBaseline = len(y), len(x)
		c.MedianTargetMs, c.MedianBaselineMs = Num(my), Num(mx)
		c.MedianDiffMs = Num(my - mx)
		c.MedianDiffPct = Num(100 * (my - mx) / mx)
		if role, ok := roles[id]; ok {
			c.Role = role
			if pub, ok := Published.Increases[role]; ok {
				c.Published = &pub
			}
		}
		f.Comparisons = append(f.Comparisons, c)
		ps = append(ps, float64(c.Rounds.SignedRank.P))
	}
	holm, bonf := tlscompare.HolmFinite(ps)
	for i := range f.Comparisons {
		f.Comparisons[i].PHolm, f.Comparisons[i].PBonferroni = Num(holm[i]), Num(bonf[i])
	}
	return f, nil
}

func nums(x []float64) []Num {
	out := make([]Num, len(x))
	for i, v := range x {
		out[i] = Num(v)
	}
	return out
}

func compare(p Params, x, y []float64) (Comparison, error) {
	var c Comparison
	mw, err := stats.MannWhitneyU(x, y)
	if err != nil {
		return c, fmt.Errorf("Mann-Whitney U: %w", err)
	}
	c.MannWhitney = MannWhitney{U: Num(mw.U), UTarget: Num(mw.UY), P: Num(mw.P), Z: Num(mw.Z), Method: string(mw.Method)}
	cd, err := stats.CliffsDelta(x, y, Level)
	if err != nil {
		return c, fmt.Errorf("Cliff's delta: %w", err)
	}
	c.Cliff = Cliff{Delta: Num(cd.Delta), Lower: Num(cd.Lower), Upper: Num(cd.Upper), Level: Num(cd.Level), Magnitude: string(cd.Magnitude)}
	hl, err := stats.HodgesLehmann(x, y, Level)
	if err != nil {
		return c, fmt.Errorf("Hodges-Lehmann: %w", err)
	}
	c.HodgesLehmann = HodgesLehmann{Shift: Num(hl.Shift), Lower: Num(hl.Lower), Upper: Num(hl.Upper), Level: Num(hl.Level), Method: string(hl.Method)}
	bs, err := stats.BootstrapMedianDiff(x, y, stats.BootstrapConfig{Seed: p.BootstrapSeed, Resamples: p.resamples(), Level: Level})
	if err != nil {
		return c, fmt.Errorf("bootstrap: %w", err)
	}
	c.Bootstrap = Bootstrap{Estimate: Num(bs.Estimate), Lower: Num(bs.Lower), Upper: Num(bs.Upper), Level: Num(bs.Level), Resamples: bs.Resamples, Seed: bs.Seed}
	return c, nil
}
