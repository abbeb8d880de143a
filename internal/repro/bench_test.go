package repro

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// studyLikeTree builds a tree shaped like the pipeline's committed data:
// three studies' raw datasets (Study B's 96,000 handshake records are the
// largest: about 20 MB of compressed records), four stages per study and
// a paper stage, 40 outputs in all.
func studyLikeTree(b *testing.B) (string, []*Stage) {
	b.Helper()
	root := b.TempDir()
	write := func(rel string, size int) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		buf := make([]byte, size)
		r := rand.New(rand.NewPCG(1, uint64(size)))
		for i := range buf {
			buf[i] = byte(r.Uint32())
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("go.mod", 20)
	write("analysis/a.go", 0)
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module bench\n"), 0o644)
	os.WriteFile(filepath.Join(root, "analysis/a.go"), []byte("package analysis\n"), 0o644)
	sizes := map[string]int{"tls": 8 << 20, "net": 20 << 20, "pico": 1 << 20}
	var stages []*Stage
	for _, study := range []string{"net", "pico", "tls"} {
		run := "data/" + study + "/20261130T120000Z-full"
		write(run+"/records.csv.gz", sizes[study])
		write(run+"/meta.json", 4<<10)
		prev := run
		for i := range 4 {
			var outs []string
			for j := range 2 + i%2*2 {
				outs = append(outs, fmt.Sprintf("out/%s/s%d/%d.dat", study, i, j))
			}
			in := prev
			stages = append(stages, &Stage{
				Name: fmt.Sprintf("%s:s%d", study, i), Code: []string{"analysis"},
				Inputs: []string{in}, Outputs: outs, Params: map[string]string{"profile": "full"},
				Run: func(ctx context.Context, env *Env) error {
					for _, o := range outs {
						if err := env.WriteFile(o, []byte(o)); err != nil {
							return err
						}
					}
					return nil
				},
			})
			prev = fmt.Sprintf("out/%s/s%d", study, i)
		}
	}
	paperOuts := []string{"paper/main.pdf"}
	stages = append(stages, &Stage{Name: "paper", Code: []string{"analysis"}, Inputs: []string{"out/*/s3"}, Outputs: paperOuts,
		Run: func(ctx context.Context, env *Env) error { return env.WriteFile("paper/main.pdf", []byte("pdf")) }})
	return root, stages
}

// BenchmarkNoopBuild measures a build in which nothing is stale, as
// `mage all` does it on a complete tree: open the hash cache, hash code
// and inputs (cache hits), compare with the lock, rewrite nothing.
//
//	go test -run '^$' -bench NoopBuild ./internal/repro
func BenchmarkNoopBuild(b *testing.B) {
	root, stages := studyLikeTree(b)
	cache := filepath.Join(root, ".cache", "hashes.json")
	e := &Engine{Root: root, Stages: stages, RawDirs: []string{"data"}, Hasher: OpenHashCache(cache)}
	if _, err := e.Build(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		e := &Engine{Root: root, Stages: stages, RawDirs: []string{"data"}, Hasher: OpenHashCache(cache)}
		rep, err := e.Build(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Ran) != 0 || e.Hasher.Reads != 0 {
			b.Fatalf("no-op build ran %v and read %d files", rep.Ran, e.Hasher.Reads)
		}
	}
}

// BenchmarkStatusNoCache is the same tree without the hash cache: every
// file is read and hashed, as on a fresh clone (and as verify does).
func BenchmarkStatusNoCache(b *testing.B) {
	root, stages := studyLikeTree(b)
	e := &Engine{Root: root, Stages: stages, RawDirs: []string{"data"}}
	if _, err := e.Build(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		e := &Engine{Root: root, Stages: stages, RawDirs: []string{"data"}}
		if _, err := e.Status(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
