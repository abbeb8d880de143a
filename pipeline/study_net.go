package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/netstudy"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/net/linkemu"
	"pqrepro/experiments/net/netjoin"
	"pqrepro/experiments/net/netrun"
	"pqrepro/internal/deps"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

const netStudy = "net"

func init() {
	studies = append(studies, Study{
		Name:     netStudy,
		Label:    "B",
		Title:    "Study B: X25519 vs X25519MLKEM768 across emulated networks",
		Citation: `"Análise Comparativa de Performance entre Criptografia Clássica e Pós-Quântica no TLS 1.3" (Marques, Zavan, 2026)`,
		Packages: []string{"experiments/net/netrun", "datasets/netdata", "analysis/netstudy"},
		Targets: []TargetDoc{
			{Names: []string{"net:run"},
				Does: "Study B: handshakes across emulated links (network namespaces, TUN; root), with the endpoint built by each toolchain of the profile, into a new run under `data/net/`"},
			{Names: []string{"net:clean"},
				Does: "removes the network namespaces and TUN devices a crashed `net:run` left"},
		},
		NeedsRoot:     true,
		Requirements:  netrun.Requirements,
		NetnsPrefixes: []string{linkemu.DefaultPrefix},
		// The remote host's tests (Debian's openssh-server plays the
		// second host).
		TestRequirements: func(string) []deps.Requirement { return sshhost.TestRequirements() },
		CheckSpec: func(root string) error {
			_, err := netrun.LoadSpec(filepath.Join(root, spec.Path(netStudy)))
			return err
		},
		EstimateFor: func(root, profile string) time.Duration {
			s, err := netrun.LoadSpec(filepath.Join(root, spec.Path(netStudy)))
			if err != nil {
				return 0
			}
			e, err := netrun.Estimate(s, profile)
			if err != nil {
				return 0
			}
			return e.Expected
		},
		Run: func(ctx context.Context, cfg Config, specPath, dataDir string) (string, error) {
			return netrun.Run(ctx, netrun.RunConfig{Root: cfg.Root, Git: cfg.Git, Profile: cfg.Profile, Log: cfg.log(), Now: cfg.Now, SpecPath: specPath, DataDir: dataDir})
		},
		// The numbers the paper may state literally about the study.
		HandTyped: netstudy.HandTyped,

		StagesFor: func(root, profile, run string) ([]*repro.Stage, error) {
			return append([]*repro.Stage{netRecords(root, profile, run)}, netstudy.StagesFrom(run, recordsOut(netStudy, profile), netstudy.Params{})...), nil
		},
		Records:    netRecords,
		Claims:     netstudy.Claims,
		ClaimViews: netstudy.ClaimViews,
		Compare:    compareWith(netstudy.CompareItems),
		// Each compared median comes from a series on a link of its own:
		// the difference of two series carries the difference of their
		// links' RTT offsets, of one size whatever the difference's.
		BetweenScale: agreement.Absolute,
		Resample:     resampleWith(netstudy.Resampler, netstudy.ResampleMethod),
		// The same check netrun.Run makes before it creates anything.
		CannotRun: func(string) string {
			if os.Geteuid() != 0 {
				return "not root: " + netrun.ErrNeedRoot.Error()
			}
			return ""
		},
	})
}

// netRecords re-derives a Study B run's records from its captures.
func netRecords(root, profile, run string) *repro.Stage {
	return recordsStage(root, netStudy, profile, run, "experiments/net/netjoin", netjoin.Derive)
}
