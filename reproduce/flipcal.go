package reproduce

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/claims"
	"pqrepro/analysis/stats"
)

// A flipCount counts pairs of runs judged by `all`'s whole verdict line.
// It counts those judged, those that ended NOT REPRODUCED with nothing changed
// (false alarms), and with a known change planted in the new run (power).
type flipCount struct {
	pairs, alarms   int
	planted, caught int
	// held counts the pairs with nothing changed in which a counted
	// claim's verdict flipped on unlike hosts and the unlike-host rule
	// did not call it VERDICT DIFFERS, where the rule before it would
	// have (its item not judged, or judged only on its host-free scale).
	held             int
	firstAlarmReason string
}

func (c *flipCount) add(o flipCount) {
	c.pairs += o.pairs
	c.alarms += o.alarms
	c.planted += o.planted
	c.caught += o.caught
	c.held += o.held
	if c.firstAlarmReason == "" {
		c.firstAlarmReason = o.firstAlarmReason
	}
}

// A flipCalibration is a study's whole verdict line measured on pairs of its
// committed quiet runs of one design. The line holds its items in one Holm
// family and its claims by agreement.CompareClaim, flips included; every run
// is judged as the new run against every other as the reference.
type flipCalibration struct {
	study, plant string
	runs         int
	within       flipCount            // pairs on one host
	across       flipCount            // pairs on unlike hosts
	byHost       map[string]flipCount // across, by the new run's host
	left         []string             // why runs or pairs were left out
}

// calibrateFlips judges every ordered pair of runs of one design (sameDesign)
// as `all` judges a new run against its reference. It judges the items and
// claims together (verdictLine), with the unlike-host rule for a flipped claim
// and, on unlike hosts, the new run's normalised items against a cross-host
// fit that leaves its host out (the held-out host is never in its own
// prediction). Where the study plants a known change (Study.Plant) each pair
// is judged again with it in the new run. As in `all`, the items carry the
// between-run variance of the reference's comparable runs (its design and
// host, the reference included, the new run not: betweenOf).
func calibrateFlips(s Study, profile string, cats []claims.Catalogue, runs []analysedRun) flipCalibration {
	fc := flipCalibration{study: s.Name, plant: s.PlantName, runs: len(runs), byHost: map[string]flipCount{}}
	// Each run's claims, normalised items and items compared with
	// themselves are derived once, not once per pair.
	sides, planted := map[string]*runSide{}, map[string]*runSide{}
	normalised := map[string][]agreement.Normalised{}
	self := map[string][]agreement.Item{}
	for _, r := range runs {
		side, err := newRunSide(s, cats, r.id, r.results)
		if err != nil {
			fc.left = append(fc.left, r.id+": not normalised: "+err.Error())
		}
		sides[r.id], normalised[r.id] = side, side.normalised
		if as, _, err := selfCompare(s, r.results, profile); err == nil {
			self[r.id] = as.Items
		}
		if s.Plant == nil {
			continue
		}
		b, err := s.Plant(r.results)
		if err != nil {
			fc.left = append(fc.left, r.id+": no planted change: "+err.Error())
			continue
		}
		planted[r.id], _ = newRunSide(s, cats, r.id+" (planted)", b)
	}
	itemOf := map[string]string{}
	for _, c := range claims.All(cats) {
		itemOf[c.ID] = c.Item
	}
	for _, now := range runs {
		for _, ref := range runs {
			if ref.id == now.id || !ref.info.sameDesign(now.info) {
				continue
			}
			p := pair{s: s, cats: cats, profile: profile, ref: sides[ref.id], now: now.info, runs: runs, normalised: normalised, itemOf: itemOf,
				hosts: hostPair{match: len(ref.info.host.Differences(now.info.host)) == 0}, between: betweenOf(s, ref, now, runs, self)}
			var c flipCount
			c.pairs = 1
			differs, why, held := p.differs(sides[now.id])
			if differs {
				c.alarms, c.firstAlarmReason = 1, fmt.Sprintf("%s against %s: %s", now.id, ref.id, why)
			}
			if held {
				c.held = 1
			}
			if pl := planted[now.id]; pl != nil {
				c.planted = 1
				if differs, _, _ := p.differs(pl); differs {
					c.caught = 1
				}
			}
			if p.hosts.match {
				fc.within.add(c)
				continue
			}
			fc.across.add(c)
			h := fc.byHost[now.info.host.HostKey()]
			h.add(c)
			fc.byHost[now.info.host.HostKey()] = h
		}
	}
	return fc
}

// A runSide is what one run's results give either side of a pair: the
// results, their claims as evaluated, and their normalised items.
type runSide struct {
	results    []byte
	claims     []claims.Evaluated
	normalised []agreement.Normalised
}

// newRunSide evaluates results' claims and normalises its items (an
// error, with the claims kept, when the results cannot be normalised).
func newRunSide(s Study, cats []claims.Catalogue, name string, results []byte) (*runSide, error) {
	side := &runSide{results: results, claims: evaluateClaims(cats, map[string][]byte{s.Name: results}, nil)}
	if s.Normalised == nil {
		return side, nil
	}
	ns, err := s.Normalised(name, results)
	side.normalised = ns
	return side, err
}

// A pair is a reference run and what is fixed about the run judged
// against it.
type pair struct {
	s          Study
	cats       []claims.Catalogue
	profile    string
	ref        *runSide
	now        runInfo
	runs       []analysedRun
	normalised map[string][]agreement.Normalised // by run ID
	itemOf     map[string]string                 // claim ID -> the item it rests on
	hosts      hostPair
	between    agreement.BetweenRun
}

// differs is `all`'s overall verdict on the pair with now as the new run.
// It says whether a judged item is inconsistent, a counted claim's verdict
// differs, or (on unlike hosts) a normalised item falls outside its
// leave-one-host-out interval; why names the first cause. held reports a
// counted claim that flipped on unlike hosts and was not called VERDICT
// DIFFERS where the rule before the unlike-host rule would have
// (flipCount.held).
func (p pair) differs(now *runSide) (differs bool, why string, held bool) {
	s := p.s
	as, err := compareStudy(s, p.ref.results, now.results, p.profile, p.hosts)
	if err != nil {
		return true, err.Error(), false
	}
	p.between.Apply(as.Items)
	cross := map[string]map[string]agreement.CrossVerdict{}
	outside := ""
	if !p.hosts.match && s.Normalised != nil {
		cross[s.Name], outside = leaveHostOut(p.now, now.normalised, p.runs, p.normalised)
	}
	a, b := p.ref.claims, now.claims
	rep, judged := verdictLine(p.cats, []agreement.Study{as}, a, b, map[string]hostPair{s.Name: p.hosts}, cross)
	for i, c := range a {
		if c.Study != s.Name || c.Derived() || p.hosts.match || c.Verdict == b[i].Verdict || judged[i].status == agreement.Inconsistent {
			continue
		}
		if it := reportItem(rep, s.Name, p.itemOf[c.ID]); it == nil || it.Status == agreement.NotJudged || it.OnHostFree {
			held = true
		}
	}
	for _, j := range rep.Items {
		if j.Status == agreement.Inconsistent {
			return true, "item " + j.Name + ": " + j.Why, held
		}
	}
	for i, c := range a {
		if c.Study == s.Name && !c.Derived() && judged[i].status == agreement.Inconsistent {
			return true, "claim " + c.ID + ": " + judged[i].comparison, held
		}
	}
	if outside != "" {
		return true, outside, held
	}
	return false, "", held
}

// betweenOf is the between-run variance `all` would apply to a pair. It is
// estimated from the runs of the reference's design on the reference's host
// (its own included), the new run left out; self holds each run's items
// compared with themselves.
func betweenOf(s Study, ref, now analysedRun, runs []analysedRun, self map[string][]agreement.Item) agreement.BetweenRun {
	var ids []string
	var items [][]agreement.Item
	for _, r := range runs {
		if r.id == now.id || !r.info.sameDesign(ref.info) || len(r.info.host.Differences(ref.info.host)) > 0 || self[r.id] == nil {
			continue
		}
		ids, items = append(ids, r.id), append(items, self[r.id])
	}
	return agreement.BetweenScaled(ids, items, s.BetweenScale)
}

// leaveHostOut judges the new run's normalised items ns against the
// cross-host fit of every other host's runs. It returns the verdicts by
// the item each normalises and the first item outside its interval ("" if
// none).
func leaveHostOut(now runInfo, ns []agreement.Normalised, runs []analysedRun, normalised map[string][]agreement.Normalised) (map[string]agreement.CrossVerdict, string) {
	verdicts := map[string]agreement.CrossVerdict{}
	host := now.host.HostKey()
	outside := ""
	for _, n := range ns {
		if n.NotJudged != "" {
			continue
		}
		var values []agreement.HostValue
		for _, r := range runs {
			if r.info.host.HostKey() == host {
				continue
			}
			for _, m := range normalised[r.id] {
				if m.Name == n.Name && m.NotJudged == "" {
					values = append(values, agreement.HostValue{Host: r.info.host.HostKey(), Run: r.id, Ratio: m.Ratio})
				}
			}
		}
		fit, err := agreement.FitCrossHost(values, CrossHostLevel)
		if err != nil {
			continue
		}
		v := agreement.CrossVerdict{Ratio: n.Ratio, Lo: fit.Lo, Hi: fit.Hi, Hosts: fit.Hosts}
		if n.Item != "" {
			verdicts[n.Item] = v
		}
		if !v.Inside() && outside == "" {
			outside = fmt.Sprintf("across hosts, %s: %.2f outside [%.2f, %.2f]", n.Name, n.Ratio, fit.Lo, fit.Hi)
		}
	}
	return verdicts, outside
}

// FlipAlarmGoal is the largest false-alarm rate, per pair, that the whole
// verdict line may have on a host left out (issue 46's goal).
const FlipAlarmGoal = 0.05

// report is the calibration's block. It gives the rates on unlike hosts (by
// the new run's host) and on one host, each with its Wilson 95 % interval.
func (fc flipCalibration) report() string {
	var b strings.Builder
	rate := func(what string, c flipCount) string {
		if c.pairs == 0 {
			return what + ": no pair of runs of one design"
		}
		lo, hi := stats.Wilson(c.alarms, c.pairs)
		s := fmt.Sprintf("%s: false alarms %d of %d pairs (%.1f %%, Wilson 95 %% [%.1f, %.1f] %%)", what, c.alarms, c.pairs, 100*float64(c.alarms)/float64(c.pairs), 100*lo, 100*hi)
		if c.held > 0 {
			s += fmt.Sprintf(", and %d pair(s) with a flip held by the unlike-host rule that the rule before it called VERDICT DIFFERS", c.held)
		}
		if c.planted > 0 {
			plo, phi := stats.Wilson(c.caught, c.planted)
			s += fmt.Sprintf("; power against %s: %d of %d (%.0f %%, [%.0f, %.0f] %%)", fc.plant, c.caught, c.planted, 100*float64(c.caught)/float64(c.planted), 100*plo, 100*phi)
		}
		return s
	}
	fmt.Fprintf(&b, "  %-5s the whole verdict line (items and claims together, flips by the unlike-host rule), %d quiet run(s), every run judged against every other of its design, with the between-run variance `all` would apply:\n", fc.study, fc.runs)
	verdict := "met"
	if fc.across.pairs == 0 {
		verdict = "not measured: no pair on unlike hosts"
	} else if float64(fc.across.alarms) > FlipAlarmGoal*float64(fc.across.pairs) {
		verdict = "NOT met"
	}
	fmt.Fprintf(&b, "          %s (goal at most %.0f %%: %s)\n", rate("on unlike hosts, the new run's host left out of the cross-host fit", fc.across), 100*FlipAlarmGoal, verdict)
	for _, h := range slices.Sorted(maps.Keys(fc.byHost)) {
		fmt.Fprintf(&b, "            %s\n", rate("new run on "+h, fc.byHost[h]))
	}
	fmt.Fprintf(&b, "          %s\n", rate("on one host", fc.within))
	for _, c := range []flipCount{fc.across, fc.within} {
		if c.firstAlarmReason != "" {
			fmt.Fprintf(&b, "          first alarm: %s\n", c.firstAlarmReason)
		}
	}
	if len(fc.left) > 0 {
		fmt.Fprintf(&b, "          left out%s\n", reasonCounts(fc.left))
	}
	return b.String()
}
