package netstudy

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pqrepro/analysis/claims"
	"pqrepro/internal/repro"
)

// TestClaimsStageRefusesMistypedResults is issue 44's case: every
// diff_pct of results/net.json a string ("12.3"). The claims stage must
// fail naming the file and the field, not report B1-B8 "not
// measurable here", and leave what the last good build sealed as it was.
func TestClaimsStageRefusesMistypedResults(t *testing.T) {
	good, err := os.ReadFile("../../results/net.json")
	if err != nil {
		t.Skipf("no committed results/net.json: %v", err)
	}
	root := t.TempDir()
	write := func(name string, b []byte) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte("module pqrepro\n"))
	write("analysis/claims/x.go", []byte("package claims\n"))
	write("analysis/netstudy/x.go", []byte("package netstudy\n"))
	for _, f := range []string{claims.RuleFile, claims.HistoryFile, claims.PreregistrationFile, claims.TimingFile} {
		b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		write(f, b)
	}
	write(ResultsFile, good)
	st := claims.Stage([]claims.StudyClaims{{Name: "net", Label: "B", Results: ResultsFile, Catalogue: Claims(), Views: ClaimViews()}})
	e := &repro.Engine{Root: root, Stages: []*repro.Stage{st}}
	if _, err := e.Build(context.Background()); err != nil {
		t.Fatalf("the committed results: %v", err)
	}
	sealed := map[string][]byte{}
	for _, f := range append([]string{"SHA256SUMS", "pqrepro.lock"}, st.Outputs...) {
		sealed[f], _ = os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
	}

	bad := regexp.MustCompile(`("diff_pct": )(-?[0-9][0-9.e+-]*)`).ReplaceAll(good, []byte(`$1"$2"`))
	if bytes.Equal(bad, good) {
		t.Fatal("results/net.json has no diff_pct to mistype")
	}
	write(ResultsFile, bad)
	_, err = e.Build(context.Background())
	if err == nil {
		b, _ := os.ReadFile(filepath.Join(root, claims.JSONFile))
		t.Fatalf("the claims stage accepted every diff_pct as a string; results/claims.json:\n%.600s", b)
	}
	for _, want := range []string{`results/net.json: field comparisons[0].diff_pct: want a number or null, got string "`, "go run mage.go build"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	for f, b := range sealed {
		if now, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(f))); !bytes.Equal(now, b) {
			t.Errorf("%s was rewritten by the failed build", f)
		}
	}
}
