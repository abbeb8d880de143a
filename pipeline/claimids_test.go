package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pqrepro/analysis/claims"
)

// TestOneClaimIDScheme: the claims the pipeline gathers from the studies'
// analysis packages are the one list of IDs that the committed claims
// table (results/claims.json, rendered into the paper, printed by `mage
// claims` and `mage all`) and the bundle's appendix show, in the same
// order, each ID once.
func TestOneClaimIDScheme(t *testing.T) {
	var ids []string
	seen := map[string]bool{}
	for _, c := range claims.All(catalogues()) {
		if seen[c.ID] {
			t.Errorf("claim ID %s appears twice across the studies", c.ID)
		}
		seen[c.ID] = true
		ids = append(ids, c.ID)
	}
	var bundled []string
	for _, c := range bundleClaims() {
		bundled = append(bundled, c.ID)
	}
	if !slices.Equal(bundled, ids) {
		t.Errorf("the bundle's appendix lists %v, the catalogues %v", bundled, ids)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot(t), claims.JSONFile))
	if err != nil {
		t.Fatalf("read the committed %s: %v", claims.JSONFile, err)
	}
	var rep claims.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var committed []string
	for _, c := range rep.Claims {
		committed = append(committed, c.ID)
	}
	if !slices.Equal(committed, ids) {
		t.Errorf("the committed %s has %v, the catalogues %v: rebuild with `go run mage.go build`", claims.JSONFile, committed, ids)
	}
}

// TestOneCountedClaimPerQuantity: across the three studies no two
// counted claims derive from the same measured quantity; everything
// computed from another claim is derived (shown, not counted).
func TestOneCountedClaimPerQuantity(t *testing.T) {
	for _, err := range claims.CheckOneQuantity(claims.All(catalogues())) {
		t.Error(err)
	}
}

// TestEveryClaimTimed: the committed timing table has a rule line for
// every claim and no line for a claim that does not exist, so that every
// verdict says whether its rule predates its study's data.
func TestEveryClaimTimed(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), claims.TimingFile))
	if err != nil {
		t.Fatal(err)
	}
	tm, err := claims.ParseTiming(b)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range claims.All(catalogues()) {
		seen[c.ID] = true
		if _, err := tm.Of(c.ID, c.Study); err != nil {
			t.Error(err)
		}
	}
	for id := range tm.Rules {
		if !seen[id] {
			t.Errorf("%s has a rule line for %s, which no study claims", claims.TimingFile, id)
		}
	}
}
