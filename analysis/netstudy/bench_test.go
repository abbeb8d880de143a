package netstudy

import (
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"testing"

	"pqrepro/internal/repro"
)

// pinnedFullRun returns the run folder (data/net/<id>) of the full
// reference run that experiments/net.toml's [runs] table pins.
func pinnedFullRun(b *testing.B) string {
	spec, err := os.ReadFile("../../experiments/net.toml")
	if err != nil {
		b.Skip("no experiments/net.toml:", err)
	}
	m := regexp.MustCompile(`(?m)^full\s*=\s*"([^"@]+)@`).FindSubmatch(spec)
	if m == nil {
		b.Skip("experiments/net.toml pins no full run")
	}
	return path.Join("data/net", string(m[1]))
}

// BenchmarkAnalyzeFullRun runs Study B's stages (net:analyze with the
// block bootstrap of every series, net:figures, net:tables) on the pinned
// full run, copied into a temporary tree: the cost the inference adds to
// a build. Run with -benchtime=1x.
func BenchmarkAnalyzeFullRun(b *testing.B) {
	run := pinnedFullRun(b)
	src := filepath.Join("../..", filepath.FromSlash(run))
	entries, err := os.ReadDir(src)
	if err != nil {
		b.Skip("the pinned full run is not in this tree:", err)
	}
	root := b.TempDir()
	dst := filepath.Join(root, filepath.FromSlash(run))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		b.StopTimer()
		for _, out := range []string{"results", "figures", "paper", ".repro"} {
			os.RemoveAll(filepath.Join(root, out))
		}
		b.StartTimer()
		e := &repro.Engine{Root: root, CodeRoot: codeRoot(b), Stages: Stages(run, Params{SourceDateEpoch: testDate}), RawDirs: []string{"data"}, Log: &bytes.Buffer{}}
		if _, err := e.Build(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
