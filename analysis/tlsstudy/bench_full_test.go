package tlsstudy

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"pqrepro/datasets/tlsdata"
)

// pinnedFull is the run folder experiments/tls.toml pins for the full
// profile ([runs] full = "<run-id>@sha256:..."), or "".
func pinnedFull(tb testing.TB) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "experiments", "tls.toml"))
	if err != nil {
		tb.Skipf("no spec: %v", err)
	}
	m := regexp.MustCompile(`(?m)^full\s*=\s*"([^"@]+)@`).FindSubmatch(b)
	if m == nil {
		tb.Skip("experiments/tls.toml pins no full run")
	}
	return filepath.Join("..", "..", "data", "tls", string(m[1]))
}

// BenchmarkAnalyzeFullRun is the Study A analysis of the pinned full run
// (36,880 connections) with the round-level resampling: per comparison a
// cluster bootstrap over rounds, beside the independent-sample
// bootstrap, Hodges-Lehmann and Cliff's delta of every comparison, and
// the gap analysis's factor effects. Reading the records is outside the
// timed loop. Run with -benchtime=1x to check it works.
func BenchmarkAnalyzeFullRun(b *testing.B) {
	path := filepath.Join(pinnedFull(b), tlsdata.RecordsFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Skipf("pinned full run not present: %v", err)
	}
	recs, err := tlsdata.ReadRecords(bytes.NewReader(raw), path)
	if err != nil {
		b.Fatal(err)
	}
	p := DefaultParams("full")
	p.Cell = Cell{Stack: tlsdata.StackOpenSSL, Path: "bridge", KeyShare: KeyShareDirect}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Analyze(recs, p, Input{Path: path}); err != nil {
			b.Fatal(err)
		}
	}
}
