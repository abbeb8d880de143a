package capture

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"pqrepro/experiments/instruments/handshake"
)

var (
	benchOnce sync.Once
	benchPath string
	benchDir  string
)

// benchCapture writes (once per process) a synthetic capture of 50,000
// TLS 1.3 connections (X25519MLKEM768-sized hellos, 10 packets each) to a
// temporary file; it is not committed.
func benchCapture(b *testing.B) string {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pqrepro-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = dir
		sy := newSynth(LinkEthernet)
		for i := range 50000 {
			c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), uint16(30000+i%30000))
			sy.conn(c, srv4, synthOpts{group: 0x11ec})
		}
		benchPath = filepath.Join(dir, "bench.pcap")
		if err := os.WriteFile(benchPath, sy.buf.Bytes(), 0o600); err != nil {
			b.Fatal(err)
		}
	})
	return benchPath
}

// BenchmarkRead measures the reader on 50,000 connections: MB/s from
// SetBytes, packets/s and connections/s as extra metrics.
func BenchmarkRead(b *testing.B) {
	path := benchCapture(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	var pkts int64
	for b.Loop() {
		f, _ := os.Open(path)
		res, err := Read(f, ReadOptions{})
		f.Close()
		if err != nil || len(res.Records) != 50000 {
			b.Fatalf("err %v, %d records", err, len(res.Records))
		}
		pkts = res.Packets
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(pkts)/sec, "packets/s")
	b.ReportMetric(50000/sec, "conns/s")
}

// BenchmarkCatSameFile copies the same file to /dev/null with cat: the I/O
// floor the reader's MB/s compares with.
func BenchmarkCatSameFile(b *testing.B) {
	path := benchCapture(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	for b.Loop() {
		cmd := exec.Command("cat", path)
		cmd.Stdout = null
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTsharkSameFile runs tshark over the same file extracting the
// same handshake fields, for the speed ratio.
func BenchmarkTsharkSameFile(b *testing.B) {
	if _, err := exec.LookPath("tshark"); err != nil {
		b.Skip("skipped: tshark not on PATH")
	}
	path := benchCapture(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	for b.Loop() {
		out, err := exec.Command("tshark", "-n", "-2", "-r", path, "-Y", "tls", "-T", "fields",
			"-e", "frame.time_epoch", "-e", "tcp.stream", "-e", "tls.record.content_type", "-e", "tls.handshake.type",
			"-e", "tls.handshake.extensions_key_share_group").Output()
		if err != nil || len(out) == 0 {
			b.Fatalf("tshark: %v", err)
		}
	}
}

// BenchmarkCaptureHandshakeRate runs sequential X25519/Ed25519 handshakes on
// lo (the harness's maximum rate: one client, one server) while capturing,
// and fails if the kernel dropped any packet.
func BenchmarkCaptureHandshakeRate(b *testing.B) {
	needRoot(b)
	path := filepath.Join(b.TempDir(), "rate.pcapng")
	c, err := Start(context.Background(), Options{Interface: "lo", Path: path})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	_, err = handshake.Run(context.Background(), handshake.Config{Group: tls.X25519, Cert: handshake.CertConfig{Key: handshake.Ed25519}, N: b.N, KeyLog: c.KeyLog()})
	elapsed := time.Since(start)
	b.StopTimer()
	st, serr := c.Stop()
	if err != nil || serr != nil {
		b.Fatal(err, serr)
	}
	if err := st.Valid(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "handshakes/s")
	b.ReportMetric(float64(st.KernelDrops), "drops")
	b.ReportMetric(float64(st.Packets)/elapsed.Seconds(), "captured-packets/s")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// orderCapture is one connection whose client sends n one-byte segments
// (a ClientHello, then application records) in the given order.
func orderCapture(n int, order string) []byte {
	stream := clientHello(300)
	for len(stream) < n {
		stream = append(stream, tlsRecord(23, make([]byte, min(16000, n-len(stream))))...)
	}
	stream = stream[:n]
	segs := make([]synthSeg, n)
	for i := range segs {
		segs[i] = synthSeg{0, i, 1}
	}
	switch order {
	case "reversed":
		slices.Reverse(segs)
	case "shuffled":
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		rng.Shuffle(len(segs), func(i, j int) { segs[i], segs[j] = segs[j], segs[i] })
	}
	sy := newSynth(LinkEthernet)
	sy.segments(segStream{c: cli4, s: srv4, streams: [2][]byte{stream, nil}}, segs)
	return sy.buf.Bytes()
}

// cpuNs is the process's user+system CPU time: on a machine shared with
// other work, CPU time per operation is steadier than wall time.
func cpuNs() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkReadSegmentOrder reads n one-byte segments of one connection in
// order, reversed and shuffled: reassembly costs O(log n) per segment
// whatever the order, so the three stay close (issue 14: reversed order
// used to take 48 s for 160k segments).
func BenchmarkReadSegmentOrder(b *testing.B) {
	for _, n := range []int{40_000, 80_000, 160_000} {
		for _, order := range []string{"inorder", "reversed", "shuffled"} {
			b.Run(fmt.Sprintf("%s/%dk", order, n/1000), func(b *testing.B) {
				data := orderCapture(n, order)
				b.SetBytes(int64(len(data)))
				cpu0 := cpuNs()
				for b.Loop() {
					res, err := Read(bytes.NewReader(data), ReadOptions{})
					if err != nil || len(res.Records) != 1 || res.Records[0].ClientHelloNs == nil {
						b.Fatalf("err %v, records %v", err, res.Records)
					}
				}
				b.ReportMetric(float64(cpuNs()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// codecBenchInputs are the committed Study B quick run's transfer
// captures, trimmed as the runner trims them, or, without that run, a
// trimmed synthetic pcapng capture of 2,000 connections.
func codecBenchInputs(b *testing.B) [][]byte {
	var in [][]byte
	for _, p := range quickTransferCaptures(b) {
		in = append(in, trimmedOf(b, p))
	}
	if len(in) == 0 {
		sy := newSynth(LinkEthernet)
		for i := range 2000 {
			c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), uint16(30000+i))
			sy.conn(c, srv4, synthOpts{group: 0x11ec})
		}
		var out bytes.Buffer
		if _, err := Trim(&out, bytes.NewReader(toPcapng(b, sy.buf.Bytes(), nil))); err != nil {
			b.Fatal(err)
		}
		in = append(in, out.Bytes())
	}
	return in
}

// BenchmarkCodecEncode measures EncodeCapture (which decodes its output
// to check it): MB/s of the trimmed capture, packets/s, and the encoded
// bytes per packet.
func BenchmarkCodecEncode(b *testing.B) {
	in := codecBenchInputs(b)
	var size, pkts, enc int64
	for _, c := range in {
		res, _ := Read(bytes.NewReader(c), ReadOptions{})
		size, pkts = size+int64(len(c)), pkts+res.Packets
	}
	b.SetBytes(size)
	for b.Loop() {
		enc = 0
		for _, c := range in {
			e, err := EncodeCapture(c)
			if err != nil {
				b.Fatal(err)
			}
			enc += int64(len(e))
		}
	}
	b.ReportMetric(float64(pkts)*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
	b.ReportMetric(float64(enc)/float64(pkts), "B/packet")
}

// BenchmarkCodecDecode measures DecodeCapture: MB/s of the trimmed
// capture given back, and packets/s.
func BenchmarkCodecDecode(b *testing.B) {
	var encs [][]byte
	var size, pkts int64
	for _, c := range codecBenchInputs(b) {
		e, err := EncodeCapture(c)
		if err != nil {
			b.Fatal(err)
		}
		res, _ := Read(bytes.NewReader(c), ReadOptions{})
		encs, size, pkts = append(encs, e), size+int64(len(c)), pkts+res.Packets
	}
	b.SetBytes(size)
	for b.Loop() {
		for _, e := range encs {
			if _, err := DecodeCapture(e); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(pkts)*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}
