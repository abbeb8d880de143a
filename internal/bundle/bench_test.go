package bundle

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWriteCapture bundles the fixture plus a 32 MB capture-like
// blob (packet headers that repeat, payloads that do not), to show the
// throughput of hashing, checking and compressing the store.
//
//	go test -run '^$' -bench WriteCapture ./internal/bundle
func BenchmarkWriteCapture(b *testing.B) {
	f := newFixture(b)
	const n = 32 << 20
	buf := make([]byte, 0, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for len(buf) < n {
		hdr := []byte{0x45, 0, 0x05, 0xdc, 0, 0, 0x40, 0, 0x40, 6, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1}
		buf = append(buf, hdr...)
		for range 1480 / 8 {
			buf = binary.LittleEndian.AppendUint64(buf, rng.Uint64())
		}
	}
	src := filepath.Join(b.TempDir(), "big.pcapng")
	if err := os.WriteFile(src, buf[:n], 0o644); err != nil {
		b.Fatal(err)
	}
	sum, err := f.Store.Put(src)
	if err != nil {
		b.Fatal(err)
	}
	writeFile(b, f.Root, "data/tls/big/meta.json", `{"study":"tls","files":{"big.pcapng":"`+sum+`"}}`, 0o644)
	f.commit(b, "big")
	b.SetBytes(n)
	b.ResetTimer()
	for range b.N {
		o := f.opts()
		o.OutDir = b.TempDir()
		rep, err := Write(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rep.Size)/float64(n), "compressed/raw")
	}
}
