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

// sizeLabel names a response size for the table: 0 (handshake only),
// KiB or MiB.
func sizeLabel(n int) string {
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
// scenario's \NetTtlbHsRelPct<Size>, per role \NetTtlbBelowFive<Role> and
// \NetTtlbBelowOne<Role>, and per extension claim \NetTtlbVerdict<ID>.
func tables(t *Results) (string, error) {
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
	b.WriteString(n.Latex())
	b.WriteString("\\begin{table}[t]\n\\centering\n\\caption{Our extension of Study B (not the original's design): the hybrid's increase of the time to last byte (ClientHello to the response's last byte) over X25519 by response size, beside the handshake's increase on the same connections; size 0 is the handshake-only connection. A replicate is one series pair (one toolchain); times and $+$\\% are means over the replicates, and the interval is the 95~\\% Student $t$ interval over them (df $=$ replicates $-$ 1). Per toolchain: each one's own increase; agree: each inside the other's within-series interval (95~\\%, block bootstrap of its series); within: the primary toolchain's, for comparison only.}\n\\label{tab:net-ttlb}\n\\footnotesize\n\\setlength{\\tabcolsep}{3pt}\n")
	b.WriteString("\\begin{tabular}{llrrrrlclr}\n\\toprule\nscenario & size & X25519 (ms) & hybrid (ms) & $+$\\% & interval (\\%) & per toolchain (\\%) & agree & within (\\%) & handshake $+$\\% \\\\\n\\midrule\n")
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
		sz := netstudy.MacroSuffix(strings.ReplaceAll(sizeLabel(c.SizeBytes), " ", ""))
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
		fmt.Fprintf(&b, "%s & %s & %s & %s & %s & %s & %s & %s & %s & %s \\\\\n", render.Escape(c.Scenario), sizeLabel(c.SizeBytes),
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
				v = sizeLabel(s)
			}
			mset(name+role(sc), v)
		}
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n\\end{table}\n")
	if len(errs) > 0 {
		return "", fmt.Errorf("%v", errs)
	}
	if t.Measured {
		b.WriteString(strings.TrimPrefix(m.Latex(), "% Generated by pqrepro; do not edit.\n"))
	}
	return b.String(), nil
}
