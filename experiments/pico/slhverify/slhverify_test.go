package slhverify_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"pqrepro/experiments/pico/slhverify"
)

// TestParams pins the parameter sets to FIPS 205, Table 2, including the
// derived key and signature sizes and m = ceil(k*a/8) + ceil((h-h')/8) +
// ceil(h'/8) (Section 9.2), and checks name lookup.
func TestParams(t *testing.T) {
	table := []struct {
		name                 string
		n, h, d, hp, a, k, m int
		pkBytes, sigBytes    int
		sha2                 bool
	}{
		{"slh-dsa-sha2-128s", 16, 63, 7, 9, 12, 14, 30, 32, 7856, true},
		{"slh-dsa-shake-128s", 16, 63, 7, 9, 12, 14, 30, 32, 7856, false},
		{"slh-dsa-sha2-128f", 16, 66, 22, 3, 6, 33, 34, 32, 17088, true},
		{"slh-dsa-shake-128f", 16, 66, 22, 3, 6, 33, 34, 32, 17088, false},
		{"slh-dsa-sha2-192s", 24, 63, 7, 9, 14, 17, 39, 48, 16224, true},
		{"slh-dsa-shake-192s", 24, 63, 7, 9, 14, 17, 39, 48, 16224, false},
		{"slh-dsa-sha2-192f", 24, 66, 22, 3, 8, 33, 42, 48, 35664, true},
		{"slh-dsa-shake-192f", 24, 66, 22, 3, 8, 33, 42, 48, 35664, false},
		{"slh-dsa-sha2-256s", 32, 64, 8, 8, 14, 22, 47, 64, 29792, true},
		{"slh-dsa-shake-256s", 32, 64, 8, 8, 14, 22, 47, 64, 29792, false},
		{"slh-dsa-sha2-256f", 32, 68, 17, 4, 9, 35, 49, 64, 49856, true},
		{"slh-dsa-shake-256f", 32, 68, 17, 4, 9, 35, 49, 64, 49856, false},
	}
	var names []string
	for _, tt := range table {
		names = append(names, tt.name)
		p, err := slhverify.ParamsByName(strings.ToUpper(tt.name))
		if err != nil {
			t.Fatal(err)
		}
		want := slhverify.Params{Name: tt.name, N: tt.n, H: tt.h, D: tt.d, HPrime: tt.hp, A: tt.a, K: tt.k, LgW: 4, M: tt.m,
			SHA2: tt.sha2, PKBytes: tt.pkBytes, SigBytes: tt.sigBytes}
		if *p != want {
			t.Errorf("%s: got %+v, want %+v", tt.name, *p, want)
		}
		if m := (tt.k*tt.a+7)/8 + (tt.h-tt.hp+7)/8 + (tt.hp+7)/8; m != p.M {
			t.Errorf("%s: m = %d, but the digest split needs %d bytes", tt.name, p.M, m)
		}
	}
	if got := slhverify.Names(); !slices.Equal(got, names) {
		t.Errorf("Names() = %v, want %v", got, names)
	}
	_, err := slhverify.ParamsByName("sphincs-sha2-128f")
	if err == nil || !strings.Contains(err.Error(), "slh-dsa-sha2-128f") || !strings.Contains(err.Error(), "slh-dsa-shake-256s") {
		t.Errorf("unknown name: got %v, want an error listing the known names", err)
	}
	// A copy returned by ParamsByName may be modified without affecting
	// later calls.
	p, _ := slhverify.ParamsByName("slh-dsa-sha2-128f")
	p.K = 1
	if q, _ := slhverify.ParamsByName("slh-dsa-sha2-128f"); q.K != 33 {
		t.Errorf("modifying a returned Params changed the table: K = %d", q.K)
	}
	if s := slhverify.FIPS205.String() + " " + slhverify.Round31.String() + " " + slhverify.Variant(9).String(); s != "FIPS205 Round31 Variant(9)" {
		t.Errorf("Variant strings: %q", s)
	}
}

// TestVerifyErrors checks that malformed inputs are reported as such,
// before any hashing, and never as ErrSignature.
func TestVerifyErrors(t *testing.T) {
	g := loadGolden(t, "slh-dsa-sha2-128f")
	p := g.p
	modified := *p
	modified.K++
	unknown := *p
	unknown.Name = "slh-dsa-sha2-512x"
	long := make([]byte, 256)
	tests := []struct {
		what         string
		p            *slhverify.Params
		v            slhverify.Variant
		pk, ctx, sig []byte
		want         string
	}{
		{"nil params", nil, slhverify.Round31, g.pk, nil, g.sig, "nil parameter set"},
		{"modified params", &modified, slhverify.Round31, g.pk, nil, g.sig, "has been modified"},
		{"unknown params", &unknown, slhverify.Round31, g.pk, nil, g.sig, "unknown parameter set"},
		{"unknown variant", p, slhverify.Variant(2), g.pk, nil, g.sig, "unknown variant"},
		{"negative variant", p, slhverify.Variant(-1), g.pk, nil, g.sig, "unknown variant"},
		{"short pk", p, slhverify.Round31, g.pk[:31], nil, g.sig, "wrong public key length for slh-dsa-sha2-128f: got 31 bytes, want 32"},
		{"nil pk", p, slhverify.FIPS205, nil, nil, g.sig, "wrong public key length"},
		{"long pk", p, slhverify.Round31, append(g.pk, 0), nil, g.sig, "wrong public key length"},
		{"short sig", p, slhverify.Round31, g.pk, nil, g.sig[:len(g.sig)-1], "wrong signature length for slh-dsa-sha2-128f: got 17087 bytes, want 17088"},
		{"long sig", p, slhverify.FIPS205, g.pk, nil, append(g.sig, 0), "wrong signature length"},
		{"nil sig", p, slhverify.FIPS205, g.pk, nil, nil, "wrong signature length"},
		{"ctx too long", p, slhverify.FIPS205, g.pk, long, g.sig, "context string is 256 bytes long, FIPS 205 allows at most 255"},
		{"ctx with Round31", p, slhverify.Round31, g.pk, []byte{0}, g.sig, "round 3.1 has no context string"},
	}
	for _, tt := range tests {
		err := slhverify.Verify(tt.p, tt.v, tt.pk, g.msg, tt.ctx, tt.sig)
		if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, slhverify.ErrSignature) {
			t.Errorf("%s: got %v, want an error containing %q", tt.what, err, tt.want)
		}
	}
	// A 255-byte context is allowed: the signature fails, it is not malformed.
	if err := slhverify.Verify(p, slhverify.FIPS205, g.pk, g.msg, long[:255], g.sig); !errors.Is(err, slhverify.ErrSignature) {
		t.Errorf("255-byte context: got %v, want ErrSignature", err)
	}
	err := slhverify.Verify(p, slhverify.FIPS205, g.pk, g.msg, nil, g.sig)
	if err == nil || !strings.Contains(err.Error(), "signature does not verify (computed root differs from PK.root)") {
		t.Errorf("invalid signature: got %v", err)
	}
}

// TestFORSIndices pins the one algorithmic difference inside the
// signature scheme on hand-made digests: FIPS 205's base_2b(md, a, k)
// reads md as a big-endian bit string, round 3.1's message_to_indices
// reads it least significant bit first. The expected values are worked
// out by hand in the comments.
func TestFORSIndices(t *testing.T) {
	// 0xb1 0x43 0xf0 = 10110001 01000011 11110000.
	md := []byte{0xb1, 0x43, 0xf0}
	tests := []struct {
		name    string
		md      []byte
		a, k    int
		fips    []uint32
		round31 []uint32
	}{
		// FIPS: 101100|010100|001111|110000.
		// Round 3.1, bits of each byte from bit 0: 10001101 11000010
		// 00001111; index i takes bits 6i..6i+5 with the first as its
		// least significant: 100011 -> 49, 011100 -> 14, 001000 -> 4,
		// 001111 -> 60.
		{"a=6 (128f)", md, 6, 4, []uint32{44, 20, 15, 48}, []uint32{49, 14, 4, 60}},
		// FIPS: 101100010100|001111110000 = 0xb14, 0x3f0.
		// Round 3.1: 0xb1 | (0x43 & 0xf) << 8 = 0x3b1; 0x43 >> 4 |
		// 0xf0 << 4 = 0xf04.
		{"a=12 (128s)", md, 12, 2, []uint32{0xb14, 0x3f0}, []uint32{0x3b1, 0xf04}},
		// With a = 8 both give index i = md[i]: no difference for the
		// 192f sets.
		{"a=8 (192f)", md, 8, 3, []uint32{0xb1, 0x43, 0xf0}, []uint32{0xb1, 0x43, 0xf0}},
		// a*k not a multiple of 8: the last 6 bits of md are unused.
		// FIPS: 101100010|100001111 = 354, 271. Round 3.1: 0xb1 | (0x43
		// & 1) << 8 = 433; 0x43 >> 1 | (0xf0 & 3) << 7 = 33.
		{"a=9, k=2", md, 9, 2, []uint32{354, 271}, []uint32{433, 33}},
		// One set bit: the most significant of md[0] is index 0's top
		// bit for FIPS 205 but bit 7 (value 128 > 2^6) lands in index 1
		// as bit 1 for round 3.1.
		{"single bit", []byte{0x80, 0, 0}, 6, 4, []uint32{32, 0, 0, 0}, []uint32{0, 2, 0, 0}},
		{"all ones", []byte{0xff, 0xff, 0xff}, 6, 4, []uint32{63, 63, 63, 63}, []uint32{63, 63, 63, 63}},
	}
	for _, tt := range tests {
		if got := slhverify.Base2b(tt.md, tt.a, tt.k); !slices.Equal(got, tt.fips) {
			t.Errorf("%s: base_2b = %v, want %v", tt.name, got, tt.fips)
		}
		if got := slhverify.Round31Indices(tt.md, tt.a, tt.k); !slices.Equal(got, tt.round31) {
			t.Errorf("%s: round 3.1 indices = %v, want %v", tt.name, got, tt.round31)
		}
	}
	// The pseudocode of the round 3.1 reference, verbatim.
	ref := func(m []byte, a, k int) []uint32 {
		idx := make([]uint32, k)
		off := 0
		for i := 0; i < k; i++ {
			idx[i] = 0
			for j := 0; j < a; j++ {
				idx[i] ^= uint32((m[off>>3]>>(off&7))&1) << j
				off++
			}
		}
		return idx
	}
	digest := []byte("a 25-byte hand-made digest")[:25]
	for _, ak := range [][2]int{{6, 33}, {12, 14}, {14, 14}, {8, 25}, {9, 22}} {
		if got, want := slhverify.Round31Indices(digest, ak[0], ak[1]), ref(digest, ak[0], ak[1]); !slices.Equal(got, want) {
			t.Errorf("a=%d k=%d: %v, reference %v", ak[0], ak[1], got, want)
		}
	}
}

// FuzzVerify checks that Verify never panics on arbitrary input and
// accepts nothing malformed. Inputs with wrong lengths are also retried
// padded or cut to the lengths of slh-dsa-sha2-128s (the cheapest set to
// verify, which keeps the minimization of large inputs fast), so the
// hashing code runs on random data. The seeds include valid signatures.
//
// Minimizing an interesting input of several kilobytes byte by byte takes
// minutes at a millisecond per verification, so fuzz with a bounded
// minimization:
//
//	go test ./experiments/pico/slhverify -run '^$' -fuzz FuzzVerify -fuzzminimizetime 50x
func FuzzVerify(f *testing.F) {
	names := slhverify.Names()
	cheap, err := slhverify.ParamsByName("slh-dsa-sha2-128s")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range []string{"slh-dsa-sha2-128s", "slh-dsa-shake-128f"} {
		g := loadGolden(f, name)
		idx := uint8(slices.Index(names, name))
		f.Add(idx, uint8(slhverify.Round31), g.pk, g.msg, []byte(nil), g.sig)
		f.Add(idx, uint8(slhverify.FIPS205), g.pk, g.msg, []byte("ctx"), g.sig)
	}
	f.Add(uint8(1), uint8(0), []byte{1, 2}, []byte{}, []byte{}, []byte{3})
	f.Add(uint8(11), uint8(7), []byte{}, []byte("m"), make([]byte, 300), []byte{})
	f.Fuzz(func(t *testing.T, set, variant uint8, pk, msg, ctx, sig []byte) {
		p, err := slhverify.ParamsByName(names[int(set)%len(names)])
		if err != nil {
			t.Fatal(err)
		}
		v := slhverify.Variant(variant % 3)
		err = slhverify.Verify(p, v, pk, msg, ctx, sig)
		malformed := len(pk) != p.PKBytes || len(sig) != p.SigBytes || v == 2 ||
			len(ctx) > 255 || (v == slhverify.Round31 && len(ctx) > 0)
		if err == nil && malformed {
			t.Fatalf("accepted malformed input")
		}
		if !malformed && err != nil && !errors.Is(err, slhverify.ErrSignature) {
			t.Fatalf("well-formed input reported as malformed: %v", err)
		}
		if !malformed {
			return
		}
		pk = append(pk[:len(pk):len(pk)], make([]byte, cheap.PKBytes)...)[:cheap.PKBytes]
		sig = append(sig[:len(sig):len(sig)], make([]byte, cheap.SigBytes)...)[:cheap.SigBytes]
		v %= 2
		if v == slhverify.Round31 {
			ctx = nil
		}
		if len(ctx) > 255 {
			ctx = ctx[:255]
		}
		err = slhverify.Verify(cheap, v, pk, msg, ctx, sig)
		if err != nil && !errors.Is(err, slhverify.ErrSignature) {
			t.Fatalf("well-formed input reported as malformed: %v", err)
		}
	})
}

// BenchmarkVerify measures one verification per parameter set (of the
// round 3.1 golden signature; FIPS 205 verification does the same work).
func BenchmarkVerify(b *testing.B) {
	for _, name := range slhverify.Names() {
		b.Run(name, func(b *testing.B) {
			g := loadGolden(b, name)
			b.ReportAllocs()
			for b.Loop() {
				if err := slhverify.Verify(g.p, slhverify.Round31, g.pk, g.msg, nil, g.sig); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
