package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"pqrepro/experiments/instruments/rederive"
	"strings"
	"time"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/netstudy"
	"pqrepro/analysis/ttlb"
	"pqrepro/analysis/ttlbmechanism"
	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/net/netjoin"
	"pqrepro/experiments/net/netrun"
	"pqrepro/internal/deps"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
	"pqrepro/internal/spec"
)

const netStudy = "net"

func init() {
	studies = append(studies, Study{
		Name:  netStudy,
		Label: "B",
		// Two runs holding one identical file of these are copies.
		Timed:    []string{rederive.RecordsFile, rederive.InprocFile},
		Title:    "Study B: X25519 vs X25519MLKEM768 across emulated networks",
		Citation: `"Análise Comparativa de Performance entre Criptografia Clássica e Pós-Quântica no TLS 1.3" (Marques, Zavan, 2026)`,
		Packages: []string{"experiments/net/netrun", "datasets/netdata", "analysis/netstudy", "analysis/ttlb", "analysis/ttlbmechanism"},
		Targets: []TargetDoc{
			{Names: []string{"net:run"},
				Does: "Study B: handshakes across emulated links (network namespaces, TUN; root), with the endpoint built by each toolchain of the profile, into a new run under `data/net/`"},
			{Names: []string{"net:clean"},
				Does: "removes the network namespaces and TUN devices a crashed `net:run` left"},
		},
		NeedsRoot:    true,
		Requirements: netrun.Requirements,
		Leftovers:    func() []Leftover { return []Leftover{netnsLeftovers("net:run", linkemu.DefaultPrefix)} },
		Clean: func(ctx context.Context, cfg Config, target string) ([]string, error) {
			if target != "net:clean" {
				return nil, nil
			}
			return netnsClean(cfg, linkemu.DefaultPrefix)
		},
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
			return runID(netrun.Run(ctx, netrun.RunConfig{Config: cfg.lifeConfig(specPath, dataDir), Store: cfg.store()}))
		},
		// The numbers the paper may state literally about the study.
		HandTyped: netstudy.HandTyped,

		StagesFor: func(root, profile, run string, set settings.Settings) ([]*repro.Stage, error) {
			records, params := recordsOut(netStudy, profile), netstudy.Params{SourceDateEpoch: set.SourceDateEpoch}
			// The transfer block (our extension) reads the same records;
			// its registered mechanism reads the block's rows alone.
			return append(netstudy.StagesFrom(run, records, params), ttlb.Stage(run, records, params), ttlbmechanism.Stage(run)), nil
		},
		Records:    netRecords,
		Claims:     netstudy.Claims,
		ClaimViews: netstudy.ClaimViews,
		Results: resultsOf[netstudy.Results]{Decode: netstudy.DecodeResults, Items: netstudy.CompareItems,
			Resampler: netstudy.Resampler, Method: netstudy.ResampleMethod}.decode,
		// Each compared median comes from a series on a link of its own:
		// the difference of two series carries the difference of their
		// links' RTT offsets, of one size whatever the difference's.
		BetweenScale: agreement.Absolute,
		Normalised:   netNormalised,
		// The same check netrun.Run makes before it creates anything.
		CannotRun: func(string) string {
			if os.Geteuid() != 0 {
				return "not root: " + netrun.ErrNeedRoot.Error()
			}
			return ""
		},
	})
}

// netRecords re-derives a Study B run's records from its captures, and
// its transfer block's rows (transfer.csv.gz) from the trimmed transfer
// captures a run since issue 41 commits (netjoin.TrimmedName).
func netRecords(root, profile, run string, set settings.Settings) *repro.Stage {
	return recordsStage(root, netStudy, profile, run, "experiments/net/netjoin", netjoin.Derive, set,
		rederive.Also{File: netdata.TransferFile, What: "trimmed transfer captures", Of: netjoin.IsTrimmed, Derive: netjoin.DeriveTransfer})
}

// netnsLeftovers lists the network namespaces named prefix* whose
// creator is dead (linkemu.Orphaned), which a killed run left: Study B's
// links and Study A's bridge path name theirs the linkemu way.
func netnsLeftovers(run, prefix string) Leftover {
	orphans, _ := linkemu.Orphaned("", prefix)
	return Leftover{What: "network namespaces of a killed " + run, Items: orphans, RemovedBy: "net:clean"}
}

// netnsClean removes the network namespaces named prefix* whose creator
// is dead (linkemu.Clean; with them their TUN, veth and bridge devices),
// says which it removed and which it kept, and returns the removed ones.
func netnsClean(cfg Config, prefix string) ([]string, error) {
	rep, err := linkemu.Clean("", prefix, false)
	if err != nil {
		return nil, fmt.Errorf("net:clean: %w", err)
	}
	switch {
	case len(rep.Removed) == 0 && len(rep.InUse) == 0:
		cfg.printf("net:clean: no namespace named %s* left behind", prefix)
	default:
		if len(rep.Removed) > 0 {
			cfg.printf("net:clean: removed %s", strings.Join(rep.Removed, ", "))
		}
		if len(rep.InUse) > 0 {
			cfg.printf("net:clean: kept %s (their process is still running)", strings.Join(rep.InUse, ", "))
		}
	}
	return rep.Removed, nil
}

// netNormalised is Study B's normalised items of one run's results: each
// comparison's difference over the host's prediction from the run's own
// probe (netstudy.NormalisedDifferences).
func netNormalised(name string, b []byte) ([]agreement.Normalised, error) {
	r, err := netstudy.DecodeResults(name, b)
	if err != nil {
		return nil, err
	}
	out := make([]agreement.Normalised, len(r.Normalised))
	for i, n := range r.Normalised {
		out[i] = agreement.Normalised{Name: fmt.Sprintf("%s round %d difference / host prediction", n.Scenario, n.Round),
			Observed: float64(n.ObservedMs), Predicted: float64(n.PredictedMs), Ratio: float64(n.Ratio), NotJudged: n.NotJudged}
	}
	return out, nil
}
