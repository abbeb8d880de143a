package tlsstudy

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"pqrepro/datasets/tlsdata"
	"pqrepro/internal/render"
)

// LinuxDelackMinMs is Linux's minimum delayed-ACK timeout,
// TCP_DELACK_MIN = HZ/25 (include/net/tcp.h), which the paper quotes.
const LinuxDelackMinMs = 40

// Renderings of the gap analysis: the cells beside the published
// increases (TableGap, FigureGap), the factors' effects (TableFactors)
// and their \newcommand numbers (gapNumbers, in NumbersFile).

var stackLabels = map[string]string{tlsdata.StackGo: "Go", tlsdata.StackOpenSSL: "OpenSSL (our harness)", tlsdata.StackOpenSSLCLI: "OpenSSL s_server/s_client"}

// cellLabel is e.g. "OpenSSL, bridge, direct" or "Go, loopback, HRR".
func cellLabel(c Cell) string {
	return stackLabels[c.Stack] + ", " + c.Path + ", " + keyShareLabel(c.KeyShare)
}

func keyShareLabel(k string) string {
	if k == KeyShareHRR {
		return "HRR"
	}
	return k
}

// roleNames are the column heads of the three targets.
var roleNames = map[string]string{"pq-sig": "ML-DSA-87", "pq-kem": "ML-KEM-1024", "hybrid": "Hybrid"}

// increaseCell is "+0.081 (+11 %)", or "---".
func increaseCell(c *Comparison) string {
	if c == nil {
		return "---"
	}
	return signed(float64(c.Rounds.IncreaseMs), 3) + " (" + render.Percent(float64(c.Rounds.IncreasePct)/100, 0) + ")"
}

// gapTable: one row per cell, the published numbers first, the primary
// cell marked.
func gapTable(r *Results) (string, error) {
	t := render.Table{
		Label: "tab:tls-gap",
		Caption: `Study~A, the published increases beside ours in every cell (stack, path, key-share mode): ` +
			`median $T_\mathrm{hs}$ of the cell's Ed25519 + X25519 baseline and the increase of each of the paper's configurations over it by round (median of the paired block-median differences), ms (\%). ` +
			`$\star$: the primary cell, closest to the original, on which the claims are judged.`,
		Align:  "lrrrr",
		Header: []string{"Cell", "Baseline (ms)", roleNames["pq-sig"], roleNames["pq-kem"], roleNames["hybrid"]},
	}
	pub := []string{"Published (OpenSSL 3.5.2, Docker)", `$\approx$` + render.Fixed(r.Published.BaselineMedianMs, 1)}
	for _, role := range Roles[1:] {
		p := r.Published.Increases[role]
		pub = append(pub, signed(p.IncreaseMs, 3)+" ("+render.Percent(p.IncreasePct/100, 0)+")")
	}
	t.Rows = append(t.Rows, pub)
	for _, c := range r.Gap.Cells {
		label := render.Escape(cellLabel(c.Cell))
		if c.Primary {
			label = `$\star$ ` + label
		}
		row := []string{label, render.Fixed(float64(c.MedianBaselineMs), 3)}
		for _, role := range Roles[1:] {
			row = append(row, increaseCell(c.role(role)))
		}
		t.Rows = append(t.Rows, row)
	}
	var notes []string
	for _, c := range r.Gap.Cells {
		if len(c.Missing) > 0 {
			notes = append(notes, render.Escape(cellLabel(c.Cell))+" lacks "+render.Escape(strings.Join(c.Missing, ", ")))
		}
	}
	n := fmt.Sprintf("%d cells; n per configuration: %s. Increases are round-level, within a cell; tests and intervals per cell as in Table~\\ref{tab:tls-paper}.", len(r.Gap.Cells), nRangeCells(r))
	if len(notes) > 0 {
		n += " " + strings.Join(notes, "; ") + "."
	}
	t.Notes = n
	return t.Latex()
}

// nRangeCells is "$n = 30$" or "$n = 500$ to $1000$" over every cell's
// paper configurations.
func nRangeCells(r *Results) string {
	lo, hi := math.MaxInt, 0
	for _, c := range r.Gap.Cells {
		for _, cmp := range c.Comparisons {
			lo, hi = min(lo, cmp.NTarget, cmp.NBaseline), max(hi, cmp.NTarget, cmp.NBaseline)
		}
	}
	switch {
	case hi == 0:
		return "none"
	case lo == hi:
		return fmt.Sprintf("$n = %d$", lo)
	}
	return fmt.Sprintf("$n = %d$ to $%d$", lo, hi)
}

// shortStackLabels name the stacks in the factors table, whose width must
// hold five factors' labels on a page.
var shortStackLabels = map[string]string{tlsdata.StackGo: "Go", tlsdata.StackOpenSSL: "harness", tlsdata.StackOpenSSLCLI: "CLI"}

// factorLabel is e.g. "Stack: Go $\to$ harness" or "Process: harness
// $\to$ CLI" (the table's note spells the labels out).
func factorLabel(f FactorResult) string {
	lv := func(s string) string { return render.Escape(cmp.Or(shortStackLabels[s], keyShareLabel(s))) }
	return render.Escape(factorNames[f.Factor]) + `: ` + lv(f.From) + ` $\to$ ` + lv(f.To)
}

// heldLabel names the levels of the columns the factor holds, e.g.
// "bridge, direct" for the stack and the process factors (both switch
// the stack column).
func heldLabel(factor string, c Cell) string {
	col := ""
	for _, f := range Factors {
		if f.Name == factor {
			col = f.column
		}
	}
	var parts []string
	if col != "stack" {
		parts = append(parts, shortStackLabels[c.Stack])
	}
	if col != "path" {
		parts = append(parts, c.Path)
	}
	if col != "keyshare" {
		parts = append(parts, keyShareLabel(c.KeyShare))
	}
	return render.Escape(strings.Join(parts, ", "))
}

// factorsTable renders the factors' effects (factorEffectsTable) and,
// after them in the same file, the host and socket account (hostTable,
// label tab:tls-host): the host is the factor a run cannot switch, so its
// account sits beside the factors that can be switched.
func factorsTable(r *Results) (string, error) {
	a, err := factorEffectsTable(r)
	if err != nil {
		return "", err
	}
	b, err := hostTable(r)
	if err != nil {
		return "", err
	}
	return a + b, nil
}

// factorEffectsTable: one row per factor and held levels, per role the
// change of the increase with its interval and how much closer to the
// published increase it moves ours.
func factorEffectsTable(r *Results) (string, error) {
	t := render.Table{
		Label: "tab:tls-factors",
		Caption: `Study~A, what each factor does to the increases: switching one factor with the others held, the change of each configuration's increase over its cell's baseline ` +
			`(ms, with the 95\,\% cluster-bootstrap interval over the rounds both cells share; $^{*}$: Holm-adjusted $p < 0.05$ of the Wilcoxon signed-rank test of the per-round changes, over all ` + fmt.Sprint(countEffects(r)) + ` changes) ` +
			`and the share of the distance to the published increase that the switch closes (negative: it moves ours away). $\star$: the factor's primary pair, the one nearest the primary cell (fewest factors changed), which the text quotes. ` +
			`Go: Go's crypto/tls; harness: OpenSSL with our long-lived server and client; CLI: OpenSSL's s\_server and one s\_client process per connection.`,
		Align:  "llrrrrrr",
		Header: []string{"Factor", "Held at", roleNames["pq-sig"], `closed`, roleNames["pq-kem"], `closed`, roleNames["hybrid"], `closed`},
	}
	for _, f := range r.Gap.Factors {
		if len(f.Effects) == 0 {
			t.Rows = append(t.Rows, []string{factorLabel(f), render.Escape(f.Note), "", "", "", "", "", ""})
			continue
		}
		for i := 0; i+len(Roles)-1 <= len(f.Effects); i += len(Roles) - 1 {
			e0 := f.Effects[i]
			held := heldLabel(f.Factor, e0.From)
			if e0.Primary {
				held = `$\star$ ` + held
			}
			row := []string{factorLabel(f), held}
			for _, e := range f.Effects[i : i+len(Roles)-1] {
				star := ""
				if float64(e.PHolm) < 0.05 {
					star = `$^{*}$`
				}
				row = append(row, fmt.Sprintf("%s%s %s", signed(float64(e.ChangeMs), 3), star, ciCell(e.Lower, e.Upper, 3)),
					render.Percent(float64(e.ClosedPct)/100, 0))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	t.Notes = missingPairs(r) + `The change is the To cell's round-level increase minus the From cell's; ` +
		`closed $= (|P - \Delta_\mathrm{from}| - |P - \Delta_\mathrm{to}|)/|P - \Delta_\mathrm{from}|$ with $P$ the published increase. ` +
		fmt.Sprintf(`$n_\mathrm{eff}$ = %s rounds per change.`, effectNEff(r)) + effectNotes(r)
	return t.Latex()
}

// missingPairs names, per factor, the pairs the run lacks (the cells are
// not fully crossed), as a sentence or "".
func missingPairs(r *Results) string {
	var parts []string
	for _, f := range r.Gap.Factors {
		if len(f.Missing) > 0 {
			parts = append(parts, render.Escape(factorNames[f.Factor]+": "+strings.Join(f.Missing, "; ")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Pairs not in the run (the design's cells are not fully crossed, or the runner left a path out: meta.json notes): " + strings.Join(parts, ". ") + ". "
}

// effectNEff is "20" or "3 to 20" over all factor effects.
func effectNEff(r *Results) string {
	lo, hi := math.MaxInt, 0
	for _, f := range r.Gap.Factors {
		for _, e := range f.Effects {
			lo, hi = min(lo, e.NEff), max(hi, e.NEff)
		}
	}
	switch {
	case hi == 0:
		return "0"
	case lo == hi:
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// effectNotes says why factor effects have no interval.
func effectNotes(r *Results) string {
	var notes []string
	for _, f := range r.Gap.Factors {
		for _, e := range f.Effects {
			if e.Note != "" {
				notes = append(notes, render.Escape(e.Note))
			}
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return " ``---'': " + strings.Join(dedupe(notes), "; ") + "."
}

func countEffects(r *Results) int {
	n := 0
	for _, f := range r.Gap.Factors {
		n += len(f.Effects)
	}
	return n
}

var factorNames = map[string]string{"stack": "Stack", "process": "Process", "path": "Path", "runtime": "Runtime", "keyshare": "Key share"}

// factorMacro is the macro-name part of a factor.
var factorMacro = map[string]string{"stack": "Stack", "process": "Process", "path": "Path", "runtime": "Runtime", "keyshare": "Keyshare"}

// primaryNote is the paper's sentence on the judged cell.
func primaryNote(c PrimaryChoice) string {
	switch c.Status {
	case PrimaryStated:
		return "The claims are judged on the primary cell, " + cellLabel(c.Cell) + ", chosen before the run as the cell closest to the original's description."
	case PrimaryFallback:
		return "This run lacks the primary cell, " + cellLabel(c.Cell) + " (no Docker on its host: the runner left the docker cells out and says so in meta.json); the claims are judged on the fallback stated before the run, " + cellLabel(c.Judged) + "."
	}
	fb := " (and no fallback is stated)"
	if c.Fallback != nil {
		fb = " nor the fallback " + cellLabel(*c.Fallback)
	}
	return "Primary cell not in this run: it has neither " + cellLabel(c.Cell) + fb + "; the tables describe the nearest cell it has, " + cellLabel(c.Judged) + ", and the claims are not judged."
}

// gapNumbers sets the gap analysis's macros: per factor and role the
// primary pair's change (\TlsGapStackHybridChangeMs and Low, High,
// Toward, Closed, HolmP, From, To), "---" when the run has no such pair
// (\TlsGapStackNote says why); per role the primary cell's remaining gap
// to the published increase and the cell whose increase is closest.
func gapNumbers(r *Results, set func(name, v string)) {
	// The judged cell (the stand-in when the run lacks the primary cell
	// and its fallback: its remaining gaps describe, not judge).
	primary := r.Gap.Cells[0]
	for _, c := range r.Gap.Cells {
		if c.Cell == r.Primary.Judged {
			primary = c
		}
	}
	set("PrimaryCell", render.Escape(cellLabel(r.Primary.Judged)))
	set("PrimaryCellStated", render.Escape(cellLabel(r.Primary.Cell)))
	set("PrimaryCellStatus", r.Primary.Status)
	set("PrimaryCellNote", render.Escape(primaryNote(r.Primary)))
	set("GapCells", fmt.Sprint(len(r.Gap.Cells)))
	set("GapEffects", fmt.Sprint(countEffects(r)))
	set("GapN", nRangeCells(r))
	for _, fd := range Factors {
		// Results of an analysis before a factor existed lack it: its
		// macros say so, so that the paper builds on them.
		f := FactorResult{Factor: fd.Name, From: fd.From, To: fd.To, Note: "not in these results (an analysis before the " + fd.Name + " factor)"}
		for _, g := range r.Gap.Factors {
			if g.Factor == fd.Name {
				f = g
			}
		}
		fm := factorMacro[f.Factor]
		set("Gap"+fm+"Note", render.Escape(cmp.Or(f.Note, "measured")))
		set("Gap"+fm+"Levels", fmt.Sprint(len(f.Levels)))
		set("Gap"+fm+"Pairs", fmt.Sprint(len(f.Effects)/(len(Roles)-1)))
		held := "---"
		for _, e := range f.Effects {
			if e.Primary {
				held = heldLabel(f.Factor, e.From)
			}
		}
		set("Gap"+fm+"Held", held)
		// The baseline's median in the primary pair's two cells: what the
		// factor does to the published baseline (the increases are the
		// per-role macros below).
		bFrom, bTo, bChange := "---", "---", "---"
		for _, e := range f.Effects {
			if !e.Primary {
				continue
			}
			var a, b *CellResult
			for i := range r.Gap.Cells {
				switch r.Gap.Cells[i].Cell {
				case e.From:
					a = &r.Gap.Cells[i]
				case e.To:
					b = &r.Gap.Cells[i]
				}
			}
			if a != nil && b != nil {
				bFrom, bTo = render.Fixed(float64(a.MedianBaselineMs), 3), render.Fixed(float64(b.MedianBaselineMs), 3)
				bChange = signed(float64(b.MedianBaselineMs)-float64(a.MedianBaselineMs), 3)
			}
			break
		}
		set("Gap"+fm+"BaselineFromMs", bFrom)
		set("Gap"+fm+"BaselineToMs", bTo)
		set("Gap"+fm+"BaselineChangeMs", bChange)
		for _, role := range Roles[1:] {
			m := "Gap" + fm + roleMacro[role]
			var e *FactorEffect
			for i := range f.Effects {
				if f.Effects[i].Primary && f.Effects[i].Role == role {
					e = &f.Effects[i]
				}
			}
			if e == nil {
				for _, k := range []string{"ChangeMs", "LowMs", "HighMs", "TowardMs", "ClosedPct", "HolmP", "FromMs", "ToMs"} {
					set(m+k, "---")
				}
				continue
			}
			set(m+"ChangeMs", signed(float64(e.ChangeMs), 3))
			set(m+"LowMs", signed(float64(e.Lower), 3))
			set(m+"HighMs", signed(float64(e.Upper), 3))
			set(m+"TowardMs", signed(float64(e.TowardMs), 3))
			set(m+"ClosedPct", render.Percent(float64(e.ClosedPct)/100, 0))
			set(m+"HolmP", pValue(float64(e.PHolm)))
			set(m+"FromMs", signed(float64(e.FromIncreaseMs), 3))
			set(m+"ToMs", signed(float64(e.ToIncreaseMs), 3))
		}
	}
	for _, role := range Roles[1:] {
		m := "Gap" + roleMacro[role]
		pub := r.Published.Increases[role]
		c := primary.role(role)
		if c == nil {
			set(m+"RemainingMs", "---")
			set(m+"ExplainedPct", "---")
		} else {
			set(m+"RemainingMs", signed(pub.IncreaseMs-float64(c.Rounds.IncreaseMs), 3))
			set(m+"ExplainedPct", render.Fixed(100*float64(c.Rounds.IncreaseMs)/pub.IncreaseMs, 0)+`\,\%`)
		}
		best, bestD := (*CellResult)(nil), math.Inf(1)
		for i := range r.Gap.Cells {
			if c := r.Gap.Cells[i].role(role); c != nil {
				if d := math.Abs(pub.IncreaseMs - float64(c.Rounds.IncreaseMs)); d < bestD {
					best, bestD = &r.Gap.Cells[i], d
				}
			}
		}
		if best == nil {
			set(m+"ClosestCell", "---")
			set(m+"ClosestMs", "---")
			continue
		}
		set(m+"ClosestCell", render.Escape(cellLabel(best.Cell)))
		set(m+"ClosestMs", signed(float64(best.role(role).Rounds.IncreaseMs), 3))
	}
}
