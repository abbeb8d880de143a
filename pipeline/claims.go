package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"pqrepro/analysis/claims"
	"pqrepro/internal/repro"
)

// withClaims adds the claims stage; tests of the pipeline's mechanics
// over a fake study turn it off (the claims are tested in analysis/claims).
var withClaims = true

// claimsStage evaluates the published claims of every registered study
// on the results of every study whose analysis is in the pipeline; the
// others are reported as not measurable, with the command that would make
// them measurable.
func claimsStage(stages []*repro.Stage) *repro.Stage {
	var in []claims.StudyClaims
	for _, s := range paperOrder() {
		c := claims.StudyClaims{Name: s.Name, Label: s.Label, Code: s.ClaimsCode}
		if s.Claims != nil {
			c.Claims = s.Claims()
		}
		p := "results/" + s.Name + ".json"
		for _, st := range stages {
			if slices.Contains(st.Outputs, p) {
				c.Results = p
			}
		}
		if c.Results == "" {
			c.Missing = fmt.Sprintf("no dataset pinned for %s: run `mage %s:run`", s.Title, s.Name)
		}
		in = append(in, c)
	}
	return claims.Stage(in)
}

// Claims brings the claims stage up to date and prints the verdict table.
func Claims(ctx context.Context, cfg Config) error {
	if err := Build(ctx, cfg, "claims"); err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(cfg.Root, claims.JSONFile))
	if err != nil {
		return err
	}
	var rep claims.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("read %s: %w", claims.JSONFile, err)
	}
	fmt.Fprint(cfg.log(), claims.Text(rep, labels()))
	return nil
}
