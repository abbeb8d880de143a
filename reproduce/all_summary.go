package reproduce

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/claims"
)

// A claimRow is one line of the summary table.
type claimRow struct {
	claims.Evaluated // the reference run's evaluation
	now              claims.Evaluated
	refNote, nowNote string // why a side is absent ("" when present)
	comparison       string
	status           agreement.Status
	hostDependent    bool
}

// A summary is what All found.
type summary struct {
	profile string
	plans   []studyPlan
	claims  []claimRow
	items   *agreement.Report
	hosts   map[string]hostPair // by study, for the studies compared
	took    time.Duration       // wall time of the whole command
	// crossHost are, by study, the lines of its normalised items judged
	// across hosts (crosshost.go) when the host differs from the
	// reference's; crossOutside counts the items outside their interval.
	crossHost    map[string][]string
	crossOutside int
	// crossItems are, by study and by the judged item each normalises,
	// the new run's cross-host verdicts (the claims' flips use them).
	crossItems map[string]map[string]agreement.CrossVerdict
}

// summarize compares the plans' reference and new results. It compares
// every study's items (compareStudy, judged together by agreement.Judge:
// one Holm family), the normalised items of a study on an unlike host
// (crossHostJudge, with its scratch trees under crossDir) and every
// claim's verdict (agreement.CompareClaim). A study whose results cannot
// be compared gives one item that says why.
//
// The claims are evaluated before the items are judged: a
// host-independent claim whose verdict changed on an unlike host, with no
// cross-host prediction of its item, has its item judged on the item's
// host-free scale as a member of the family (standIns), so that the
// flips and the items share one family-wise error rate.
func summarize(ctx context.Context, cfg Config, tree string, plans []studyPlan, crossDir string) *summary {
	profile := cfg.Profile
	sum := &summary{profile: profile, plans: plans, hosts: map[string]hostPair{}}
	ref, now := map[string][]byte{}, map[string][]byte{}
	refMissing, nowMissing := map[string]string{}, map[string]string{}
	byStudy := map[string]*studyPlan{}
	var compared []agreement.Study
	for i := range plans {
		p := &plans[i]
		byStudy[p.s.Name] = p
		if p.refResults != nil {
			ref[p.s.Name] = p.refResults
		} else {
			refMissing[p.s.Name] = "no " + profile + " reference run"
		}
		switch {
		case p.newResults != nil:
			now[p.s.Name] = p.newResults
		case p.failed != nil:
			nowMissing[p.s.Name] = "the run failed: " + p.failed.Error()
		default:
			nowMissing[p.s.Name] = "not re-run here: " + p.skip
		}
		if p.refResults != nil && p.newResults != nil {
			hosts := compareHosts(cfg.Root, p.ref, tree, p.newRun)
			sum.hosts[p.s.Name] = hosts
			as, err := compareStudy(p.s, p.refResults, p.newResults, profile, hosts)
			if err != nil {
				// The results cannot be read as the study's: one item
				// that says so (agreement.Item.Error), inconsistent.
				as.Items = []agreement.Item{{Name: "results", Error: err.Error()}}
			}
			p.between.Apply(as.Items)
			compared = append(compared, as)
		}
	}
	crossHostJudge(ctx, cfg, sum, crossDir)
	a, b := evaluateClaims(cfg.Catalogues, ref, refMissing), evaluateClaims(cfg.Catalogues, now, nowMissing)
	var judged []claimJudgement
	sum.items, judged = verdictLine(cfg.Catalogues, compared, a, b, sum.hosts, sum.crossItems)
	for i, c := range a {
		row := claimRow{Evaluated: c, now: b[i], refNote: refMissing[c.Study], nowNote: nowMissing[c.Study], status: agreement.NotJudged, hostDependent: judged[i].hostDependent}
		switch {
		case byStudy[c.Study] == nil:
			row.comparison = "not compared: the study is not reproduced here"
			row.refNote, row.nowNote = "no analysis", "no analysis"
		case row.nowNote != "":
			row.comparison = "not compared: " + row.nowNote
		case row.refNote != "":
			row.comparison = "not compared: " + row.refNote + " (never compared with another profile)"
		default:
			row.status, row.comparison = judged[i].status, judged[i].comparison
		}
		sum.claims = append(sum.claims, row)
	}
	return sum
}

// evaluateClaims evaluates every study's claims (cats) on the results
// files, by study name; missing says why a study has none.
func evaluateClaims(cats []claims.Catalogue, files map[string][]byte, missing map[string]string) []claims.Evaluated {
	r, err := claims.NewResults(files, missing)
	if err != nil {
		r, _ = claims.NewResults(nil, missing)
	}
	return claims.Run(r, claims.All(cats)).Claims
}

// A claimJudgement is one claim's comparison between two runs.
type claimJudgement struct {
	status        agreement.Status
	comparison    string
	hostDependent bool
}

// verdictLine is `all`'s whole verdict on compared studies. It holds their
// items in one Holm family and each claim's two verdicts (a, the reference's,
// and b, the new run's, in the same order) by agreement.CompareClaim, with the
// hosts of each study's runs and the new runs' cross-host verdicts by study
// and item. Before the items are judged, the item of every host-independent
// claim that flipped on an unlike host without a cross-host verdict is marked
// to be judged on its host-free scale (standIns), so that such flips share the
// items' family-wise error rate. summarize and the calibration of claim flips
// (flipcal.go) both use it; cats are the registered studies' claims.
func verdictLine(cats []claims.Catalogue, compared []agreement.Study, a, b []claims.Evaluated, hosts map[string]hostPair, cross map[string]map[string]agreement.CrossVerdict) (*agreement.Report, []claimJudgement) {
	stated := map[string]claims.Claim{}
	for _, c := range claims.All(cats) {
		stated[c.ID] = c
	}
	standIns(compared, a, b, stated, hosts, cross)
	rep := agreement.Judge(agreement.DefaultRule, compared...)
	out := make([]claimJudgement, len(a))
	for i, c := range a {
		st := stated[c.ID]
		out[i] = claimJudgement{status: agreement.NotJudged, hostDependent: st.HostDependent}
		h, ok := hosts[c.Study]
		if !ok {
			continue
		}
		class := agreement.HostIndependent
		if st.HostDependent {
			class = agreement.HostDependent
		}
		v := agreement.ClaimVerdicts{Ref: string(c.Verdict), New: string(b[i].Verdict), Class: class, Item: reportItem(rep, c.Study, st.Item)}
		if cv, ok := cross[c.Study][st.Item]; ok && st.Item != "" {
			v.CrossHost = &cv
		}
		// A run without a fingerprint is not known to be on another
		// host: a flip of its host-independent claims is judged as on one
		// host (strictly), never by the unlike-host rule.
		out[i].status, out[i].comparison = agreement.CompareClaim(v, h.match || (h.unknown && !st.HostDependent))
		if out[i].status == agreement.NotJudged && st.HostDependent {
			out[i].comparison = "not compared: a host-dependent claim, and the host differs"
		}
	}
	return rep, out
}

// standIns marks items for judging on their host-free scale
// (agreement.Item.StandIn). It marks the item of every host-independent claim
// whose verdict changed between runs on unlike hosts and whose item has no
// cross-host verdict: the estimate, not the test's outcome, then decides
// whether the flip is real. a and b are the claims as the reference and the
// new run evaluate them, in the same order.
func standIns(compared []agreement.Study, a, b []claims.Evaluated, stated map[string]claims.Claim, hosts map[string]hostPair, cross map[string]map[string]agreement.CrossVerdict) {
	want := map[string]map[string]bool{}
	for i, c := range a {
		st := stated[c.ID]
		h, compared := hosts[c.Study]
		_, hasCross := cross[c.Study][st.Item]
		if !compared || h.match || h.unknown || st.HostDependent || st.Item == "" || hasCross || c.Verdict == b[i].Verdict {
			continue
		}
		if want[c.Study] == nil {
			want[c.Study] = map[string]bool{}
		}
		want[c.Study][st.Item] = true
	}
	for _, s := range compared {
		for i := range s.Items {
			if want[s.Name][s.Items[i].Name] {
				s.Items[i].StandIn = true
			}
		}
	}
}

// reportItem is the judged item of that study and name, or nil.
func reportItem(rep *agreement.Report, study, name string) *agreement.Judged {
	if name == "" {
		return nil
	}
	for i := range rep.Items {
		if j := &rep.Items[i]; j.Study == study && j.Name == name {
			return j
		}
	}
	return nil
}

// differs reports whether any claim's verdict differs or any judged item
// is inconsistent.
func (s *summary) differs() bool {
	for _, c := range s.claims {
		if c.status == agreement.Inconsistent && !c.Derived() {
			return true
		}
	}
	return s.items.Inconsistent() || s.crossOutside > 0
}

// cell is one side of a claim in the table.
func cell(e claims.Evaluated, note string) (string, string) {
	if note != "" {
		return "-", "(" + note + ")"
	}
	return e.Ours, string(e.Verdict)
}

// text renders the end of All's output: the studies, the hosts, the
// items, the claims table, the paper and one overall line.
func (s *summary) text(cfg Config, target, final, pdf, paperWhy string) string {
	var b strings.Builder
	rel := func(p string) string {
		if r, err := filepath.Rel(cfg.Root, p); err == nil {
			return r
		}
		return p
	}
	fmt.Fprintf(&b, "\n%s: %s profile, reproduction tree %s\n", target, s.profile, rel(final))
	var rerun, skipped, failed []string
	for _, p := range s.plans {
		ref := "no " + s.profile + " reference run"
		if p.ref != "" {
			ref = "reference " + p.ref
			if p.committed {
				ref += " (the committed results/" + p.s.Name + ".json)"
			} else {
				ref += " (analysed in " + rel(filepath.Join(final, ".reference")) + ")"
			}
			if p.hostWhy != "" {
				ref += ", the reference of this host: " + p.hostWhy
			}
		}
		switch {
		case p.failed != nil:
			failed = append(failed, p.s.Name)
			fmt.Fprintf(&b, "  %-5s FAILED after %v: %v; %s\n", p.s.Name, p.took.Round(time.Second), p.failed, ref)
		case p.newRun != "":
			rerun = append(rerun, fmt.Sprintf("%s %v", p.s.Name, p.took.Round(time.Second)))
			fmt.Fprintf(&b, "  %-5s new run %s in %v; %s\n", p.s.Name, p.newRun, p.took.Round(time.Second), ref)
		default:
			skipped = append(skipped, p.s.Name)
			fmt.Fprintf(&b, "  %-5s not re-run here: %s; %s\n", p.s.Name, p.skip, ref)
		}
		if h, ok := s.hosts[p.s.Name]; ok {
			switch {
			case h.match && h.note != "":
				fmt.Fprintf(&b, "  %-5s host: the same as the reference run's where both record it (its times are judged); %s\n", p.s.Name, h.note)
			case h.match:
				fmt.Fprintf(&b, "  %-5s host: the same as the reference run's (its times are judged)\n", p.s.Name)
			case !s.hasHostDependent(p.s.Name):
				fmt.Fprintf(&b, "  %-5s host differs from the reference run's: %s (no item of this study depends on the host: all are judged)\n", p.s.Name, h.note)
			default:
				fmt.Fprintf(&b, "  %-5s host differs from the reference run's: %s (its times are shown with their ratio, not judged)\n", p.s.Name, h.note)
			}
			fmt.Fprintf(&b, "  %-5s %s\n", p.s.Name, p.between)
			for _, l := range s.crossHost[p.s.Name] {
				b.WriteString(l + "\n")
			}
		}
	}
	if len(s.items.Items) > 0 {
		b.WriteString(s.items.Table())
	}
	b.WriteString("\n")
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "claim\tstudy\tpublished\treference run (%s)\tverdict\tthis run (%s)\tverdict\tcomparison\n", s.profile, s.profile)
	same, edge, diff, notCompared, derived := 0, 0, 0, 0, 0
	for _, c := range s.claims {
		ro, rv := cell(c.Evaluated, c.refNote)
		no, nv := cell(c.now, c.nowNote)
		id := c.ID
		if c.hostDependent {
			id += " [host-dependent]"
		}
		if c.Derived() {
			id += " (derived)"
			derived++
		} else {
			switch {
			case c.status == agreement.Consistent && c.Verdict == c.now.Verdict:
				same++
			case c.status == agreement.Consistent:
				edge++
			case c.status == agreement.Inconsistent:
				diff++
			default:
				notCompared++
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", id, c.Study, c.Published, ro, rv, no, nv, c.comparison)
	}
	w.Flush()
	if pdf != "" {
		fmt.Fprintf(&b, "paper built from the new runs: %s\n", rel(pdf))
	} else {
		fmt.Fprintf(&b, "paper: not built: %s\n", paperWhy)
	}
	counts := s.items.Counts()
	verdict := "REPRODUCED"
	switch {
	case s.differs():
		verdict = "NOT REPRODUCED"
	case len(failed) > 0:
		// A study whose run or analysis failed was not compared at all:
		// the command exits non-zero, and its line must not say
		// "REPRODUCED" of a study it could not judge.
		verdict = "INCOMPLETE"
	case len(rerun) == 0:
		verdict = "NOTHING RE-RUN"
	case len(skipped) > 0 || notCompared > 0 || counts.Judged < counts.Items:
		verdict = "REPRODUCED WHERE COMPARED"
	}
	across := ""
	if n := len(s.crossHost); n > 0 {
		across = fmt.Sprintf("; across hosts: %d item(s) outside their interval", s.crossOutside)
	}
	fmt.Fprintf(&b, "%s: %s: re-run %s; skipped %s; failed %s; claims: %d same verdict, %d differ, %d not compared, %d consistent at the edge (%d derived, not counted); study items: %s%s (all in %s); %v in all\n",
		target, verdict, listOrNone(rerun), listOrNone(skipped), listOrNone(failed), same, diff, notCompared, edge, derived,
		counts, across, rel(filepath.Join(final, "SUMMARY.txt")), s.took.Round(time.Second))
	return b.String()
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// hasHostDependent reports whether any of study's items is
// host-dependent (Study C's are not: the emulator's cycles).
func (s *summary) hasHostDependent(study string) bool {
	if s.items == nil {
		return true
	}
	for _, it := range s.items.Items {
		if it.Study == study && it.Class == agreement.HostDependent {
			return true
		}
	}
	return false
}
