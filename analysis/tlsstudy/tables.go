package tlsstudy

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"pqrepro/analysis/stats"
	"pqrepro/analysis/tlscompare"
	"pqrepro/datasets/tlsdata"
	"pqrepro/internal/render"
)

// Tables renders the LaTeX outputs of tls:tables from the results.
// That is, the paper's table, the full matrix, bytes per configuration,
// the parts' tables and the \newcommand numbers, keyed by output path.
func Tables(r *Results, parts ...Part) (map[string][]byte, error) {
	type table struct {
		path string
		make func(*Results) (string, error)
	}
	list := []table{
		{TablePaper, paperTable}, {TableMatrix, matrixTable}, {TableBytes, bytesTable}, {TableGap, gapTable}, {TableFactors, factorsTable}, {TableDrift, driftTable}, {TableSerial, serialTable},
	}
	for _, pt := range parts {
		for _, path := range slices.Sorted(maps.Keys(pt.Tables)) {
			list = append(list, table{path, pt.Tables[path]})
		}
	}
	list = append(list, table{NumbersFile, func(r *Results) (string, error) { return numbers(r, parts) }})
	out := map[string][]byte{}
	for _, t := range list {
		s, err := t.make(r)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", t.path, err)
		}
		out[t.path] = []byte(s)
	}
	return out, nil
}

// signed formats x with d decimals and an explicit sign.
func signed(x float64, d int) string {
	s := render.Fixed(x, d)
	if s != "---" && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// pMath formats a p-value as LaTeX math content (no dollars): three
// decimals down to 0.001, below that m\times10^{e} with two significant
// digits, and <10^{-6} below stats.PFloor: no design of the study
// supports a smaller p (the effective n is the rounds, and a p from
// dependent handshakes overstates the evidence).
func pMath(p float64) string {
	switch {
	case math.IsNaN(p):
		return `\text{---}`
	case p >= 0.001:
		return render.Fixed(p, 3)
	case p < stats.PFloor:
		return `<10^{-6}`
	}
	s := strconv.FormatFloat(p, 'e', 1, 64) // "3.2e-85"
	m, e, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(e)
	return fmt.Sprintf(`%s\times10^{%d}`, m, exp)
}

// pIsOrDash is pIs, or "---" without a test.
func pIsOrDash(p float64) string {
	if math.IsNaN(p) {
		return "---"
	}
	return pIs(p)
}

// pValue is a p-value for a table cell or a macro.
func pValue(p float64) string {
	if math.IsNaN(p) {
		return "---"
	}
	// \ensuremath, not dollars: the macro is also set inside math
	// ("$p = \TlsKemSignedRankP{}$"), where "$...$" would close it.
	return `\ensuremath{` + pMath(p) + `}`
}

// pIs is "$p = ...$" or "$p < ...$" for running text.
func pIs(p float64) string {
	m := pMath(p)
	if !strings.HasPrefix(m, "<") {
		m = "= " + m
	}
	return "$p " + m + "$"
}

// nRange is "n = 200" or "n = 30 to 200" over the given configurations.
func nRange(r *Results, ids []string) string {
	lo, hi := math.MaxInt, 0
	for _, id := range ids {
		if c := r.config(id); c != nil {
			lo, hi = min(lo, c.N), max(hi, c.N)
		}
	}
	if lo == hi {
		return fmt.Sprintf("$n = %d$", lo)
	}
	return fmt.Sprintf("$n = %d$ to $%d$", lo, hi)
}

// ciCell is a round-level interval "[+1.30, +1.81]", or "---".
func ciCell(lo, hi Num, d int) string {
	if math.IsNaN(float64(lo)) || math.IsNaN(float64(hi)) {
		return "---"
	}
	return "[" + signed(float64(lo), d) + ", " + signed(float64(hi), d) + "]"
}

// roundNotes collects the reasons a family's round-level cells are "---".
func roundNotes(r *Results, f *Family) string {
	var notes []string
	for _, c := range f.Comparisons {
		if c.Rounds.Note != "" {
			notes = append(notes, render.Escape(r.label(c.Target)+": "+c.Rounds.Note))
		}
	}
	if f.Friedman.Note != "" {
		notes = append(notes, render.Escape("Friedman: "+f.Friedman.Note))
	}
	if len(notes) == 0 {
		return ""
	}
	return " ``---'': " + strings.Join(dedupe(notes), "; ") + "."
}

func dedupe(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// label is a configuration's label, or its ID.
func (r *Results) label(id string) string {
	if c := r.config(id); c != nil {
		return c.Label
	}
	return id
}

// neffRange is "20" or "3 to 20": the paired rounds of f's comparisons.
func neffRange(f *Family) string {
	lo, hi := math.MaxInt, 0
	for _, c := range f.Comparisons {
		lo, hi = min(lo, c.Rounds.NEff), max(hi, c.Rounds.NEff)
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

func friedmanText(f tlscompare.Friedman) string {
	if math.IsNaN(float64(f.P)) {
		return fmt.Sprintf(`Friedman over rounds: --- ($n_\mathrm{eff} = %d$ rounds)`, f.NEff)
	}
	return fmt.Sprintf(`Friedman over rounds $Q = %s$, %s, Kendall's $W = %s$ ($n_\mathrm{eff} = %d$ rounds)`,
		render.Fixed(float64(f.Q), 1), pIs(float64(f.P)), render.Fixed(float64(f.KendallW), 2), f.NEff)
}

// paperTable is the paper's table: its four configurations, our median
// Ths and round-level increase next to the published increase, the
// interval over rounds, the Holm-adjusted round-level p and Cliff's
// delta (descriptive). Published values are in parentheses.
func paperTable(r *Results) (string, error) {
	if r.Families["paper"] == nil {
		return "", fmt.Errorf("no paper family")
	}
	f := r.Families["paper"]
	base := r.config(f.Baseline)
	if base == nil {
		return "", fmt.Errorf("baseline %s has no results", f.Baseline)
	}
	t := render.Table{
		Label: "tab:tls-paper",
		Caption: `Study~A, the paper's four configurations: median handshake time $T_\mathrm{hs}$ (ClientHello to client Finished, from the capture) ` +
			`and its increase over the ` + render.Escape(base.Label) + ` baseline by round (the median over rounds of the target's block median minus the baseline's in the same round), ` +
			`ours with the published value in parentheses; $\Delta$ (\%) is that increase over the median of the baseline's block medians over the rounds (` +
			baselineByRound(f) + `~ms), not over the pooled median of the first column, so the two columns' differences need not match; ` +
			`its 95\,\% cluster-bootstrap interval over rounds; the Holm-adjusted two-sided Wilcoxon signed-rank $p$ over rounds (` +
			strconv.Itoa(len(f.Comparisons)) + ` comparisons, $n_\mathrm{eff}$ rounds); Cliff's $\delta$ (descriptive).`,
		Align:  "lrrrrrr",
		Header: []string{"Configuration", `Median (ms)`, `$\Delta$ (ms)`, `$\Delta$ (\%)`, `95\,\% CI (ms)`, `$p_\mathrm{Holm}$ ($n_\mathrm{eff}$)`, `Cliff's $\delta$`},
	}
	t.Rows = append(t.Rows, []string{render.Escape(base.Label), render.Fixed(float64(base.ThsMs.Median), 3), "baseline", "", "", "", ""})
	for _, c := range f.Comparisons {
		cr := r.config(c.Target)
		if cr == nil {
			return "", fmt.Errorf("target %s has no results", c.Target)
		}
		ms, pct := signed(float64(c.Rounds.IncreaseMs), 3), signedInt(float64(c.Rounds.IncreasePct))
		if c.Published != nil {
			ms += " (" + signed(c.Published.IncreaseMs, 3) + ")"
			pct += " (" + signedInt(c.Published.IncreasePct) + ")"
		}
		t.Rows = append(t.Rows, []string{
			render.Escape(cr.Label), render.Fixed(float64(c.MedianTargetMs), 3), ms, pct, ciCell(c.Rounds.Lower, c.Rounds.Upper, 3),
			pValue(float64(c.PHolm)) + fmt.Sprintf(" (%d)", c.Rounds.NEff), render.Fixed(float64(c.Cliff.Delta), 2),
		})
	}
	kw := f.Kruskal
	t.Notes = fmt.Sprintf(`%s measured connections per configuration (profile %s) in $n_\mathrm{eff} = %s$ paired rounds, the unit of replication (Section~\ref{sec:tls-drift}); B = %d bootstrap resamples of rounds. %s. `+
		`Descriptive, treating every handshake as independent: Kruskal-Wallis $H = %s$, $\varepsilon^2 = %s$, Cliff's $\delta$. `+
		`Published: Hara et al.\ (OpenSSL 3.5.2); their baseline median ($\approx$%s\,ms) is implied by the increases, not stated.%s`,
		nRange(r, f.Configs), render.Escape(r.Profile), neffRange(f), r.Params.Bootstrap.Resamples, friedmanText(f.Friedman), render.Fixed(float64(kw.H), 1), render.Fixed(float64(kw.Epsilon2), 3),
		render.Fixed(r.Published.BaselineMedianMs, 1), roundNotes(r, f))
	return t.Latex()
}

// signedInt is a whole number with an explicit sign (a percentage cell).
func signedInt(x float64) string { return signed(x, 0) }

// matrixTable: rows are cert keys (with chain/HRR variants), columns the
// groups present; a cell is the median Ths in ms and its increase over the
// baseline.
func matrixTable(r *Results) (string, error) {
	f := r.Families["matrix"]
	type rowKey struct {
		certKey    string
		chain, hrr bool
	}
	var rows []rowKey
	var groups []string
	cells := map[rowKey]map[string]*ConfigResult{}
	for i := range r.Configs {
		c := &r.Configs[i]
		k := rowKey{c.CertKey, c.Chain, c.HRR}
		if cells[k] == nil {
			cells[k] = map[string]*ConfigResult{}
			rows = append(rows, k) // Configs are in table order
		}
		cells[k][c.Group] = c
		if !slices.Contains(groups, c.Group) {
			groups = append(groups, c.Group)
		}
	}
	slices.SortFunc(groups, func(a, b string) int {
		return slices.Index(tlsdata.KnownGroups, a) - slices.Index(tlsdata.KnownGroups, b)
	})
	pct := map[string]float64{}
	for _, c := range f.Comparisons {
		pct[c.Target] = float64(c.Rounds.IncreasePct)
	}
	base := r.config(f.Baseline)
	t := render.Table{
		Label: "tab:tls-matrix",
		Caption: `Study~A, full matrix: median $T_\mathrm{hs}$ in ms (increase over ` + render.Escape(base.Label) +
			`, by round: the median over rounds of the paired block-median differences) per certificate key (rows) and key-exchange group (columns).`,
		Align:  "l" + strings.Repeat("r", len(groups)),
		Header: []string{"Certificate"},
	}
	for _, g := range groups {
		t.Header = append(t.Header, render.Escape(groupLabel(g)))
	}
	for _, k := range rows {
		row := []string{render.Escape(rowLabel(tlsdata.ConfigID{CertKey: k.certKey, Chain: k.chain, HRR: k.hrr}))}
		for _, g := range groups {
			c := cells[k][g]
			switch {
			case c == nil:
				row = append(row, "---")
			case c.Config == f.Baseline:
				row = append(row, render.Fixed(float64(c.ThsMs.Median), 2)+" (baseline)")
			default:
				row = append(row, render.Fixed(float64(c.ThsMs.Median), 2)+" ("+render.Percent(pct[c.Config]/100, 0)+")")
			}
		}
		t.Rows = append(t.Rows, row)
	}
	kw := f.Kruskal
	t.Notes = fmt.Sprintf(`%d configurations; %s; %d comparisons with the baseline by Wilcoxon signed-rank over $n_\mathrm{eff} = %s$ rounds, largest Holm-adjusted %s. Descriptive (handshakes as independent): Kruskal-Wallis $H = %s$, $\varepsilon^2 = %s$.%s`,
		len(r.Configs), friedmanText(f.Friedman), len(f.Comparisons), neffRange(f), pIs(maxHolm(f)),
		render.Fixed(float64(kw.H), 1), render.Fixed(float64(kw.Epsilon2), 3), roundNotes(r, f))
	return t.Latex()
}

// maxHolm is the largest Holm-adjusted p of f, NaN when none has one.
func maxHolm(f *Family) float64 {
	m := math.NaN()
	for _, c := range f.Comparisons {
		if v := float64(c.PHolm); !math.IsNaN(v) && !(v <= m) {
			m = v
		}
	}
	return m
}

func bytesTable(r *Results) (string, error) {
	t := render.Table{
		Label: "tab:tls-bytes",
		Caption: `Study~A, bytes on the wire per connection (medians): captured frame bytes (including the link header) ` +
			`client to server (C$\to$S), server to client (S$\to$C) and in total; the TCP payload bytes in total; ` +
			`packets per connection (median) and retransmitted segments (sum over all measured connections).`,
		Align:  "lrrrrrr",
		Header: []string{"Configuration", `C$\to$S`, `S$\to$C`, "Total", "Payload", "Packets", "Retr."},
	}
	for _, c := range r.Configs {
		t.Rows = append(t.Rows, []string{
			render.Escape(c.Label),
			render.Fixed(float64(c.Bytes.Frame.C2S), 0), render.Fixed(float64(c.Bytes.Frame.S2C), 0), render.Fixed(float64(c.Bytes.Frame.Total), 0),
			render.Fixed(float64(c.Bytes.TCPPayload.Total), 0), render.Fixed(float64(c.Packets.Total), 0), strconv.Itoa(c.Retransmissions.Total),
		})
	}
	t.Notes = nRange(r, r.Families["matrix"].Configs) + " measured connections per configuration."
	return t.Latex()
}

// numbers are the \newcommand macros for the text. Paper roles give the
// name parts Baseline, Sig, Kem and Hybrid.
func numbers(r *Results, parts []Part) (string, error) {
	var n render.Numbers
	var errs []error
	set := func(name, v string) {
		if err := n.Set("Tls"+name, v); err != nil {
			errs = append(errs, err)
		}
	}
	paper := r.Families["paper"]
	base := r.config(paper.Baseline)
	set("BaselineMedianMs", render.Fixed(float64(base.ThsMs.Median), 3))
	set("BaselineN", strconv.Itoa(base.N))
	set("BaselineLabel", render.Escape(base.Label))
	set("BaselineFrameBytes", render.Fixed(float64(base.Bytes.Frame.Total), 0))
	set("PublishedBaselineMedianMs", render.Fixed(r.Published.BaselineMedianMs, 1))
	for _, c := range paper.Comparisons {
		m := roleMacro[c.Role]
		cr := r.config(c.Target)
		set(m+"Label", render.Escape(cr.Label))
		set(m+"N", strconv.Itoa(cr.N))
		set(m+"MedianMs", render.Fixed(float64(c.MedianTargetMs), 3))
		set(m+"IncreaseMs", signed(float64(c.Rounds.IncreaseMs), 3))
		set(m+"IncreasePct", render.Percent(float64(c.Rounds.IncreasePct)/100, 0))
		set(m+"PooledIncreaseMs", signed(float64(c.MedianDiffMs), 3))
		set(m+"RoundLowMs", signed(float64(c.Rounds.Lower), 3))
		set(m+"RoundHighMs", signed(float64(c.Rounds.Upper), 3))
		set(m+"RoundWidthMs", render.Fixed(float64(c.Rounds.Upper-c.Rounds.Lower), 3))
		set(m+"BootWidthMs", render.Fixed(float64(c.Bootstrap.Upper-c.Bootstrap.Lower), 3))
		set(m+"NEff", strconv.Itoa(c.Rounds.NEff))
		set(m+"SignedRankP", pValue(float64(c.Rounds.SignedRank.P)))
		set(m+"MannWhitneyP", pValue(float64(c.MannWhitney.P)))
		set(m+"CliffDelta", render.Fixed(float64(c.Cliff.Delta), 3))
		set(m+"CliffLow", render.Fixed(float64(c.Cliff.Lower), 3))
		set(m+"CliffHigh", render.Fixed(float64(c.Cliff.Upper), 3))
		set(m+"CliffMagnitude", c.Cliff.Magnitude)
		set(m+"HolmP", pValue(float64(c.PHolm)))
		set(m+"HodgesLehmannMs", signed(float64(c.HodgesLehmann.Shift), 3))
		set(m+"BootLowMs", signed(float64(c.Bootstrap.Lower), 3))
		set(m+"BootHighMs", signed(float64(c.Bootstrap.Upper), 3))
		set(m+"FrameBytes", render.Fixed(float64(cr.Bytes.Frame.Total), 0))
		if c.Published != nil {
			set(m+"PublishedIncreaseMs", signed(c.Published.IncreaseMs, 3))
			set(m+"PublishedIncreasePct", render.Percent(c.Published.IncreasePct/100, 0))
		}
	}
	for _, fam := range []struct{ name, macro string }{{"paper", "Paper"}, {"matrix", "Matrix"}} {
		f := r.Families[fam.name]
		set(fam.macro+"KruskalH", render.Fixed(float64(f.Kruskal.H), 1))
		set(fam.macro+"KruskalP", pValue(float64(f.Kruskal.P)))
		set(fam.macro+"KruskalPIs", pIs(float64(f.Kruskal.P)))
		set(fam.macro+"FriedmanQ", render.Fixed(float64(f.Friedman.Q), 1))
		set(fam.macro+"FriedmanPIs", pIsOrDash(float64(f.Friedman.P)))
		set(fam.macro+"KendallW", render.Fixed(float64(f.Friedman.KendallW), 2))
		set(fam.macro+"FriedmanNEff", strconv.Itoa(f.Friedman.NEff))
		set(fam.macro+"EpsilonSq", render.Fixed(float64(f.Kruskal.Epsilon2), 3))
		set(fam.macro+"Configs", strconv.Itoa(len(f.Configs)))
		set(fam.macro+"Comparisons", strconv.Itoa(len(f.Comparisons)))
		set(fam.macro+"MaxHolmP", pValue(maxHolm(f)))
	}
	// The slowest and fastest target of the matrix.
	matrix := r.Families["matrix"]
	hi, lo := matrix.Comparisons[0], matrix.Comparisons[0]
	for _, c := range matrix.Comparisons[1:] {
		if c.Rounds.IncreasePct > hi.Rounds.IncreasePct {
			hi = c
		}
		if c.Rounds.IncreasePct < lo.Rounds.IncreasePct {
			lo = c
		}
	}
	set("MatrixMaxIncreasePct", render.Percent(float64(hi.Rounds.IncreasePct)/100, 0))
	set("MatrixMaxIncreaseMs", signed(float64(hi.Rounds.IncreaseMs), 3))
	set("MatrixMaxLabel", render.Escape(r.config(hi.Target).Label))
	set("MatrixMinIncreasePct", render.Percent(float64(lo.Rounds.IncreasePct)/100, 0))
	set("MatrixMinLabel", render.Escape(r.config(lo.Target).Label))

	minN, maxP95 := math.MaxInt, math.Inf(-1)
	for _, c := range r.Configs {
		minN = min(minN, c.N)
		if v := float64(c.Agreement.Ths.P95AbsDiffMs); !math.IsNaN(v) {
			maxP95 = max(maxP95, v)
		}
	}
	set("MinN", strconv.Itoa(minN))
	set("Measured", strconv.Itoa(r.Input.Measured))
	set("Warmups", strconv.Itoa(r.Input.Warmups))
	set("BootstrapSeed", strconv.FormatUint(r.Params.Bootstrap.Seed, 10))
	set("BootstrapResamples", strconv.Itoa(r.Params.Bootstrap.Resamples))
	set("AgreementN", strconv.Itoa(r.Agreement.Ths.N))
	set("AgreementMedianMs", render.Fixed(float64(r.Agreement.Ths.MedianDiffMs), 3))
	set("AgreementPNinetyFiveMs", render.Fixed(float64(r.Agreement.Ths.P95AbsDiffMs), 3))
	set("AgreementMaxPNinetyFiveMs", render.Fixed(maxP95, 3))
	set("AgreementSynMedianMs", render.Fixed(float64(r.Agreement.SynToFinished.MedianDiffMs), 3))
	set("AgreementSynPNinetyFiveMs", render.Fixed(float64(r.Agreement.SynToFinished.P95AbsDiffMs), 3))
	gapNumbers(r, set)
	hostNumbers(r, set)
	for _, pt := range parts {
		if pt.Numbers == nil {
			continue
		}
		if err := pt.Numbers(r, set); err != nil {
			errs = append(errs, err)
		}
	}
	dependenceNumbers(r, set)
	if len(errs) > 0 {
		return "", errs[0]
	}
	return n.Latex(), nil
}

// baselineByRound is the baseline the paper family's relative increases
// are taken over (rounds.baseline_ms, the median of the baseline's block
// medians over the paired rounds), the first comparison's, in ms.
func baselineByRound(f *Family) string {
	for _, c := range f.Comparisons {
		return render.Fixed(float64(c.Rounds.BaselineMs), 3)
	}
	return "---"
}
