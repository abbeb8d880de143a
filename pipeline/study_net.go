package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	anet "pqrepro/analysis/netstudy"
	"pqrepro/experiments/linkemu"
	"pqrepro/experiments/netjoin"
	"pqrepro/experiments/netstudy"
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
		Packages: []string{"experiments/netstudy", "datasets/netdata", "analysis/netstudy"},
		Targets: []TargetDoc{
			{Names: []string{"net:run"},
				Does: "Study B: handshakes across emulated links (network namespaces, TUN; root), with the endpoint built by each toolchain of the profile, into a new run under `data/net/`",
				Time: "quick 33 s (840 handshakes: Go 1.24.4 and 1.27.3, endpoints cached); full: see below"},
			{Names: []string{"net:clean"},
				Does: "removes the network namespaces and TUN devices a crashed `net:run` left",
				Time: "under a second"},
		},
		NeedsRoot:     true,
		Requirements:  netstudy.Requirements,
		NetnsPrefixes: []string{linkemu.DefaultPrefix},
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
		Claims:  catalogueClaims(netStudy),
		Compare: compareNet,
		// The same check netstudy.Run makes before it creates anything.
		CannotRun: func(string) string {
			if os.Geteuid() != 0 {
				return "not root: " + netstudy.ErrNeedRoot.Error()
			}
			return ""
		},
	})
}

// compareNet compares two Study B runs: per scenario and round, the
// difference's direction and significance and the X25519 median.
func compareNet(c *itemComparer) {
	for _, x := range c.list("ref", "comparisons") {
		m := x.(map[string]any)
		item := fmt.Sprintf("%v round %v", m["scenario"], m["round"])
		var nm map[string]any
		for _, d := range c.list("new", "comparisons") {
			if dm := d.(map[string]any); dm["scenario"] == m["scenario"] && dm["round"] == m["round"] {
				nm = dm
			}
		}
		if nm == nil {
			c.missing(item)
			continue
		}
		rd, rp := netEffect(m)
		nd, np := netEffect(nm)
		o, why := compareEffect(rd, rp, nd, np)
		c.add(item+" difference", fmt.Sprintf("%+.3f ms, p %.2g", rd, rp), fmt.Sprintf("%+.3f ms, p %.2g", nd, np), o, why)
		rb, _ := m["baseline_median_ms"].(float64)
		nb, _ := nm["baseline_median_ms"].(float64)
		c.median(item+" X25519 median ms", rb, nb, reproduceMedianTol)
	}
}

// netEffect is a Study B comparison's difference and its p-value as the
// study tests it (Mann-Whitney U, Bonferroni-corrected; the uncorrected
// p when the results predate the correction). NaN when absent.
func netEffect(m map[string]any) (diff, p float64) {
	diff, _ = m["diff_ms"].(float64)
	p = math.NaN()
	for _, k := range []string{"mwu_p_bonferroni", "mwu_p"} {
		if v, ok := m[k].(float64); ok {
			return diff, v
		}
	}
	return diff, p
}

// netRecords re-derives a Study B run's records from its captures.
func netRecords(root, profile, run string) *repro.Stage {
	return recordsStage(root, netStudy, profile, run, "experiments/netjoin", netjoin.Derive)
}
