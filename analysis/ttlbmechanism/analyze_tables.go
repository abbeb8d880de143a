package ttlbmechanism

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"pqrepro/analysis/netstudy"
	"pqrepro/analysis/ttlb"
	"pqrepro/internal/jsonnum"
	"pqrepro/internal/render"
)

// Table holds the mechanism's table (tab:net-ttlbmechanism).
const Table = "paper/generated/net-ttlbmechanism.tex"

// NumbersFile holds the mechanism's macros, read before the paper's body.
const NumbersFile = "paper/generated/net-ttlbmechanism-numbers.tex"

// macroPrefix starts every macro of Table.
const macroPrefix = "NetTtlbMech"

// tables renders Table: the mechanism's macros, then its table.
//
// The macros are \NetTtlbMechStatus (measured, or why
// not), \NetTtlbMechPadCheck (the pad check), \NetTtlbMechOrderVerdict
// (prediction 1) with per role \NetTtlbMechOrderCells<Role> and
// \NetTtlbMechOrderNegative<Role> (its cells above the initial window,
// and those below zero), \NetTtlbMechCause (prediction 3's status), per
// congestion control \NetTtlbMechInterventionVerdict<CC> and
// \NetTtlbMechInterventionMisses<CC> (prediction 2), and per cell with a
// share \NetTtlbMechShare<Role><Size><CC> with its ShareLower and
// ShareUpper, per cell \NetTtlbMechDWHyb<Role><Size><CC> and DWPad (the
// arms' dW), then the table: per
// congestion control and cell dP of the hybrid and of the padded arm,
// the error, its bound (the test's power), the pass, the share
// dP_padded / dP_hybrid with its interval where the cell passes, and dW
// and dA of each arm; for a run without the arm a table that says so.
//
// It returns the macros (NumbersFile) and the table (Table) apart.
func tables(t *Results) (numbers, table string, err error) {
	var n render.Numbers
	var errs []error
	set := func(name, v string) {
		if err := n.Set(macroPrefix+name, v); err != nil {
			errs = append(errs, err)
		}
	}
	status := "measured"
	if !t.Measured {
		status = t.Note
	}
	set("Status", render.Escape(status))
	set("PadCheck", render.Escape(t.PadCheck.Verdict))
	set("OrderVerdict", render.Escape(t.Order.Verdict))
	set("Cause", render.Escape(t.Cause))
	for _, cc := range t.CCs {
		set("InterventionVerdict"+netstudy.MacroSuffix(cc.CC), render.Escape(cc.Verdict))
		set("InterventionMisses"+netstudy.MacroSuffix(cc.CC), strconv.Itoa(len(cc.Misses)))
	}
	for _, r := range t.Order.Roles {
		set("OrderCells"+netstudy.MacroSuffix(r.Role), strconv.Itoa(r.Cells))
		set("OrderNegative"+netstudy.MacroSuffix(r.Role), strconv.Itoa(r.Negative))
	}
	for _, c := range t.Cells {
		key := netstudy.MacroSuffix(Role(c.Scenario)) + netstudy.MacroSuffix(ttlb.SizeLabel(c.SizeBytes)) + netstudy.MacroSuffix(c.CC)
		set("DWHyb"+key, fixed(c.DWHybrid, 2))
		set("DWPad"+key, fixed(c.DWPadded, 2))
		if math.IsNaN(float64(c.Share)) {
			continue
		}
		set("Share"+key, fixed(c.Share, 2))
		set("ShareLower"+key, fixed(c.ShareLower, 2))
		set("ShareUpper"+key, fixed(c.ShareUpper, 2))
	}
	tab := render.Table{Label: "tab:net-ttlbmechanism",
		Caption: "Our extension of Study B: the registered intervention on the hybrid's shorter transfers (analysis/ttlb/mechanism2.txt). Per congestion control and cell, each arm minus X25519 of the means: the post-handshake time $P$ of the hybrid and of X25519 padded to the hybrid's server flight, the error $e = \\Delta P_{\\mathrm{pad}} - \\Delta P_{\\mathrm{hyb}}$, its bound $z\\sqrt{SE^2+\\tau^2}$ (the largest $|e|$ the test lets through), the pass, the share $\\Delta P_{\\mathrm{pad}} / \\Delta P_{\\mathrm{hyb}}$ with its 95~\\% interval where the cell passes, and the response's first-round-trip window $W$ and the acknowledged handshake $A$ (segments) of each arm."}
	if !t.Measured {
		tab.Caption = "Our extension of Study B: the registered intervention on the hybrid's shorter transfers (analysis/ttlb/mechanism2.txt) in this run."
		tab.Align, tab.Header = "p{0.8\\linewidth}", []string{"status"}
		tab.Rows = [][]string{{render.Escape(t.Note)}}
	} else {
		tab.Align = "lllrrrrcrrrrr"
		tab.Header = []string{"cc", "scenario", "size (B)", "$\\Delta P_{\\mathrm{hyb}}$ (ms)", "$\\Delta P_{\\mathrm{pad}}$ (ms)", "$e$ (ms)", "bound (ms)", "pass", "share",
			"$\\Delta W_{\\mathrm{hyb}}$", "$\\Delta W_{\\mathrm{pad}}$", "$\\Delta A_{\\mathrm{hyb}}$", "$\\Delta A_{\\mathrm{pad}}$"}
		for _, c := range t.Cells {
			tab.Rows = append(tab.Rows, row(c))
		}
		notes := []string{"Pad check: " + render.Escape(t.PadCheck.Verdict) + ".", "Prediction 1 (order): " + render.Escape(t.Order.Verdict) + "."}
		for _, cc := range t.CCs {
			notes = append(notes, fmt.Sprintf("%s: %s (m = %d, z = %s, $\\tau$ = %s ms).", render.Escape(cc.CC), render.Escape(cc.Verdict), cc.Cells, fixed(cc.Z, 2), fixed(cc.TauMs, 3)))
		}
		notes = append(notes, "Prediction 3: "+render.Escape(t.Cause)+".")
		tab.Notes = strings.Join(notes, " ")
	}
	s, err := tab.Latex()
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return "", "", fmt.Errorf("%s: %v", Table, errs)
	}
	return n.Latex(), s, nil
}

// row is a cell's table row; a cell that could not be tested has "---"
// in its pass column and wherever a value is undefined.
func row(c Cell) []string {
	pass := "no"
	switch {
	case !c.Tested:
		pass = "---"
	case c.Pass:
		pass = "yes"
	}
	share := fixed(c.Share, 2)
	if share != "---" {
		share += " [" + fixed(c.ShareLower, 2) + ", " + fixed(c.ShareUpper, 2) + "]"
	}
	return []string{render.Escape(c.CC), render.Escape(c.Scenario), strconv.Itoa(c.SizeBytes),
		fixed(c.DPHybridMs, 3), fixed(c.DPPaddedMs, 3), fixed(c.ErrorMs, 3), fixed(c.BoundMs, 3), pass, share,
		fixed(c.DWHybrid, 2), fixed(c.DWPadded, 2), fixed(c.DAHybrid, 2), fixed(c.DAPadded, 2)}
}

// fixed is v with d decimals, "---" where it is undefined.
func fixed(v jsonnum.Num, d int) string {
	if math.IsNaN(float64(v)) {
		return "---"
	}
	return render.Fixed(float64(v), d)
}
