package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"pqrepro/analysis/claims"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

// ErrNotReproduced is returned by Reproduce when a new run disagrees with
// the committed reference run.
var ErrNotReproduced = errors.New("the new runs do not reproduce the reference runs")

// Tolerances of Reproduce: how far a new run's medians may be from the
// reference run's, relative. Timing on a shared machine drifts from run
// to run; the emulator is deterministic but ML-DSA timings depend on the
// seeded messages, which are the same.
const (
	reproduceMedianTol = 0.20
	reproducePicoTol   = 0.02
)

// A reproduceRow is one line of the comparison table.
type reproduceRow struct {
	study, item, reference, now string
	agrees                      bool
	why                         string
}

// Reproduce runs the experiments again into new run folders under
// .cache/reproduce/ (the committed data and specs are not touched),
// analyses each new run in a temporary tree with the same stages, and
// compares it with the committed reference run: every published claim's
// verdict, and per study the direction and significance of every
// comparison and the medians within a stated tolerance. It prints the
// table and fails if anything disagrees. PQREPRO_STUDIES=tls,pico limits
// it to some studies.
func Reproduce(ctx context.Context, cfg Config) error {
	ctx, stop := withSignals(ctx)
	defer stop()
	if err := cfg.Validate(); err != nil {
		return err
	}
	// The new runs are made in a tree of their own: their provenance is
	// the repository's state, taken here at the repository root.
	cfg, err := cfg.withGit(ctx)
	if err != nil {
		return err
	}
	only := map[string]bool{}
	for _, s := range strings.Split(os.Getenv("PQREPRO_STUDIES"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			only[s] = true
		}
	}
	out := filepath.Join(cfg.Root, ".cache", "reproduce", cfg.now().UTC().Format("20060102T150405Z"))
	type todo struct {
		s       Study
		profile string
		ref     string
	}
	var plan []todo
	var total time.Duration
	for _, s := range Studies() {
		if len(only) > 0 && !only[s.Name] {
			continue
		}
		profile, err := cfg.stageProfile(s)
		if err != nil {
			return err
		}
		ref, err := s.pinned(cfg.Root, profile)
		if err != nil {
			return err
		}
		if ref == "" || s.Run == nil || s.StagesFor == nil {
			cfg.printf("reproduce: %s has no reference run to compare with; skipped", s.Name)
			continue
		}
		plan = append(plan, todo{s, profile, ref})
		total += s.estimate(cfg.Root, profile)
	}
	if len(plan) == 0 {
		return errors.New("reproduce: no study has a pinned reference run")
	}
	cfg.printf("reproduce: %d studies into %s, about %v", len(plan), out, roundDuration(total))
	refFiles := map[string][]byte{}
	newFiles := map[string][]byte{}
	var rows []reproduceRow
	for i, t := range plan {
		cfg.printf("reproduce [%d/%d]: %s: new %s run (reference %s)", i+1, len(plan), t.s.Name, t.profile, t.ref)
		newResults, err := reproduceStudy(ctx, cfg, t.s, t.profile, out)
		if err != nil {
			return fmt.Errorf("reproduce %s: %w", t.s.Name, err)
		}
		refResults, err := os.ReadFile(filepath.Join(cfg.Root, "results", t.s.Name+".json"))
		if err != nil {
			return fmt.Errorf("reproduce %s: the reference results: %w (run `mage build` first)", t.s.Name, err)
		}
		refFiles[t.s.Name], newFiles[t.s.Name] = refResults, newResults
		r, err := compareStudy(t.s.Name, refResults, newResults)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	rows = append(rows, compareClaims(refFiles, newFiles)...)
	printReproduce(cfg, rows)
	for _, r := range rows {
		if !r.agrees {
			return ErrNotReproduced
		}
	}
	return nil
}

// reproduceStudy runs one study into out/ and returns its new results.
func reproduceStudy(ctx context.Context, cfg Config, s Study, profile, out string) ([]byte, error) {
	specCopy := filepath.Join(out, s.Name+".toml")
	b, err := os.ReadFile(filepath.Join(cfg.Root, spec.Path(s.Name)))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(specCopy, b, 0o644); err != nil {
		return nil, err
	}
	// The new run is recorded straight into a tree of its own, which then
	// gets every other source input the stages read (specs, reference
	// tables) from the repository.
	tree := filepath.Join(out, "tree-"+s.Name)
	run := cfg
	run.Profile = profile
	if err := s.Run(ctx, run, specCopy, filepath.Join(tree, "data")); err != nil {
		return nil, err
	}
	id, err := spec.PinnedIn(specCopy, profile)
	if err != nil || id == "" {
		return nil, fmt.Errorf("the new run was not pinned in %s: %v", specCopy, err)
	}
	rel := "data/" + s.Name + "/" + id
	stages, err := s.StagesFor(cfg.Root, profile, rel)
	if err != nil {
		return nil, err
	}
	repo := &repro.Engine{Root: cfg.Root, Stages: stages}
	sources, err := repo.Sources(func(p string) bool { return repro.Covers(rel, p) || repro.Covers(p, rel) })
	if err != nil {
		return nil, err
	}
	if err := repo.CopyFiles(tree, sources); err != nil {
		return nil, fmt.Errorf("build the tree of the new run: %w", err)
	}
	e := &repro.Engine{Root: tree, CodeRoot: cfg.Root, Stages: stages, Log: cfg.log(), Verbose: cfg.Verbose}
	if _, err := e.Build(ctx); err != nil {
		return nil, fmt.Errorf("analyse the new run: %w", err)
	}
	return os.ReadFile(filepath.Join(tree, "results", s.Name+".json"))
}

// compareStudy compares a study's reference and new results item by item.
func compareStudy(study string, ref, now []byte) ([]reproduceRow, error) {
	r, err := claims.NewResults(map[string][]byte{"ref": ref, "new": now}, nil)
	if err != nil {
		return nil, err
	}
	var rows []reproduceRow
	medianRow := func(item string, a, b float64, tol float64) reproduceRow {
		row := reproduceRow{study: study, item: item, reference: fmt.Sprintf("%.4g", a), now: fmt.Sprintf("%.4g", b), agrees: true}
		if math.Abs(b-a) > tol*math.Abs(a) {
			row.agrees, row.why = false, fmt.Sprintf("differs by more than %.0f %%", 100*tol)
		}
		return row
	}
	list := func(which, path string) []any {
		v, err := r.Get(which, path)
		if err != nil {
			return nil
		}
		l, _ := v.([]any)
		return l
	}
	switch study {
	case "tls":
		refComps := list("ref", "families.matrix.comparisons")
		for i := range refComps {
			target := fmt.Sprint(refComps[i].(map[string]any)["target"])
			path := "families.matrix.comparisons[target=" + target + "]."
			rd, _ := r.Num("ref", path+"median_diff_ms")
			nd, err1 := r.Num("new", path+"median_diff_ms")
			rp, _ := r.Num("ref", path+"p_holm")
			np, err2 := r.Num("new", path+"p_holm")
			if err1 != nil || err2 != nil {
				rows = append(rows, reproduceRow{study: study, item: target, reference: "present", now: "missing", why: "not in the new run"})
				continue
			}
			row := reproduceRow{study: study, item: target + " vs baseline",
				reference: fmt.Sprintf("%+.3f ms, p_Holm %.2g", rd, rp), now: fmt.Sprintf("%+.3f ms, p_Holm %.2g", nd, np), agrees: true}
			switch {
			case math.Signbit(rd) != math.Signbit(nd):
				row.agrees, row.why = false, "direction differs"
			case (rp < claims.Alpha) != (np < claims.Alpha):
				row.agrees, row.why = false, "significance differs"
			}
			rows = append(rows, row)
			rm, _ := r.Num("ref", path+"median_target_ms")
			nm, _ := r.Num("new", path+"median_target_ms")
			rows = append(rows, medianRow(target+" median ms", rm, nm, reproduceMedianTol))
		}
		rows = append(rows, compareGap(study, list("ref", "gap.cells"), list("new", "gap.cells"), list("ref", "gap.factors"), list("new", "gap.factors"))...)
	case "net":
		for _, c := range list("ref", "comparisons") {
			m := c.(map[string]any)
			item := fmt.Sprintf("%v round %v", m["scenario"], m["round"])
			var nm map[string]any
			for _, d := range list("new", "comparisons") {
				dm := d.(map[string]any)
				if dm["scenario"] == m["scenario"] && dm["round"] == m["round"] {
					nm = dm
				}
			}
			if nm == nil {
				rows = append(rows, reproduceRow{study: study, item: item, reference: "present", now: "missing", why: "not in the new run"})
				continue
			}
			rd, _ := m["diff_ms"].(float64)
			nd, _ := nm["diff_ms"].(float64)
			row := reproduceRow{study: study, item: item + " difference", reference: fmt.Sprintf("%+.3f ms", rd), now: fmt.Sprintf("%+.3f ms", nd), agrees: true}
			if math.Signbit(rd) != math.Signbit(nd) {
				row.agrees, row.why = false, "direction differs"
			}
			rows = append(rows, row)
			rb, _ := m["baseline_median_ms"].(float64)
			nb, _ := nm["baseline_median_ms"].(float64)
			rows = append(rows, medianRow(item+" X25519 median ms", rb, nb, reproduceMedianTol))
		}
	case "pico":
		for _, p := range list("ref", "published") {
			m := p.(map[string]any)
			key := fmt.Sprint(m["key"])
			a, err1 := r.Num("ref", "published[key="+key+"].ours")
			b, err2 := r.Num("new", "published[key="+key+"].ours")
			if err1 != nil || err2 != nil {
				continue
			}
			rows = append(rows, medianRow(key, a, b, reproducePicoTol))
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("reproduce %s: nothing to compare in the results", study)
	}
	return rows, nil
}

// compareGap compares Study A's gap analysis (analysis/tlsmatrix): every
// cell's increases (direction and significance, as the matrix's), and
// every factor change the reference finds significant: the new run
// contradicts it when its interval lies wholly on the other side of zero
// (a quick run's intervals are wide; a change it cannot resolve is not a
// contradiction).
func compareGap(study string, refCells, newCells, refFactors, newFactors []any) []reproduceRow {
	var rows []reproduceRow
	cellName := func(m map[string]any) string { return fmt.Sprintf("%v/%v/%v", m["stack"], m["path"], m["keyshare"]) }
	find := func(l []any, match func(map[string]any) bool) map[string]any {
		for _, v := range l {
			if m, ok := v.(map[string]any); ok && match(m) {
				return m
			}
		}
		return nil
	}
	num := func(m map[string]any, k string) float64 { v, _ := m[k].(float64); return v }
	for _, c := range refCells {
		rc := c.(map[string]any)
		name := cellName(rc)
		nc := find(newCells, func(m map[string]any) bool { return cellName(m) == name })
		comps, _ := rc["comparisons"].([]any)
		for _, x := range comps {
			ro := x.(map[string]any)
			item := fmt.Sprintf("cell %s %v vs baseline", name, ro["role"])
			var no map[string]any
			if nc != nil {
				ncomps, _ := nc["comparisons"].([]any)
				no = find(ncomps, func(m map[string]any) bool { return m["role"] == ro["role"] })
			}
			if no == nil {
				rows = append(rows, reproduceRow{study: study, item: item, reference: "present", now: "missing", why: "not in the new run"})
				continue
			}
			rd, nd, rp, np := num(ro, "median_diff_ms"), num(no, "median_diff_ms"), num(ro, "p_holm"), num(no, "p_holm")
			row := reproduceRow{study: study, item: item, reference: fmt.Sprintf("%+.3f ms, p_Holm %.2g", rd, rp), now: fmt.Sprintf("%+.3f ms, p_Holm %.2g", nd, np), agrees: true}
			switch {
			case math.Signbit(rd) != math.Signbit(nd):
				row.agrees, row.why = false, "direction differs"
			case (rp < claims.Alpha) != (np < claims.Alpha):
				row.agrees, row.why = false, "significance differs"
			}
			rows = append(rows, row)
		}
	}
	for _, f := range refFactors {
		rf := f.(map[string]any)
		nf := find(newFactors, func(m map[string]any) bool { return m["factor"] == rf["factor"] })
		effects, _ := rf["effects"].([]any)
		for _, e := range effects {
			re := e.(map[string]any)
			if num(re, "p_holm") >= claims.Alpha {
				continue // no direction to reproduce
			}
			from, to := re["from_cell"].(map[string]any), re["to_cell"].(map[string]any)
			item := fmt.Sprintf("%v %s -> %s %v change", rf["factor"], cellName(from), cellName(to), re["role"])
			var ne map[string]any
			if nf != nil {
				neffects, _ := nf["effects"].([]any)
				ne = find(neffects, func(m map[string]any) bool {
					nfrom, _ := m["from_cell"].(map[string]any)
					return m["role"] == re["role"] && nfrom != nil && cellName(nfrom) == cellName(from)
				})
			}
			if ne == nil {
				rows = append(rows, reproduceRow{study: study, item: item, reference: "present", now: "missing", why: "not in the new run"})
				continue
			}
			rd, nd, lo, hi := num(re, "change_ms"), num(ne, "change_ms"), num(ne, "lower"), num(ne, "upper")
			row := reproduceRow{study: study, item: item, reference: fmt.Sprintf("%+.3f ms", rd), now: fmt.Sprintf("%+.3f ms [%+.3f, %+.3f]", nd, lo, hi), agrees: true}
			if (rd > 0 && hi < 0) || (rd < 0 && lo > 0) {
				row.agrees, row.why = false, "the new interval excludes the reference's direction"
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// compareClaims evaluates every claim on the reference and the new
// results; a claim agrees when its verdict is the same.
func compareClaims(ref, now map[string][]byte) []reproduceRow {
	rr, err1 := claims.NewResults(ref, nil)
	nr, err2 := claims.NewResults(now, nil)
	if err1 != nil || err2 != nil {
		return []reproduceRow{{study: "claims", item: "results", why: fmt.Sprint(err1, err2)}}
	}
	cat := claims.Catalogue()
	a, b := claims.Run(rr, cat), claims.Run(nr, cat)
	var rows []reproduceRow
	for i, c := range a.Claims {
		if _, ok := ref[c.Study]; !ok {
			continue
		}
		n := b.Claims[i]
		row := reproduceRow{study: "claims", item: c.ID + " " + c.Statement,
			reference: string(c.Verdict) + ": " + c.Ours, now: string(n.Verdict) + ": " + n.Ours, agrees: c.Verdict == n.Verdict}
		if !row.agrees {
			row.why = "verdict differs"
		}
		rows = append(rows, row)
	}
	return rows
}

func printReproduce(cfg Config, rows []reproduceRow) {
	w := tabwriter.NewWriter(cfg.log(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "study\titem\treference\tnew run\tverdict")
	agree := 0
	for _, r := range rows {
		v := "agrees"
		if r.agrees {
			agree++
		} else {
			v = "DIFFERS: " + r.why
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.study, r.item, r.reference, r.now, v)
	}
	w.Flush()
	cfg.printf("reproduce: %d of %d items agree", agree, len(rows))
}
