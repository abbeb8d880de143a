package ttlb

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"pqrepro/analysis/netstudy"
	"pqrepro/internal/jsonnum"
	"pqrepro/internal/render"
)

// SizeLabel names a response size as the tables and macros write it: 0
// (handshake only), KiB or MiB.
func SizeLabel(n int) string {
	switch {
	case n == 0:
		return "0"
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%1024 == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// sizeLabel is SizeLabel under the name the claims' rules call
// (claims.go, a rules file that changes only with an amend line).
func sizeLabel(n int) string { return SizeLabel(n) }

// pct is a percentage with one decimal, "---" where it is undefined.
func pct(v jsonnum.Num) string {
	if math.IsNaN(float64(v)) {
		return "---"
	}
	return render.Fixed(float64(v), 1)
}

// interval is "[lo, hi]" in percent, "---" where it is undefined.
func interval(lo, hi jsonnum.Num) string {
	if math.IsNaN(float64(lo)) || math.IsNaN(float64(hi)) {
		return "---"
	}
	return "[" + pct(lo) + ", " + pct(hi) + "]"
}

// ms is a time in ms with three decimals, as Study B's tables write it.
func ms(x jsonnum.Num) string { return render.Fixed(float64(x), 3) }

// tables renders the table (tab:net-ttlb) and the macros: \NetTtlbStatus
// (measured, or NotMeasuredPinned), \NetTtlbReplicates (the most
// replicates of a cell) and \NetTtlbTQuantile (its t_{0.975, k-1}),
// \NetTtlbCheckedCells and \NetTtlbAgreeCells (the cells whose
// replicates were checked against each other, and those that agree),
// \NetTtlbSoonerCells (the cells with a response whose interval lies
// wholly below 0: the hybrid finished sooner), per
// scenario role and size
// \NetTtlbRelPct<Role><Size>, \NetTtlbDiffMs<Role><Size> and the fastest
// scenario's \NetTtlbHsRelPct<Size>, per congestion control of ByCC
// \NetTtlbRelPct<Role><Size><CC> and \NetTtlbDiffMs<Role><Size><CC>, per
// role \NetTtlbBelowFive<Role> and \NetTtlbBelowOne<Role>, and per
// extension claim \NetTtlbVerdict<ID>.
//
// It returns the macros and the table apart: the macros go to NumbersFile,
// which the paper reads before its body (the body's paragraph on the
// block quotes them), the table to Table, which the appendix places.
func tables(t *Results) (numbers, table string, err error) {
	var n render.Numbers
	var errs []error
	set := func(name, v string) {
		if err := n.Set("NetTtlb"+name, v); err != nil {
			errs = append(errs, err)
		}
	}
	status := "measured"
	if !t.Measured {
		status = NotMeasuredPinned
	}
	set("Status", render.Escape(status))
	for _, c := range t.Claims {
		set("Verdict"+netstudy.MacroSuffix(c.ID), render.Escape(string(c.Verdict)))
	}
	role := func(sc string) string { r, _, _ := strings.Cut(sc, "-"); return netstudy.MacroSuffix(r) }
	var b strings.Builder
	b.WriteString("% Study B transfer block: our extension (issue 34), not the original's design.\n")
	b.WriteString(render.FitMacro)
	b.WriteString("\\begin{table}[t]\n\\centering\n\\caption{Our extension of Study B (not the original's design): the hybrid's increase of the time to last byte (ClientHello to the response's last byte) over X25519 by response size, beside the handshake's increase on the same connections; size 0 is the handshake-only connection. A replicate is one toolchain's and congestion control's series (in a block of one series per group, that pair of series); times and $+$\\% are means over the replicates, and the interval is the 95~\\% Student $t$ interval over them (df $=$ replicates $-$ 1). Per replicate: each one's own increase, by toolchain, then congestion control in name order; agree: each inside every other's within-series interval (95~\\%, block bootstrap of its series); within: the primary toolchain's first, for comparison only.}\n\\label{tab:net-ttlb}\n\\footnotesize\n\\setlength{\\tabcolsep}{3pt}\n")
	b.WriteString("\\pqfit{\\begin{tabular}{llrrrrlclr}\n\\toprule\nscenario & size & X25519 (ms) & hybrid (ms) & $+$\\% & interval (\\%) & per replicate (\\%) & agree & within (\\%) & handshake $+$\\% \\\\\n\\midrule\n")
	if !t.Measured {
		b.WriteString("\\multicolumn{10}{p{0.8\\linewidth}}{\\centering " + render.Escape(NotMeasuredPinned) + "} \\\\\n")
	}
	var m render.Numbers
	mset := func(name, v string) {
		if err := m.Set("NetTtlb"+name, v); err != nil {
			errs = append(errs, err)
		}
	}
	k, checked, agreed, sooner := 0, 0, 0, 0
	for _, c := range t.Cells {
		sz := netstudy.MacroSuffix(strings.ReplaceAll(SizeLabel(c.SizeBytes), " ", ""))
		mset("RelPct"+role(c.Scenario)+sz, pct(c.RelPct))
		mset("DiffMs"+role(c.Scenario)+sz, ms(c.DiffMs))
		if c.Scenario == t.Fastest {
			mset("HsRelPct"+sz, pct(c.HsRelPct))
		}
		var per []string
		for _, r := range c.Replicates {
			per = append(per, pct(r.RelPct))
		}
		agree := c.Agree
		if agree == "" {
			agree = "---"
		}
		fmt.Fprintf(&b, "%s & %s & %s & %s & %s & %s & %s & %s & %s & %s \\\\\n", render.Escape(c.Scenario), SizeLabel(c.SizeBytes),
			ms(c.BaseMs), ms(c.TargetMs), pct(c.RelPct), interval(c.RelLowerPct, c.RelUpperPct), strings.Join(per, " / "), agree,
			interval(c.WithinLowerPct, c.WithinUpperPct), pct(c.HsRelPct))
		k = max(k, c.K)
		if c.Agree != "" {
			checked++
		}
		if c.Agree == "yes" {
			agreed++
		}
		if c.SizeBytes > 0 && float64(c.RelUpperPct) < 0 {
			sooner++
		}
	}
	for _, c := range t.ByCC {
		sz := netstudy.MacroSuffix(strings.ReplaceAll(SizeLabel(c.SizeBytes), " ", ""))
		cc := netstudy.MacroSuffix(c.CC)
		mset("RelPct"+role(c.Scenario)+sz+cc, pct(c.RelPct))
		mset("DiffMs"+role(c.Scenario)+sz+cc, ms(c.DiffMs))
	}
	mset("CheckedCells", fmt.Sprint(checked))
	mset("AgreeCells", fmt.Sprint(agreed))
	mset("SoonerCells", fmt.Sprint(sooner))
	if k >= 2 {
		mset("Replicates", fmt.Sprint(k))
		mset("TQuantile", render.Fixed(distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}.Quantile((1+netstudy.Level)/2), 2))
	}
	for _, sc := range t.Scenarios {
		for name, mp := range map[string]map[string]int{"BelowFive": t.Below5, "BelowOne": t.Below1} {
			v := "none"
			if s := mp[sc]; s >= 0 {
				v = SizeLabel(s)
			}
			mset(name+role(sc), v)
		}
	}
	b.WriteString("\\bottomrule\n\\end{tabular}}\n\\end{table}\n")
	if len(errs) > 0 {
		return "", "", fmt.Errorf("%v", errs)
	}
	numbers = "% Study B transfer block: our extension (issue 34), not the original's design.\n" + n.Latex()
	if t.Measured {
		numbers += strings.TrimPrefix(m.Latex(), "% Generated by pqrepro; do not edit.\n")
	}
	return numbers, b.String(), nil
}
