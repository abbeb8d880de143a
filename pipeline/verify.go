package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"pqrepro/internal/deps"
	"pqrepro/internal/repro"
)

// ErrVerify is returned by Verify when the artifact does not verify.
var ErrVerify = errors.New("verification failed")

// Verify checks every raw data hash and re-derives every output from the
// committed data, printing one line per differing or missing file.
func Verify(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	e, err := Engine(cfg)
	if err != nil {
		return err
	}
	for _, s := range e.Stages {
		if s.Name == "paper" {
			// Like every other target, verify installs what it needs
			// after saying what (deps.Installer.Ensure prints it); without
			// root or sudo the error gives the one command to run.
			if err := cfg.installer().Ensure(ctx, []deps.Requirement{reqLatex}); err != nil {
				return fmt.Errorf("verify re-builds paper/main.pdf and needs pdflatex: %w", err)
			}
		}
	}
	start := cfg.now()
	// 1. Every pinned run against its manifest, re-reading every file.
	ev, err := checkEvidence(cfg, nil)
	if err != nil {
		return err
	}
	cfg.printf("%s", ev.line(cfg.now().Sub(start)))
	// 2. SHA256SUMS and the re-derivation of every output.
	cfg.printf("verify: checking %s and re-deriving %d stages in a temporary tree", repro.SumsFile, len(e.Stages))
	rep, err := e.Verify(ctx)
	if err != nil {
		return err
	}
	// Every file-level finding first, one line per file, then the
	// stages that failed: a failing stage never hides a FAIL line.
	problems := repro.MergeProblems(append(ev.Problems, rep.Problems...))
	for _, p := range problems {
		cfg.printf("FAIL %s", p)
	}
	for _, se := range rep.StageErrors {
		cfg.printf("ERROR stage %s: %v", se.Stage, se.Err)
	}
	cfg.printf("verify: %d files hashed, %d outputs re-derived, %d problems, %d failed stages (%v)",
		rep.Checked, rep.Rederived, len(problems), len(rep.StageErrors), cfg.now().Sub(start).Round(time.Millisecond))
	if len(problems) > 0 || len(rep.StageErrors) > 0 {
		return fmt.Errorf("%w: %d problems and %d failed stages (listed above)", ErrVerify, len(problems), len(rep.StageErrors))
	}
	cfg.printf("verify: OK, every output follows byte for byte from the committed data")
	return nil
}
