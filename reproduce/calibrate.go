package reproduce

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"pqrepro/analysis/agreement"
	"pqrepro/internal/atomicfile"
)

// CalibrateDir is where Calibrate writes, relative to the root:
// CalibrateDir/<profile>/CALIBRATION.txt, which `mage all` copies into its
// SUMMARY.txt.
const CalibrateDir = ".cache/calibrate"

// calibrationDoc is the file whose marked blocks Calibrate fills with its
// figures, one per profile.
const calibrationDoc = "docs/agreement.md"

// Calibrate is `mage calibrate`: the false-alarm rate and power of `mage
// all`'s rule.
//
// It measures how often `mage all`'s rule (analysis/agreement:
// prediction intervals, Holm over every item) says NOT REPRODUCED when
// nothing changed, and how often it notices a known change, at
// cfg.Profile (default full). It draws K pseudo-replicate pairs of the
// profile's reference runs in two modes: resampling each run's own
// rounds, series or repetitions with every item re-derived from the
// resample (Results.Resampler, agreement.Resampled), and the parametric
// draw of each item at its reference standard error (agreement.Pseudo),
// kept for comparison. It judges each pair as `all` judges a new run,
// with the between-run variance of the repository's quiet runs when
// there are enough (betweenRuns), and reports per mode the false-alarm
// rate, the power against each study's injected changes
// (Results.Changes) at the goal's size, and the smallest size
// detected in 80 % of the pairs. The figures go to
// CalibrateDir/<profile>/CALIBRATION.txt and into docs/agreement.md's
// block for the profile. The same K and seed give the same figures.
// cfg.Profile is set and valid.
func Calibrate(ctx context.Context, cfg Config) error {
	k, seed := cfg.Settings.CalibrateK, cfg.Settings.CalibrateSeed
	plans, err := planAll(cfg)
	if err != nil {
		return err
	}
	tree, err := os.MkdirTemp(filepath.Join(cfg.Root, ".cache"), ".calibrate-")
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	defer os.RemoveAll(tree)
	if err := referenceResults(ctx, cfg, plans, tree, "a temporary tree under .cache (removed afterwards)"); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	betweenRuns(ctx, cfg, plans, filepath.Join(tree, ".between"))
	inputs, err := CalibrationInputs(cfg.Root, cfg.Profile, cfg.Studies, k, seed)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	text, err := calibration(ctx, cfg.Profile, plans, k, seed)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	var across, flips strings.Builder
	for _, p := range plans {
		cfg.printf("calibrate: %s: analysing every quiet %s run of data/%s (any host) for the cross-host fit and the whole verdict line", p.s.Name, cfg.Profile, p.s.Name)
		runs, left := quietRuns(ctx, cfg, p.s, p.ref, p.refResults, filepath.Join(tree, ".runs", p.s.Name))
		if p.s.Normalised != nil {
			ch := crossHost{left: left}
			ch.fit(p.s, runs)
			across.WriteString(ch.report(p.s.Name))
		}
		flips.WriteString(calibrateFlips(p.s, cfg.Profile, cfg.Catalogues, runs).report())
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	if across.Len() > 0 {
		text = strings.Replace(text, "\nmethod: ", "\nacross hosts (items normalised by the host's own measurements; docs/agreement.md, \"Across hosts\"):\n"+across.String()+"method: ", 1)
	}
	text = strings.Replace(text, "\nmethod: ", "\nclaims and items together on committed runs (docs/agreement.md, \"Claim flips\"):\n"+flips.String()+"method: ", 1)
	text = strings.Replace(text, "\n", "\n"+inputsLine(inputs)+"\n", 1)
	out := filepath.Join(cfg.Root, CalibrateDir, cfg.Profile, "CALIBRATION.txt")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	if err := atomicfile.WriteFile(out, []byte(text), 0o644); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	if err := fillDocBlock(filepath.Join(cfg.Root, calibrationDoc), cfg.Profile, text); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	fmt.Fprint(cfg.Log, text)
	cfg.printf("calibrate: written to %s and %s", filepath.Join(CalibrateDir, cfg.Profile, "CALIBRATION.txt"), calibrationDoc)
	return nil
}

// calibration is the report of K pseudo-replicate comparisons of the
// plans' reference results, in both modes: resampling each reference
// run's own rounds, series or repetitions (Results.Resampler; the stronger
// check, which keeps the items' correlation) and the parametric draw of
// every item at its standard error (agreement.Pseudo), kept as the
// comparison row.
func calibration(ctx context.Context, profile string, plans []studyPlan, k int, seed uint64) (string, error) {
	var parametric, resampled []agreement.Draw
	var changes []agreement.Change
	var b strings.Builder
	fmt.Fprintf(&b, "calibration of `all` at the %s profile: K = %d pseudo-replicate pairs, seed %d (PQREPRO_CALIBRATE_K, PQREPRO_CALIBRATE_SEED)\n", profile, k, seed)
	for _, p := range plans {
		if p.refResults == nil {
			fmt.Fprintf(&b, "  %-5s not calibrated: no %s reference run\n", p.s.Name, profile)
			continue
		}
		as, ref, err := selfCompare(p.s, p.refResults, profile)
		if err != nil {
			return "", err
		}
		p.between.Apply(as.Items)
		judged := 0
		for _, j := range agreement.Judge(agreement.DefaultRule, as).Items {
			if j.Status != agreement.NotJudged {
				judged++
			}
		}
		fmt.Fprintf(&b, "  %-5s reference %s: %d items, %d judged on the same host\n", p.s.Name, p.ref, len(as.Items), judged)
		parametric = append(parametric, agreement.Parametric(as))
		draw, method := agreement.Parametric(as), "none (the study has no resampler): parametric in both modes"
		if ref != nil {
			if r, m := ref.Resampler(); r != nil {
				if draw, err = agreement.Resampled(as, r); err != nil {
					return "", err
				}
				method = m
			}
			changes = append(changes, ref.Changes()...)
		}
		resampled = append(resampled, draw)
		fmt.Fprintf(&b, "        resampling: %s\n", method)
		fmt.Fprintf(&b, "        %s\n", p.between)
	}
	if len(parametric) == 0 {
		return "", fmt.Errorf("no %s reference run to calibrate on", profile)
	}
	rule := agreement.DefaultRule
	modes := []struct {
		name  string
		draws []agreement.Draw
	}{{"resampling the records", resampled}, {"parametric (comparison)", parametric}}
	for _, m := range modes {
		fa, err := agreement.CalibrateDraws(ctx, rule, m.draws, k, seed, nil, 0)
		if err != nil {
			return "", err
		}
		goal := "meets the goal (at most 5 %)"
		if fa.Rate > 0.05 {
			goal = "MISSES the goal of at most 5 %"
		}
		fmt.Fprintf(&b, "false alarms (NOT REPRODUCED with nothing changed), %s: %s: %s\n", m.name, fa, goal)
	}
	for _, ch := range changes {
		for _, m := range modes {
			pw, err := agreement.CalibrateDraws(ctx, rule, m.draws, k, seed, &ch, ch.Size)
			if err != nil {
				return "", err
			}
			size, _, err := agreement.SmallestDetectedDraws(ctx, rule, m.draws, k, seed, ch)
			if err != nil {
				return "", err
			}
			smallest := "none of the sizes tried (up to 200 %)"
			if !math.IsNaN(size) {
				smallest = fmt.Sprintf("%.0f %%", 100*size)
			}
			fmt.Fprintf(&b, "power, %s at %.0f %%, %s: %s; smallest size detected in 80 %% of pairs: %s\n", ch.Name, 100*ch.Size, m.name, pw, smallest)
		}
	}
	b.WriteString("method: docs/agreement.md (resampling: two resamples of the reference run's own rounds, series or repetitions per pair, every item re-derived from them; parametric: each item drawn independently at its reference standard error; exact items do not vary)\n")
	return b.String(), nil
}

// CalibrationInputs is a digest of everything a calibration's figures
// follow from. That is the profile, K and seed, each study's pinned
// reference run of the profile, every committed run folder (the
// between-run variance draws on the quiet ones), and the Go code of the
// analysis and of the calibration itself. docs/agreement.md quotes the figures with it, and
// TestCalibrationDocIsCurrent fails when the tree's digest differs, so
// that a quoted figure is re-derived when its inputs change (or not
// quoted): 16 hexadecimal digits of a SHA-256.
func CalibrationInputs(root, profile string, studies []Study, k int, seed uint64) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "profile %s\nK %d\nseed %d\n", profile, k, seed)
	for _, s := range studies {
		if s.Stages == nil {
			continue
		}
		ref, err := s.pinned(profile)
		if err != nil {
			return "", fmt.Errorf("study %s: %w", s.Name, err)
		}
		fmt.Fprintf(h, "study %s reference %s\n", s.Name, ref)
		runs, err := os.ReadDir(filepath.Join(root, "data", s.Name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		for _, r := range runs {
			fmt.Fprintf(h, "run %s\n", r.Name())
		}
	}
	var code []string
	for _, dir := range []string{"analysis", "reproduce"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() && name == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				return nil
			}
			if dir == "reproduce" && !calibrationCode[name] {
				return nil
			}
			code = append(code, p)
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("hash the calibration's code: %w", err)
		}
	}
	slices.Sort(code)
	for _, p := range code {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "code %s %x\n", filepath.ToSlash(rel), sha256.Sum256(b))
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// calibrationCode are reproduce's files that decide a calibration's
// figures; the rest of the analysis is all of analysis/.
var calibrationCode = map[string]bool{"calibrate.go": true, "between.go": true, "compare.go": true}

// inputsLine is the calibration report's line naming its inputs' digest.
func inputsLine(digest string) string {
	return "inputs " + digest + " (calibrationInputs: the profile's reference runs, every committed run, K, seed and the analysis code; when the tree's digest differs, these figures are stale)"
}

// CalibrationDigest reads the inputs digest and the K and seed from a
// calibration report ("" when it has none: a report older than the
// digest).
func CalibrationDigest(text string) (digest string, k int, seed uint64) {
	for _, line := range strings.Split(text, "\n") {
		if d, ok := strings.CutPrefix(line, "inputs "); ok && len(d) >= 16 {
			digest = d[:16]
		}
		if i := strings.Index(line, "K = "); i >= 0 && strings.HasPrefix(line, "calibration of `all`") {
			fmt.Sscanf(line[i:], "K = %d pseudo-replicate pairs, seed %d", &k, &seed)
		}
	}
	return digest, k, seed
}

// fillDocBlock replaces the text between doc's markers for profile
// ("<!-- calibration:<profile> -->" and "<!-- end calibration:<profile> -->")
// with text, as a code block. A doc without the markers is an error
// saying which to add.
func fillDocBlock(doc, profile, text string) error {
	b, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	begin, end := "<!-- calibration:"+profile+" -->\n", "<!-- end calibration:"+profile+" -->"
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q ... %q block for the figures", doc, strings.TrimSpace(begin), end)
	}
	s = s[:i+len(begin)] + "```\n" + text + "```\n" + s[j:]
	return atomicfile.WriteFile(doc, []byte(s), 0o644)
}

// calibrationNote is the profile's last calibration (Calibrate's
// CALIBRATION.txt) for SUMMARY.txt, or how to measure it.
func calibrationNote(cfg Config) string {
	b, err := os.ReadFile(filepath.Join(cfg.Root, CalibrateDir, cfg.Profile, "CALIBRATION.txt"))
	if err != nil {
		return fmt.Sprintf("\ncalibration of this rule at the %s profile: not measured here; `PQREPRO_PROFILE=%s go run mage.go calibrate` measures it (docs/agreement.md)\n", cfg.Profile, cfg.Profile)
	}
	digest, k, seed := CalibrationDigest(string(b))
	if now, err := CalibrationInputs(cfg.Root, cfg.Profile, cfg.Studies, k, seed); err != nil || digest != now {
		return fmt.Sprintf("\ncalibration of this rule at the %s profile: the last one here (%s) was computed on other inputs (runs or analysis code) than this tree's, so its figures are not quoted; `PQREPRO_PROFILE=%s go run mage.go calibrate` measures it again (docs/agreement.md)\n",
			cfg.Profile, filepath.Join(CalibrateDir, cfg.Profile, "CALIBRATION.txt"), cfg.Profile)
	}
	return "\n" + string(b)
}
