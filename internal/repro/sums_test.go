package repro

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckListed(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("data/a.txt", "a\n")
	write("results/b.json", "changed\n")
	sumA, err := HashFile(filepath.Join(root, "data", "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Repeat("0", 64)
	entries := []SumEntry{
		{Path: "data/a.txt", SHA256: sumA, Line: 1},
		{Path: "results/b.json", SHA256: other, Line: 2},
		{Path: "figures/gone.pdf", SHA256: other, Line: 3},
	}
	problems, err := CheckListed(context.Background(), root, entries)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Path+": "+p.What)
	}
	want := []string{
		"results/b.json: content differs from SHA256SUMS: listed sha256 000000000000, file has ",
		"figures/gone.pdf: missing (listed in SHA256SUMS line 3)",
	}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want %q...", i, got[i], want[i])
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := CheckListed(ctx, root, entries); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
