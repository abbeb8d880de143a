package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"pqrepro/analysis/claims"
	"pqrepro/internal/bundle"
	"pqrepro/internal/repro"
)

// withClaims adds the claims stage; tests of the pipeline's mechanics
// over a fake study turn it off (the claims are tested in analysis/claims).
var withClaims = true

// catalogues are the registered studies' claims in the order of the
// paper, each as its analysis package states it beside its published
// values. They are the one list of claims and IDs that the claims stage, `mage
// claims`, `mage all`'s table and the bundle's appendix show. Tests
// replace it.
var catalogues = func() []claims.Catalogue {
	var out []claims.Catalogue
	for _, s := range paperOrder() {
		if s.Claims != nil {
			out = append(out, s.Claims())
		}
	}
	return out
}

// bundleClaims are the catalogues' claims as the bundle's appendix lists
// them, under the same IDs.
func bundleClaims() []bundle.Claim {
	var out []bundle.Claim
	for _, c := range claims.All(catalogues()) {
		out = append(out, bundle.Claim{ID: c.ID, Study: c.Study, Statement: c.Statement, Published: c.Published})
	}
	return out
}

// claimsStage evaluates the published claims of every registered study
// on the results of every study whose analysis is in the pipeline. The
// others are reported as not measurable, with the command that would make
// them measurable.
func claimsStage(stages []*repro.Stage) *repro.Stage {
	cats := map[string]claims.Catalogue{}
	for _, c := range catalogues() {
		cats[c.Study] = c
	}
	var in []claims.StudyClaims
	for _, s := range paperOrder() {
		c := claims.StudyClaims{Name: s.Name, Label: s.Label, Catalogue: cats[s.Name]}
		if s.ClaimViews != nil {
			c.Views = s.ClaimViews()
		}
		p := "results/" + s.Name + ".json"
		for _, st := range stages {
			if slices.Contains(st.Outputs, p) {
				c.Results = p
			}
		}
		for _, st := range stages {
			if a := "results/" + s.Name + "-alternatives.json"; slices.Contains(st.Outputs, a) {
				c.Alternatives = a
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
