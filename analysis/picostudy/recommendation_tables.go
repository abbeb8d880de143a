package picostudy

import (
	"fmt"
	"slices"
	"strings"

	"pqrepro/analysis/stats"
	"pqrepro/datasets/picodata"
	"pqrepro/internal/render"
)

// deadlineWords name the deadlines in macros: \Pico<Scheme>Meets<Word>Pct.
var deadlineWords = map[float64]string{100: "HundredMs", 1000: "OneS", 10000: "TenS"}

// deadlineTable is the recommendation's table: each signature scheme's
// signing on the board and the share of signatures within each deadline,
// with its Wilson 95 % interval.
func deadlineTable(r *Results) (string, error) {
	rec := r.Recommendation
	t := render.Table{Label: "tab:pico-deadlines", Align: "lrrrrrrr",
		Caption: fmt.Sprintf("Signing against hard deadlines: ML-DSA and SPHINCS+ on the same board (ours; the original measured no SPHINCS+) (%s)", source(r)),
		Header:  []string{"Scheme", "$n$", "Mean (ms)", "p99 (ms)", "Max (ms)", "CV (\\%)", "Stack (KB)", "Flash (KB)"}}
	for _, d := range DeadlinesMs {
		t.Align += "r"
		t.Header = append(t.Header, "$\\le$ "+deadlineName(d))
	}
	t.Notes = "Deadline columns: share of the $n$ signatures that took at most the deadline, with its Wilson 95\\,\\% interval. " +
		"\\emph{const.}: every signature took the same cycles to within " + render.Fixed(ConstantTimeSpread*1e6, 0) + " parts per million " +
		"(no rejection loop), so the deadline is met always or never, whatever $n$. " +
		"Flash: text + rodata + data of the scheme's image. SPHINCS+ is round 3.1 -simple code (PQClean), which computes the hashes of FIPS 205 SLH-DSA and so costs what it costs."
	if r.Emulated {
		t.Notes += " Emulated: no bus contention or wait states are modelled."
	}
	if rec == nil {
		return "", fmt.Errorf("deadline table: the results have no signing comparison (no ML-DSA signing): rerun pico:analyze")
	}
	if len(rec.NotMeasured) > 0 {
		t.Notes += " Not in this run: " + render.Escape(strings.Join(rec.NotMeasured, ", ")) + "."
	}
	for _, row := range rec.Rows {
		cv := "---"
		if row.CV != nil {
			cv = render.Fixed(100**row.CV, 1)
		}
		cells := []string{render.Escape(displayName(row.Scheme)), fmt.Sprint(row.N), ms(&row.MeanMs), ms(&row.P99Ms), ms(&row.MaxMs),
			cv, kb(row.StackBytes), kb(row.ImageFlashBytes)}
		for _, m := range row.Deadlines {
			cells = append(cells, meetingCell(row, m))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t.Latex()
}

// meetingCell writes a share of signatures within a deadline.
func meetingCell(row SignRow, m Meeting) string {
	if row.Constant {
		return fmt.Sprintf("%s (const.)", render.Fixed(m.Share, 0))
	}
	return fmt.Sprintf("%s [%s, %s]", render.Fixed(m.Share, 2), render.Fixed(m.Lo, 2), render.Fixed(m.Hi, 2))
}

// recommendationNumbers sets the macros the recommendation's subsection
// quotes. Every one is defined for every scheme, "---" when the run does
// not have it (the quick profile leaves the slow sets out), so the paper
// builds from any run.
func recommendationNumbers(r *Results, set func(name, v string)) {
	rec := r.Recommendation
	for _, s := range slices.Concat(picodata.DSASchemes, picodata.SPHINCSSchemes) {
		w := macroWord(s)
		row, ok := rowOf(rec, s)
		for _, d := range DeadlinesMs {
			dw := deadlineWords[d]
			if !ok {
				set(w+"Meets"+dw+"Pct", "---")
				set(w+"Meets"+dw+"LoPct", "---")
				set(w+"Meets"+dw+"HiPct", "---")
				continue
			}
			for _, m := range row.Deadlines {
				if m.DeadlineMs == d {
					set(w+"Meets"+dw+"Pct", render.Fixed(100*m.Share, 0))
					set(w+"Meets"+dw+"LoPct", render.Fixed(100*m.Lo, 1))
					set(w+"Meets"+dw+"HiPct", render.Fixed(100*m.Hi, 1))
				}
			}
		}
		if !slices.Contains(picodata.SPHINCSSchemes, s) {
			continue
		}
		if !ok {
			for _, k := range []string{"SignMeanS", "SignN", "SignSpreadCycles", "SignMegaCycles", "VerifyMeanMs", "KeygenMeanMs", "SignStackKB", "ImageFlashKB", "SignEnergyMJ"} {
				set(w+k, "---")
			}
			continue
		}
		// The scheme's other macros (SignN, VerifyMeanMs, SignStackKB,
		// ImageFlashKB, SignEnergyMJ, ...) come from numbers' loop over
		// the run's schemes.
		o := r.Schemes[s].Ops["sign"]
		set(w+"SignMeanS", render.Fixed(row.MeanMs/1000, 2))
		set(w+"SignSpreadCycles", thousands(float64(*o.MaxCycles-*o.MinCycles)))
		set(w+"SignMegaCycles", thousands(deref(o.MeanCycles)/1e6))
	}
	fastest, slow, meets := "---", "---", "none"
	if rec != nil {
		if rec.Findings.FastestSPHINCS != "" {
			fastest = render.Escape(displayName(rec.Findings.FastestSPHINCS))
		}
		if rec.Findings.SlowdownVsMLDSA44 != nil {
			slow = render.Fixed(*rec.Findings.SlowdownVsMLDSA44, 0)
		}
		if rec.Findings.SPHINCSMeetsMs > 0 {
			meets = deadlineName(rec.Findings.SPHINCSMeetsMs)
		}
	}
	// The most a run of ML-DSA-44's n signatures with no miss can rule
	// out: the Wilson upper bound of 0 of n.
	bound := "---"
	if sc := r.Schemes["ml-dsa-44"]; sc != nil && sc.Ops["sign"] != nil {
		_, hi := stats.Wilson(0, sc.Ops["sign"].N)
		bound = render.Fixed(100*hi, 1)
	}
	set("RecNoMissBoundPct", bound)
	set("RecFastestSphincs", fastest)
	set("RecFastestSphincsSlowdown", slow)
	set("RecSphincsMeets", meets)
}
