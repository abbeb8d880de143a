package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/claims"
	"pqrepro/internal/deps"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
	"pqrepro/reproduce"
)

// A Study is one reproduced paper, as the pipeline sees it. It holds
// everything the targets, the claims stage, the artifact bundle and the
// target table of docs/targets.md need to know about it. Each study
// registers one, in its own file (study_<name>.go); nothing outside that
// file names the study.
type Study struct {
	// Name is the study's short name and Mage namespace (tls, net, pico):
	// data/<Name>/, experiments/<Name>.toml, results/<Name>.json.
	Name string
	// Label is the letter the paper calls the study by ("A" for Study
	// A); it orders the studies in the paper, the claims tables
	// (tab:claims-<Label>) and the artifact appendix.
	Label string
	// Title is one line for plans and status.
	Title string
	// Citation is the original paper the study reproduces, as
	// CITATION.cff cites it (the artifact appendix shows it).
	Citation string
	// Packages are the module's package folders that belong to this
	// study alone: its experiment, its dataset format and its analysis.
	// The layering test (layering_test.go) lets no package but the
	// composition root import the packages of every study, and no file
	// of this package but the registration import any of them.
	Packages []string
	// Targets are the study's rows of docs/targets.md's target table, the
	// first one its <Name>:run target (whose Does the artifact appendix
	// shows too). The magefile has one namespace per study holding them.
	Targets []TargetDoc
	// NeedsRoot is set when the experiment needs root (packet capture,
	// network namespaces, TUN devices); Hardware names hardware beyond a
	// Linux host the experiment can use, if any.
	NeedsRoot bool
	Hardware  string
	// Requirements lists what the study's experiment needs installed.
	Requirements func(root string) []deps.Requirement
	// TestRequirements lists what the study's tests need installed
	// beyond Go: mage test installs them, so that no test skips in CI
	// for want of a tool.
	TestRequirements func(root string) []deps.Requirement
	// OneTime, when set, lists the work a run of the experiment must do
	// first on this machine and never again (a build into .cache), with
	// its expected time; nil or empty when there is none. Missing
	// Requirements are counted apart (oneTimeWork).
	OneTime func(root string) []OneTimeWork
	// BeforeTests, when set, prepares what the study's tests need that
	// no package provides (Study A's OpenSSL build); mage test runs it
	// before the tests.
	BeforeTests func(ctx context.Context, cfg Config) error
	// Leftovers, when set, lists what killed runs of the experiment left
	// outside the tree (network namespaces whose creator is dead, a
	// docker path's daemon and containers, temporary folders), each kind
	// with the target that removes it: status shows them, and so does
	// every run target when it starts.
	Leftovers func() []Leftover
	// Clean, when set, removes the leftovers that target removes (their
	// Leftover.RemovedBy: "clean", or a target of the study's own such
	// as net:clean) and returns what it removed; it may also say through
	// cfg what it kept and why (a namespace whose process still runs).
	Clean func(ctx context.Context, cfg Config, target string) ([]string, error)
	// EstimateFor is the expected wall time of the experiment for a
	// profile, from the study's cost model measured on the reference
	// machine (2 cores); nil or 0 means unknown.
	EstimateFor func(root, profile string) time.Duration
	// Run runs the experiment with the spec at specPath into a new run
	// folder dataDir/<study>/<run-id>/, pins it in that spec and returns
	// its run ID; empty paths mean experiments/<Name>.toml and data/.
	// `mage all` passes copies, so that it runs again without touching
	// the committed data or spec. Call it through runExperiment.
	Run func(ctx context.Context, cfg Config, specPath, dataDir string) (string, error)
	// CheckSpec reads and validates the study's spec
	// (experiments/<Name>.toml) as its experiment would; nil: there is
	// nothing to check beyond StagesFor. status and build run it for every
	// study, so that a spec no run could start from is named before one
	// is tried.
	CheckSpec func(root string) error
	// StagesFor returns the study's analysis and render stages over a run
	// folder (relative to root): the pinned run for the build, a new run
	// for `mage all`. set carries the settings stages depend on (the
	// content store, SOURCE_DATE_EPOCH). The run's records stage
	// (Records) is not among them: stagesOver puts it first.
	StagesFor func(root, profile, run string, set settings.Settings) ([]*repro.Stage, error)
	// CannotRun, when set, says why the experiment cannot run on this
	// machine ("" when it can), for example "not root" for a study that
	// captures packets; `mage all` then skips it with that reason instead
	// of failing. Missing packages are not a reason: all installs them,
	// and skips the study only when it cannot.
	CannotRun func(root string) string
	// Records, when set, returns the stage that re-derives a run's records
	// from its packet captures, which StagesFor's stages read; stagesOver
	// runs it before them. The engine adds it for the runs pinned for the
	// other profiles too,
	// so that verify re-derives every pinned run whose captures are
	// present, the quick runs' committed ones included.
	Records func(root, profile, run string, set settings.Settings) *repro.Stage
	// Claims returns the study's published claims as code, in the paper's
	// order, with its published values' citation and the package that
	// states them (its analysis package's Claims); the claims stage, `mage
	// claims`, `mage all` and the bundle's appendix show them.
	Claims func() claims.Catalogue
	// ClaimViews, when set, returns the other readings of the study's
	// results on which its claims are re-evaluated as a robustness check
	// (claims.View); they change no verdict.
	ClaimViews func() []claims.View
	// HandTyped are the numbers the paper's text may state literally
	// about the study (its software versions, its hardware), each a fact
	// of its setup and not a measurement; the paper stage refuses every
	// other number not from a generated macro. They live in the study's
	// analysis package, with the reason for each.
	HandTyped []string
	// Results reads one run's results/<Name>.json with the study's one
	// decoder of them (its analysis package's DecodeResults, through
	// resultsOf) and returns what `mage all` and `mage calibrate` derive
	// from them: the compared items of two runs, the calibration's known
	// changes and resampler. nil compares the claims only.
	Results func(name string, b []byte) (Results, error)
	// BetweenScale is how the between-run deviations of the study's
	// host-dependent estimates scale (agreement.BetweenScale): Relative
	// (the zero value) or Absolute.
	BetweenScale agreement.BetweenScale
	// Normalised reads one run's results/<Name>.json and returns its
	// items made comparable across hosts (observed over the host's own
	// prediction, agreement.Normalised); nil when the study has none.
	// `mage all` judges them on a host that differs from the reference's,
	// against the spread of every host's quiet runs (reproduce/crosshost.go).
	Normalised func(name string, b []byte) ([]agreement.Normalised, error)
	// Plant, when set, returns a run's results with a known change that
	// one of the study's claims rests on, named by PlantName (Study A:
	// ML-KEM-1024 slower by 1 ms in every round, tlsstudy.PlantIncrease):
	// the calibration of the whole verdict line measures its power
	// against it (reproduce/flipcal.go).
	Plant     func(results []byte) ([]byte, error)
	PlantName string
	// Timed names the files of a run (paths relative to its folder) that
	// hold what it timed on its host. Timings never repeat byte for
	// byte, so two runs holding one identical such file are a run and
	// its copy, and the evidence checks refuse both (runIndex). A study
	// whose records are deterministic (an emulator's cycle counts)
	// leaves those out.
	Timed []string
}

// A TargetDoc is one row of the target table in docs/targets.md. How
// long the row's targets take is a measurement, not code: it lives in
// docs/timings.toml under the row's first name.
type TargetDoc struct {
	// Names are the row's targets, e.g. "pico:build", "pico:emulate".
	Names []string
	// Does says what they do.
	Does string
}

// studies is the registry; each study_<name>.go adds its study.
var studies []Study

// Studies returns the registered studies, sorted by name.
func Studies() []Study {
	out := slices.Clone(studies)
	slices.SortFunc(out, func(a, b Study) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// paperOrder returns the registered studies in the paper's order (by
// Label: Study A, B, C), the order of the claims and the appendix.
func paperOrder() []Study {
	out := slices.Clone(studies)
	slices.SortFunc(out, func(a, b Study) int {
		return cmp.Or(strings.Compare(a.Label, b.Label), strings.Compare(a.Name, b.Name))
	})
	return out
}

// labels maps each registered study's name to its label.
func labels() map[string]string {
	out := map[string]string{}
	for _, s := range studies {
		out[s.Name] = s.Label
	}
	return out
}

// OneTimeWork is one piece of a fresh machine's preparation
// (reproduce.OneTimeWork).
type OneTimeWork = reproduce.OneTimeWork

// oneTimeWork is the study's one-time work on this machine: the Debian
// packages its experiment lacks (deps.InstallEstimate), then its OneTime
// builds.
func (s Study) oneTimeWork(root string) []OneTimeWork {
	var out []OneTimeWork
	if s.Requirements != nil {
		if missing := deps.Missing(s.Requirements(root)); len(missing) > 0 {
			out = append(out, OneTimeWork{What: strings.Join(deps.Plan(missing), "; "), Estimate: deps.InstallEstimate(missing)})
		}
	}
	if s.OneTime != nil {
		out = append(out, s.OneTime(root)...)
	}
	return out
}

func (s Study) estimate(root, profile string) time.Duration {
	if s.EstimateFor == nil {
		return 0
	}
	return s.EstimateFor(root, profile)
}

// stagesOver is every stage of the study over a run folder: the run's
// records stage (Records, when set), then StagesFor's.
func (s Study) stagesOver(root, profile, run string, set settings.Settings) ([]*repro.Stage, error) {
	st, err := s.StagesFor(root, profile, run, set)
	if err != nil || s.Records == nil {
		return st, err
	}
	return append([]*repro.Stage{s.Records(root, profile, run, set)}, st...), nil
}

// runDoc is what the study's run target does, for the artifact appendix.
func (s Study) runDoc() string {
	for _, t := range s.Targets {
		if slices.Contains(t.Names, s.Name+":run") {
			return t.Does
		}
	}
	return fmt.Sprintf("Study %s: run the experiment into a new dataset under data/%s", s.Label, s.Name)
}

// handTyped returns the numbers every registered study lets the paper's
// text state literally (Study.HandTyped), in the paper's order.
func handTyped() []string {
	var out []string
	for _, s := range paperOrder() {
		out = append(out, s.HandTyped...)
	}
	return out
}
