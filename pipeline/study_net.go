package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"time"

	anet "pqrepro/analysis/netstudy"
	"pqrepro/experiments/netjoin"
	"pqrepro/experiments/netstudy"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

const netStudy = "net"

func init() {
	studies = append(studies, Study{
		Name:         netStudy,
		Title:        "Study B: X25519 vs X25519MLKEM768 across emulated networks",
		Requirements: netstudy.Requirements,
		EstimateFor: func(root, profile string) time.Duration {
			s, err := netstudy.LoadSpec(filepath.Join(root, spec.Path(netStudy)))
			if err != nil {
				return 0
			}
			e, err := netstudy.Estimate(s, profile)
			if err != nil {
				return 0
			}
			return e.Expected
		},
		Run: func(ctx context.Context, cfg Config, specPath, dataDir string) error {
			return netstudy.Run(ctx, netstudy.RunConfig{Root: cfg.Root, Git: cfg.Git, Profile: cfg.Profile, Log: cfg.log(), Now: cfg.Now, SpecPath: specPath, DataDir: dataDir})
		},
		StagesFor: func(root, profile, run string) ([]*repro.Stage, error) {
			return append([]*repro.Stage{netRecords(root, profile, run)}, anet.StagesFrom(run, recordsOut(netStudy, profile), anet.Params{})...), nil
		},
		Records: netRecords,
		// The same check netstudy.Run makes before it creates anything.
		CannotRun: func(string) string {
			if os.Geteuid() != 0 {
				return "not root: " + netstudy.ErrNeedRoot.Error()
			}
			return ""
		},
	})
}

// netRecords re-derives a Study B run's records from its captures.
func netRecords(root, profile, run string) *repro.Stage {
	return recordsStage(root, netStudy, profile, run, "experiments/netjoin", netjoin.Derive)
}
