package reproduce

import "strings"

// hostReference picks, for a study whose new run's host differs from its
// pinned reference run's, the reference of this host. That is the newest run
// under data/<study>/ of the new run's profile and design (spec without
// its pins) recorded on a host whose fingerprint matches the new run's,
// with its quiet check passed, that matches its manifest and whose ID
// agrees with its meta.json and the clock (comparableRuns, soundRun): a
// run named for a later date is refused, not "the newest". Times are a property of
// the host (docs/agreement.md, "What depends on the machine"): against
// the pinned run of another host they are shown, not judged; against a
// committed quiet run of this host's kind they are judged, with the
// between-run variance of that host's runs. The pinned run stays the
// paper's reference; the summary names both. A study with no such run
// keeps its pinned reference (its times then shown, not judged).
//
// tree is the reproduction tree holding p.newRun. It changes p only
// when it finds such a run: p.ref becomes it, p.pinned the pinned run,
// p.committed false (the committed results are the pinned run's).
func hostReference(cfg Config, p *studyPlan, tree string) {
	if p.newRun == "" || p.s.Results == nil {
		return
	}
	var pinnedHost hostPair
	if p.ref != "" {
		if pinnedHost = compareHosts(cfg.Root, p.ref, tree, p.newRun); pinnedHost.match {
			return
		}
	}
	now, err := readRunInfo(tree, p.newRun)
	if err != nil {
		cfg.printf("host reference of %s: not looked for: the new run's %v", p.s.Name, err)
		return
	}
	ids, left, err := comparableRuns(cfg.Root, p.s.Name, now, soundRun(cfg))
	if err != nil {
		cfg.printf("host reference of %s: not looked for: %v", p.s.Name, err)
		return
	}
	for _, l := range left {
		if strings.Contains(l, ": not sound evidence: ") {
			cfg.printf("host reference of %s: run %s", p.s.Name, l)
		}
	}
	if len(ids) == 0 {
		if p.ref != "" {
			cfg.printf("host reference of %s: none: no quiet %s run of this design on a host like this one under data/%s, so its times are shown against %s, not judged", p.s.Name, cfg.Profile, p.s.Name, p.ref)
		}
		return
	}
	run := "data/" + p.s.Name + "/" + ids[len(ids)-1]
	why := "no " + cfg.Profile + " run is pinned"
	if p.ref != "" {
		why = "the pinned " + p.ref + " was measured on another host (" + pinnedHost.note + ")"
	}
	cfg.printf("host reference of %s: %s, the newest of %d quiet %s run(s) of this design on a host like this one (%s), because %s", p.s.Name, run, len(ids), cfg.Profile, strings.Join(ids, ", "), why)
	p.pinned, p.ref, p.committed = p.ref, run, false
	p.hostWhy = why
}
