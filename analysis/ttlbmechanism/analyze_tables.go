package ttlbmechanism

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"pqrepro/analysis/netstudy"
	"pqrepro/internal/jsonnum"
	"pqrepro/internal/render"
)

// Table holds the mechanism's table (tab:net-ttlbmechanism) and macros.
const Table = "paper/generated/net-ttlbmechanism.tex"

// macroPrefix starts every macro of Table.
const macroPrefix = "NetTtlbMech"

// tables renders Table: the macros \NetTtlbMechStatus (measured, or
// NotMeasured), \NetTtlbMechOrderVerdict (prediction 1) and per
// congestion control \NetTtlbMechWindowVerdict<CC> and
// \NetTtlbMechWindowMisses<CC> (prediction 2), then the table: per
// congestion control and cell the observed and predicted dP, the error,
// its bound, the pass, the share predicted, dW and dA; for a run without
// the controlled block a table that says so.
func tables(t *Results) (string, error) {
	var n render.Numbers
	var errs []error
	set := func(name, v string) {
		if err := n.Set(macroPrefix+name, v); err != nil {
			errs = append(errs, err)
		}
	}
	status := "measured"
	if !t.Measured {
		status = NotMeasured
	}
	set("Status", render.Escape(status))
	set("OrderVerdict", render.Escape(t.Order.Verdict))
	for _, cc := range t.CCs {
		set("WindowVerdict"+netstudy.MacroSuffix(cc.CC), render.Escape(cc.Verdict))
		set("WindowMisses"+netstudy.MacroSuffix(cc.CC), strconv.Itoa(len(cc.Misses)))
	}
	tab := render.Table{Label: "tab:net-ttlbmechanism",
		Caption: "Our extension of Study B: the registered mechanism of the hybrid's shorter transfers (analysis/ttlb/mechanism.txt). Per congestion control and cell, hybrid minus X25519 of the means: the post-handshake time $P$ observed and predicted from the hybrid's distribution of the response's first-round-trip window $W$ with the other toolchain's times, the error, its bound $z\\sqrt{SE^2+\\tau^2}$, the share predicted, and $W$ and the acknowledged handshake $A$ (segments)."}
	if !t.Measured {
		tab.Caption = "Our extension of Study B: the registered mechanism of the hybrid's shorter transfers (analysis/ttlb/mechanism.txt) in this run."
		tab.Align, tab.Header = "p{0.8\\linewidth}", []string{"status"}
		tab.Rows = [][]string{{render.Escape(NotMeasured)}}
	} else {
		tab.Align = "lllrrrrcrrr"
		tab.Header = []string{"cc", "scenario", "size (B)", "$\\Delta P$ obs.\\ (ms)", "$\\Delta P$ pred.\\ (ms)", "error (ms)", "bound (ms)", "pass", "share", "$\\Delta W$", "$\\Delta A$"}
		for _, c := range t.Cells {
			tab.Rows = append(tab.Rows, row(c))
		}
		var notes []string
		notes = append(notes, "Prediction 1 (order): "+render.Escape(t.Order.Verdict)+".")
		for _, cc := range t.CCs {
			notes = append(notes, fmt.Sprintf("%s: %s (m = %d, z = %s, $\\tau$ = %s ms).", render.Escape(cc.CC), render.Escape(cc.Verdict), cc.Cells, fixed(cc.Z, 2), fixed(cc.TauMs, 3)))
		}
		tab.Notes = strings.Join(notes, " ")
	}
	s, err := tab.Latex()
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("%s: %v", Table, errs)
	}
	return n.Latex() + s, nil
}

// row is a cell's table row; a cell without a prediction says why in its
// pass column ("---" elsewhere).
func row(c Cell) []string {
	pass := "no"
	switch {
	case !c.Predictable:
		pass = "---"
	case c.Pass:
		pass = "yes"
	}
	return []string{render.Escape(c.CC), render.Escape(c.Scenario), strconv.Itoa(c.SizeBytes),
		fixed(c.ObservedMs, 3), fixed(c.PredictedMs, 3), fixed(c.ErrorMs, 3), fixed(c.BoundMs, 3), pass,
		fixed(c.Share, 2), fixed(c.DW, 2), fixed(c.DA, 2)}
}

// fixed is v with d decimals, "---" where it is undefined.
func fixed(v jsonnum.Num, d int) string {
	if math.IsNaN(float64(v)) {
		return "---"
	}
	return render.Fixed(float64(v), d)
}
