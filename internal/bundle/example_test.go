package bundle_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"pqrepro/internal/bundle"
)

// Write bundles one commit of a repository; two bundles of the same
// commit and SOURCE_DATE_EPOCH are the same bytes.
func ExampleWrite() {
	root, _ := os.MkdirTemp("", "bundle-example-")
	defer os.RemoveAll(root)
	for name, text := range map[string]string{
		"README.md":    "# demo\n",
		"CITATION.cff": "cff-version: 1.2.0\n",
		"LICENSE":      "BSD-3-Clause\n",
		"LICENSE-DATA": "CC-BY-4.0\n",
		"SHA256SUMS":   "",
	} {
		os.WriteFile(filepath.Join(root, name), []byte(text), 0o644)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=demo", "-c", "user.email=demo@example.org", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Printf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "demo")

	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var sums []string
	for range 2 {
		rep, err := bundle.Write(context.Background(), bundle.Options{Root: root, OutDir: filepath.Join(root, ".out", fmt.Sprint(len(sums))), Version: "demo", Epoch: epoch})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(filepath.Base(rep.Path))
		sums = append(sums, rep.SHA256)
	}
	fmt.Println("byte-identical:", sums[0] == sums[1])
	// Output:
	// pqrepro-demo.tar.gz
	// pqrepro-demo.tar.gz
	// byte-identical: true
}

// Measure times targets with an injected clock; the result is what
// `PQREPRO_BUNDLE_MEASURE=1 mage bundle` commits.
func ExampleMeasure() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ticks := 0
	clock := func() time.Time { ticks++; return t0.Add(time.Duration(ticks) * 2 * time.Second) }
	steps := []bundle.Step{
		{Name: "verify", Note: "re-derives every stage", Run: func(context.Context) error { return nil }},
		{Name: "paper", Run: func(context.Context) error { return fmt.Errorf("pdflatex not found") }},
	}
	t, _ := bundle.Measure(context.Background(), "2 cores", "go1.27.3", steps, clock, nil)
	fmt.Println(t.Targets["verify"].Seconds, t.Targets["verify"].Note)
	fmt.Println(t.Targets["paper"].Failed, t.Targets["paper"].Note)
	// Output:
	// 2 re-derives every stage
	// true failed: pdflatex not found
}
