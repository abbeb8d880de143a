package reproduce

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"pqrepro/analysis/agreement"
)

// CrossHostLevel is the level of the cross-host prediction interval.
const CrossHostLevel = 0.95

// CrossHostSlower is the slowdown the cross-host calibration must see
// (issue 32's goal). A primitive 20 % slower inside the handshake but not
// in `openssl speed` raises an item's ratio by 0.2.
const CrossHostSlower = 0.2

// crossHostItem is one normalised item pooled over the quiet runs of
// every host the repository holds.
type crossHostItem struct {
	name    string
	values  []agreement.HostValue
	left    []string // runs whose item is not judged, and why
	fit     agreement.CrossHost
	fitErr  error
	holdout agreement.HostHoldout
}

// crossHost is a study's normalised items over every committed quiet
// run of the profile, on any host (Study.Normalised). It holds each item's fit,
// its leave-one-host-out false-alarm rate and its power.
type crossHost struct {
	runs  int      // runs read
	left  []string // runs left out, and why
	items []*crossHostItem
}

// An analysedRun is one committed quiet run of a study, analysed.
type analysedRun struct {
	id, run string // the run's ID and folder relative to the root
	info    runInfo
	results []byte // its results/<study>.json
}

// quietRuns analyses every committed run of s at cfg.Profile whose quiet check
// passed and that is sound, whatever its host and design. Each is analysed in
// a tree of its own under dir (removed afterwards); ref and refResults are the
// pinned run and its committed results, read instead of analysed again. left
// says, per run left out, why.
func quietRuns(ctx context.Context, cfg Config, s Study, ref string, refResults []byte, dir string) (runs []analysedRun, left []string) {
	defer os.RemoveAll(dir)
	folders, err := runFolders(cfg.Root, s.Name)
	if err != nil {
		return nil, []string{err.Error()}
	}
	sound := soundRun(cfg)
	for _, run := range folders {
		if ctx.Err() != nil {
			left = append(left, "stopped: "+ctx.Err().Error())
			break
		}
		id := path.Base(run)
		m, err := readRunInfo(cfg.Root, run)
		switch {
		case err != nil:
			left = append(left, id+": "+err.Error())
			continue
		case m.Profile != cfg.Profile:
			continue
		case m.Measured.Machine.Verdict != "quiet":
			left = append(left, id+": its quiet check did not pass ("+cmp.Or(m.Measured.Machine.Verdict, "not recorded")+")")
			continue
		}
		if err := sound(run); err != nil {
			left = append(left, id+": not sound evidence: "+err.Error())
			continue
		}
		b := refResults
		if run != ref || b == nil {
			if b, err = analyseRun(ctx, cfg, s, run, filepath.Join(dir, id)); err != nil {
				left = append(left, id+": not analysed: "+err.Error())
				continue
			}
		}
		runs = append(runs, analysedRun{id: id, run: run, info: m, results: b})
	}
	return runs, left
}

// crossHostRuns reads the normalised items of every committed quiet run
// of s at cfg.Profile (quietRuns), whatever its host and design. It
// fits each item over hosts.
func crossHostRuns(ctx context.Context, cfg Config, s Study, ref string, refResults []byte, dir string) crossHost {
	var ch crossHost
	if s.Normalised == nil {
		return ch
	}
	runs, left := quietRuns(ctx, cfg, s, ref, refResults, dir)
	ch.left = left
	ch.fit(s, runs)
	return ch
}

// fit reads each run's normalised items and fits every item over hosts.
func (ch *crossHost) fit(s Study, runs []analysedRun) {
	byName := map[string]*crossHostItem{}
	for _, r := range runs {
		ns, err := s.Normalised(r.run, r.results)
		if err != nil {
			ch.left = append(ch.left, r.id+": "+err.Error())
			continue
		}
		ch.runs++
		host := r.info.host.HostKey()
		for _, n := range ns {
			it := byName[n.Name]
			if it == nil {
				it = &crossHostItem{name: n.Name}
				byName[n.Name] = it
			}
			if n.NotJudged != "" {
				it.left = append(it.left, r.id+": "+n.NotJudged)
				continue
			}
			it.values = append(it.values, agreement.HostValue{Host: host, Run: r.id, Ratio: n.Ratio})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		it := byName[name]
		it.fit, it.fitErr = agreement.FitCrossHost(it.values, CrossHostLevel)
		it.holdout = agreement.HoldOutHosts(it.values, CrossHostLevel, CrossHostSlower)
		ch.items = append(ch.items, it)
	}
}

// report is the cross-host block of `mage calibrate` and SUMMARY.txt:
// per item its fit over hosts and its leave-one-host-out calibration.
func (ch crossHost) report(study string) string {
	var b strings.Builder
	if ch.runs == 0 && len(ch.items) == 0 {
		fmt.Fprintf(&b, "  %-5s across hosts: no quiet run of this profile could be read", study)
		if len(ch.left) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(ch.left, "; "))
		}
		b.WriteString("\n")
		return b.String()
	}
	fmt.Fprintf(&b, "  %-5s across hosts: %d quiet run(s) of this profile read, any host and design; %d left out\n", study, ch.runs, len(ch.left))
	for _, it := range ch.items {
		hosts := map[string]bool{}
		for _, v := range it.values {
			hosts[v.Host] = true
		}
		fmt.Fprintf(&b, "        %s: ", it.name)
		if it.fitErr != nil {
			fmt.Fprintf(&b, "not judged across hosts: %v", it.fitErr)
		} else {
			b.WriteString(it.fit.String())
		}
		fmt.Fprintf(&b, "; %d run(s) not normalised%s\n", len(it.left), reasonCounts(it.left))
		fmt.Fprintf(&b, "          %s\n", it.holdout)
		for _, h := range slices.Sorted(maps.Keys(hosts)) {
			var rs []string
			for _, v := range it.values {
				if v.Host == h {
					rs = append(rs, fmt.Sprintf("%.2f", v.Ratio))
				}
			}
			fmt.Fprintf(&b, "          host %s: %s\n", h, strings.Join(rs, ", "))
		}
	}
	return b.String()
}

// reasonCounts is " (n: reason; ...)" over left's "run: reason" lines,
// the commonest reason first, or "" when left is empty. It says why
// runs were not normalised, without a line per run. Reasons that differ only in
// their figures (a drift of 16.5 % or of 21.6 %) count as one, shown
// by the first run's words.
func reasonCounts(left []string) string {
	if len(left) == 0 {
		return ""
	}
	count, first := map[string]int{}, map[string]string{}
	for _, l := range left {
		_, why, ok := strings.Cut(l, ": ")
		if !ok {
			why = l
		}
		k := figures.ReplaceAllString(why, "#")
		if count[k] == 0 {
			first[k] = why
		}
		count[k]++
	}
	keys := slices.Collect(maps.Keys(count))
	slices.SortFunc(keys, func(a, b string) int {
		if c := count[b] - count[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d: %s", count[k], first[k])
		if count[k] > 1 && first[k] != k {
			parts[i] += ", the others alike with other figures"
		}
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// figures matches the numbers in a reason.
var figures = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?`)

// judge is a new run's normalised items against the fit over the repository's
// hosts, one line each. A line says inside, outside (NOT REPRODUCED), or not
// judged with the reason (the run's own, or the fit's misfit).
func (ch crossHost) judge(study string, now []agreement.Normalised) (lines []string, outside int, verdicts map[string]agreement.CrossVerdict) {
	verdicts = map[string]agreement.CrossVerdict{}
	byName := map[string]*crossHostItem{}
	for _, it := range ch.items {
		byName[it.name] = it
	}
	for _, n := range now {
		it := byName[n.Name]
		var verdict string
		switch {
		case n.NotJudged != "":
			verdict = "not judged: " + n.NotJudged
		case it == nil:
			verdict = "not judged: no committed run measured this item"
		case it.fitErr != nil:
			verdict = "not judged: " + it.fitErr.Error()
		case it.fit.Inside(n.Ratio):
			verdict = fmt.Sprintf("consistent: inside [%.2f, %.2f] (%d hosts)", it.fit.Lo, it.fit.Hi, it.fit.Hosts)
		default:
			outside++
			verdict = fmt.Sprintf("OUTSIDE [%.2f, %.2f] (%d hosts)", it.fit.Lo, it.fit.Hi, it.fit.Hosts)
		}
		if n.Item != "" && n.NotJudged == "" && it != nil && it.fitErr == nil {
			verdicts[n.Item] = agreement.CrossVerdict{Ratio: n.Ratio, Lo: it.fit.Lo, Hi: it.fit.Hi, Hosts: it.fit.Hosts}
		}
		ratio := "-"
		if !math.IsNaN(n.Ratio) {
			ratio = fmt.Sprintf("%.2f (%.3f / %.3f)", n.Ratio, n.Observed, n.Predicted)
		}
		lines = append(lines, fmt.Sprintf("  %-5s across hosts, %s: %s: %s", study, n.Name, ratio, verdict))
	}
	return lines, outside, verdicts
}

// crossHostJudge judges, for every study whose new run's host differs from its
// reference run's, the new run's normalised items against every host's quiet
// runs (crossHostRuns). It judges by their spread and puts the lines and the
// count of items outside into sum. A study on the reference's host judges its
// times directly and is left alone.
func crossHostJudge(ctx context.Context, cfg Config, sum *summary, dir string) {
	for _, p := range sum.plans {
		h, ok := sum.hosts[p.s.Name]
		if !ok || h.match || p.s.Normalised == nil || p.newResults == nil {
			continue
		}
		cfg.printf("across hosts: %s: reading every quiet %s run of data/%s (any host) for the normalised items", p.s.Name, cfg.Profile, p.s.Name)
		ch := crossHostRuns(ctx, cfg, p.s, p.ref, p.refResults, filepath.Join(dir, p.s.Name))
		now, err := p.s.Normalised("the new run's results", p.newResults)
		lines := strings.Split(strings.TrimRight(ch.report(p.s.Name), "\n"), "\n")
		if err != nil {
			lines = append(lines, fmt.Sprintf("  %-5s across hosts: the new run's items: not judged: %v", p.s.Name, err))
		} else {
			judged, outside, verdicts := ch.judge(p.s.Name, now)
			lines = append(lines, judged...)
			sum.crossOutside += outside
			if sum.crossItems == nil {
				sum.crossItems = map[string]map[string]agreement.CrossVerdict{}
			}
			sum.crossItems[p.s.Name] = verdicts
		}
		if sum.crossHost == nil {
			sum.crossHost = map[string][]string{}
		}
		sum.crossHost[p.s.Name] = lines
	}
}
