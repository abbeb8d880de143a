package picoboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"pqrepro/datasets/picodata"
)

// fakeClock advances by step at every reading.
func fakeClock(step time.Duration) func() time.Time {
	var mu sync.Mutex
	t := time.Unix(0, 0)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(step)
		return t
	}
}

var tinyProfile = Profile{Name: "tiny", KEM: 2, DSAKeygen: 1, DSASign: 2, RSAKeygen: 0, RSA: 1, ECC: 2}

func TestHostTimings(t *testing.T) {
	var progress strings.Builder
	got, err := HostTimings(context.Background(), HostConfig{Profile: tinyProfile, Clock: fakeClock(time.Microsecond), Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, s := range picodata.KEMSchemes {
		for _, op := range []string{"keygen", "encaps", "decaps"} {
			want[s+"/"+op+"/circl"] = 2
			if s != "ml-kem-512" {
				want[s+"/"+op+"/crypto/mlkem"] = 2
			}
		}
	}
	for _, s := range picodata.DSASchemes {
		for _, lib := range []string{"circl", "crypto/mldsa"} {
			want[s+"/keygen/"+lib] = 1
			want[s+"/sign/"+lib] = 2
			want[s+"/verify/"+lib] = 2
		}
	}
	want["rsa-2048/sign/crypto/rsa"] = 1
	want["rsa-2048/verify/crypto/rsa"] = 1
	for _, op := range []string{"keygen", "sign", "verify"} {
		want["ecdsa-p256/"+op+"/crypto/ecdsa"] = 2
	}
	for _, op := range []string{"keygen", "shared", "exchange"} {
		want["ecdh-p256/"+op+"/crypto/ecdh"] = 2
	}
	if len(got) != len(want) {
		t.Errorf("%d timings, want %d", len(got), len(want))
	}
	for _, h := range got {
		key := h.Scheme + "/" + h.Op + "/" + h.Lib
		if n, ok := want[key]; !ok || h.N != n || len(h.Durations) != n {
			t.Errorf("%s: n=%d with %d durations, want %d (listed: %v)", key, h.N, len(h.Durations), n, ok)
		}
		for _, d := range h.Durations {
			if d != time.Microsecond {
				t.Errorf("%s: duration %v not from the injected clock", key, d)
			}
		}
		delete(want, key)
	}
	if len(want) > 0 {
		t.Errorf("missing %v", want)
	}
	if strings.Count(progress.String(), "\n") != len(got) {
		t.Errorf("progress:\n%s", progress.String())
	}
}

func TestHostTimingsRSAKeygen(t *testing.T) {
	p := tinyProfile
	p.RSAKeygen = 1
	got, err := HostTimings(context.Background(), HostConfig{Profile: p, Schemes: []string{"rsa-2048"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Op != "keygen" || got[0].N != 1 || got[0].Durations[0] <= 0 {
		t.Fatalf("%+v", got)
	}
}

func TestHostTimingsErrors(t *testing.T) {
	if _, err := HostTimings(context.Background(), HostConfig{Schemes: []string{"ml-kem-9"}}); err == nil || !strings.Contains(err.Error(), "unknown scheme") {
		t.Errorf("unknown scheme: %v", err)
	}
	p := tinyProfile
	p.ECC = 2_000_000
	if _, err := HostTimings(context.Background(), HostConfig{Profile: p, Schemes: []string{"ecdh-p256"}}); err == nil {
		t.Error("an absurd count passed")
	}
	// Cancelled after the first timing: the first is kept, the error says
	// where it stopped.
	ctx, cancel := context.WithCancel(context.Background())
	var lines int
	got, err := HostTimings(ctx, HostConfig{Profile: tinyProfile, Schemes: []string{"ecdh-p256", "ml-kem-512"},
		Progress: writerFunc(func(b []byte) { lines++; cancel() })})
	if !errors.Is(err, context.Canceled) || len(got) != 1 || !strings.Contains(err.Error(), "interrupted after 0 of 2") {
		t.Fatalf("got %d timings, err %v", len(got), err)
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

func TestHostTimingMean(t *testing.T) {
	for _, tc := range []struct {
		d    []time.Duration
		want time.Duration
	}{{nil, 0}, {[]time.Duration{3}, 3}, {[]time.Duration{1, 2, 6}, 3}} {
		if got := (picodata.HostTiming{Durations: tc.d}).Mean(); got != tc.want {
			t.Errorf("Mean(%v) = %v", tc.d, got)
		}
	}
}

// BenchmarkHost times every host operation with testing.B (go test -bench
// Host ./experiments/pico/picoboard): the same operations HostTimings runs.
func BenchmarkHost(b *testing.B) {
	for _, scheme := range append(append(append([]string{}, picodata.KEMSchemes...), picodata.DSASchemes...), picodata.ClassicalSchemes...) {
		ops, err := hostOps(scheme, DefaultSeed, DefaultMessageBytes)
		if err != nil {
			b.Fatal(err)
		}
		for _, op := range ops {
			b.Run(fmt.Sprintf("%s/%s/%s", scheme, op.op, strings.ReplaceAll(op.lib, "/", "-")), func(b *testing.B) {
				f, err := op.prepare(0)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestHostTimingsSPHINCS times the SPHINCS+ sets' host column (circl's
// FIPS 205, the same hashes as the device's round 3.1) with the profile's
// SPHINCS+ counts: the fast sets sign SLHSignFast times, the small one
// SLHSignSmall times.
func TestHostTimingsSPHINCS(t *testing.T) {
	p := Profile{Name: "tiny", SLHKeygen: 1, SLHSignFast: 2, SLHSignSmall: 1}
	got, err := HostTimings(context.Background(), HostConfig{Profile: p, Schemes: []string{"sphincs-sha2-128f", "sphincs-sha2-128s"}, Clock: fakeClock(time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"sphincs-sha2-128f/keygen": 1, "sphincs-sha2-128f/sign": 2, "sphincs-sha2-128f/verify": 2,
		"sphincs-sha2-128s/keygen": 1, "sphincs-sha2-128s/sign": 1, "sphincs-sha2-128s/verify": 1,
	}
	for _, h := range got {
		key := h.Scheme + "/" + h.Op
		if h.Lib != "circl (FIPS 205)" || h.N != want[key] {
			t.Errorf("%s (%s): n = %d, want %d", key, h.Lib, h.N, want[key])
		}
		delete(want, key)
	}
	if len(want) > 0 {
		t.Errorf("missing %v", want)
	}
}

// TestMsgN checks the host's messages of message_bytes: n bytes of the
// seed's stream, whose first 32 are the 32-byte message of every run.
func TestMsgN(t *testing.T) {
	m := msgN(DefaultSeed, "dsa msg", 3, 1024)
	if len(m) != 1024 || !bytes.Equal(m[:32], msgFor(DefaultSeed, "dsa msg", 3)) || bytes.Equal(m[32:64], m[:32]) {
		t.Errorf("msgN(1024) = %x...", m[:64])
	}
}
