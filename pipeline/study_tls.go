package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	atls "pqrepro/analysis/tlsmatrix"
	"pqrepro/experiments/handshake"
	"pqrepro/experiments/tlsjoin"
	"pqrepro/experiments/tlsmatrix"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

func init() {
	studies = append(studies, Study{
		Name:         tlsmatrix.Study,
		Title:        "Study A: TLS 1.3 signature x key-exchange matrix on one host",
		Requirements: tlsmatrix.Requirements,
		EstimateFor: func(root, profile string) time.Duration {
			return tlsmatrix.Estimates(root)[profile]
		},
		Run: func(ctx context.Context, cfg Config, specPath, dataDir string) error {
			_, err := tlsmatrix.Run(ctx, tlsmatrix.RunConfig{Root: cfg.Root, Git: cfg.Git, Profile: cfg.Profile, Log: cfg.log(), Verbose: cfg.Verbose, Now: cfg.Now, SpecPath: specPath, DataDir: dataDir})
			return err
		},
		StagesFor: tlsStagesFor,
		Records:   tlsRecords,
		// The capture needs an AF_PACKET socket: root or CAP_NET_RAW.
		CannotRun: func(string) string {
			if err := tlsmatrix.CheckPermission(); err != nil {
				return "cannot capture packets (AF_PACKET needs root or CAP_NET_RAW): " + err.Error()
			}
			return ""
		},
	})
}

// tlsStagesFor are Study A's analysis stages over a run folder, with the
// paper's configurations taken from experiments/tls.toml.
func tlsStagesFor(root, profile, run string) ([]*repro.Stage, error) {
	s, err := tlsmatrix.LoadSpec(filepath.Join(root, spec.Path(tlsmatrix.Study)))
	if err != nil {
		return nil, err
	}
	p := atls.DefaultParams(profile)
	p.Paper = nil
	for _, role := range atls.Roles {
		var found *tlsmatrix.PaperConfig
		for i := range s.Paper.Configs {
			if s.Paper.Configs[i].Name == role {
				found = &s.Paper.Configs[i]
			}
		}
		if found == nil {
			return nil, fmt.Errorf("%s: [[paper.configs]] has no configuration named %q", spec.Path(tlsmatrix.Study), role)
		}
		key, err := handshake.ParseCertKey(found.CertKey)
		if err != nil {
			return nil, err
		}
		group, err := handshake.ParseGroup(found.Group)
		if err != nil {
			return nil, err
		}
		p.Paper = append(p.Paper, tlsmatrix.ConfigName(key, group, s.Matrix.Chain))
	}
	p.Baseline = p.Paper[0]
	c := s.PrimaryCell(profile)
	p.Cell = atls.Cell{Stack: c.Stack, Path: c.Path, KeyShare: c.KeyShare}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return append([]*repro.Stage{tlsRecords(root, profile, run)}, atls.StagesFrom(run, recordsOut(tlsmatrix.Study, profile), p)...), nil
}

// tlsRecords re-derives a Study A run's records from its capture.
func tlsRecords(root, profile, run string) *repro.Stage {
	return recordsStage(root, tlsmatrix.Study, profile, run, "experiments/tlsjoin", tlsjoin.Derive)
}
