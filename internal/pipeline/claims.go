package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"pqrepro/analysis/claims"
	"pqrepro/analysis/netstudy"
	"pqrepro/analysis/pico"
	"pqrepro/analysis/tlsmatrix"
	"pqrepro/internal/bundle"
	"pqrepro/internal/repro"
)

// withClaims adds the claims stage; tests of the pipeline's mechanics
// over a fake study turn it off (the claims are tested in analysis/claims).
var withClaims = true

// catalogues are the studies' claims in the order of the paper, each as
// its analysis package states it beside its published values: the one
// list of claims and IDs that the claims stage, `mage claims`, `mage all`'s
// table and the bundle's appendix show. Tests replace it.
var catalogues = func() []claims.Catalogue {
	return []claims.Catalogue{tlsmatrix.Claims(), netstudy.Claims(), pico.Claims()}
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

// claimsStage evaluates the published claims on the results of every
// study whose analysis is in the pipeline; the others are reported as not
// measurable, with the command that would make them measurable.
func claimsStage(stages []*repro.Stage) *repro.Stage {
	results := map[string]string{}
	missing := map[string]string{}
	for _, s := range Studies() {
		p := "results/" + s.Name + ".json"
		found := false
		for _, st := range stages {
			for _, o := range st.Outputs {
				if o == p {
					found = true
				}
			}
		}
		if found {
			results[s.Name] = p
		} else {
			missing[s.Name] = fmt.Sprintf("no dataset pinned for %s: run `mage %s:run`", s.Title, s.Name)
		}
	}
	return claims.Stage(results, missing, catalogues())
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
	fmt.Fprint(cfg.log(), claims.Text(rep))
	return nil
}
