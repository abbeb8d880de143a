package slhverify_test

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudflare/circl/sign/slhdsa"

	"pqrepro/experiments/pico/slhverify"
)

// circlKey returns circl's key pair for the named set from the fixed seed
// SK.seed || SK.prf || PK.seed = 0x01, 0x08, 0x0f, ... (FIPS 205,
// Algorithm 21).
func circlKey(t testing.TB, name string) (slhdsa.PublicKey, slhdsa.PrivateKey, *slhverify.Params) {
	t.Helper()
	p, err := slhverify.ParamsByName(name)
	if err != nil {
		t.Fatal(err)
	}
	id, err := slhdsa.IDByName(name)
	if err != nil {
		t.Fatalf("circl does not know %s: %v", name, err)
	}
	seed := make([]byte, 3*p.N)
	for i := range seed {
		seed[i] = byte(1 + 7*i)
	}
	pub, priv, err := slhdsa.GenerateKey(bytes.NewReader(seed), id)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv, p
}

// TestFIPS205Circl checks the FIPS205 variant against signatures made by
// circl's SLH-DSA (an independent FIPS 205 implementation): acceptance
// with an empty and a non-empty context, and rejection of flipped bits, a
// wrong message, a wrong context and the Round31 variant. The 128-bit and
// the fast 192/256-bit sets are signed; the slow 192s/256s sets are
// covered by TestFIPS205ACVP.
func TestFIPS205Circl(t *testing.T) {
	names := []string{"slh-dsa-sha2-128s", "slh-dsa-shake-128s", "slh-dsa-sha2-128f", "slh-dsa-shake-128f",
		"slh-dsa-sha2-192f", "slh-dsa-shake-192f", "slh-dsa-sha2-256f", "slh-dsa-shake-256f"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pub, priv, p := circlKey(t, name)
			pk, err := pub.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if len(pk) != p.PKBytes {
				t.Fatalf("circl public key is %d bytes, Params.PKBytes %d", len(pk), p.PKBytes)
			}
			ctxs := [][]byte{nil, []byte("pico firmware v1 \x00\xff")}
			if testing.Short() && strings.HasSuffix(name, "s") {
				ctxs = ctxs[1:] // signing an 's' set takes seconds
			}
			for _, ctx := range ctxs {
				msg := []byte(fmt.Sprintf("slhverify test message for %s with a %d-byte context", name, len(ctx)))
				sig, err := slhdsa.SignDeterministic(&priv, slhdsa.NewMessage(msg), ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !slhdsa.Verify(&pub, slhdsa.NewMessage(msg), sig, ctx) {
					t.Fatal("circl rejects its own signature")
				}
				if len(sig) != p.SigBytes {
					t.Fatalf("circl signature is %d bytes, Params.SigBytes %d", len(sig), p.SigBytes)
				}
				if err := slhverify.Verify(p, slhverify.FIPS205, pk, msg, ctx, sig); err != nil {
					t.Fatalf("ctx %q: circl signature rejected: %v", ctx, err)
				}
				mustFail := func(what string, v slhverify.Variant, msg, ctx []byte) {
					t.Helper()
					if err := slhverify.Verify(p, v, pk, msg, ctx, sig); !errors.Is(err, slhverify.ErrSignature) {
						t.Errorf("%s: got %v, want ErrSignature", what, err)
					}
				}
				mustFail("wrong message", slhverify.FIPS205, append([]byte("x"), msg...), ctx)
				mustFail("message truncated", slhverify.FIPS205, msg[:len(msg)-1], ctx)
				wrongCtx := append(append([]byte(nil), ctx...), 0)
				mustFail("context with an extra byte", slhverify.FIPS205, msg, wrongCtx)
				if len(ctx) > 0 {
					mustFail("empty context", slhverify.FIPS205, msg, nil)
					wrongCtx = append([]byte(nil), ctx...)
					wrongCtx[0] ^= 0x20
					mustFail("context with a flipped bit", slhverify.FIPS205, msg, wrongCtx)
				} else {
					// Round 3.1 hashes M, FIPS 205 hashes 0x00 || 0x00 || M.
					mustFail("Round31 variant", slhverify.Round31, msg, nil)
					// Given M' itself, round 3.1 differs only in the FORS
					// indices, which coincide for a = 8 (the 192f sets).
					mPrime := append([]byte{0, 0}, msg...)
					if p.A == 8 {
						if err := slhverify.Verify(p, slhverify.Round31, pk, mPrime, nil, sig); err != nil {
							t.Errorf("a = 8: Round31 on M' rejects, though its indices equal base_2b's: %v", err)
						}
					} else {
						mustFail("Round31 variant on M'", slhverify.Round31, mPrime, nil)
					}
				}
				checkFlips(t, p, slhverify.FIPS205, pk, msg, ctx, sig)
			}
		})
	}
}

// TestFIPS205ACVP runs the NIST ACVP SLH-DSA sigVer vectors shipped with
// circl (testdata/verify_*.json.gz in its module) for all twelve sets: the
// external "pure" groups through Verify and the "internal" groups through
// slh_verify_internal. Expected results include both accepts and rejects.
// The pre-hash (HashSLH-DSA) groups are out of scope.
func TestFIPS205ACVP(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/cloudflare/circl").Output()
	if err != nil {
		t.Fatalf("locate circl's module directory with go list: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "sign", "slhdsa", "testdata")
	var prompt struct {
		TestGroups []struct {
			TgID         int    `json:"tgId"`
			ParameterSet string `json:"parameterSet"`
			Interface    string `json:"signatureInterface"`
			PreHash      string `json:"preHash"`
			Tests        []struct {
				TcID    int       `json:"tcId"`
				PK      hexString `json:"pk"`
				Message hexString `json:"message"`
				Context hexString `json:"context"`
				Sig     hexString `json:"signature"`
			} `json:"tests"`
		} `json:"testGroups"`
	}
	var results struct {
		TestGroups []struct {
			TgID  int `json:"tgId"`
			Tests []struct {
				TcID       int  `json:"tcId"`
				TestPassed bool `json:"testPassed"`
			} `json:"tests"`
		} `json:"testGroups"`
	}
	readGzipJSON(t, filepath.Join(dir, "verify_prompt.json.gz"), &prompt)
	readGzipJSON(t, filepath.Join(dir, "verify_results.json.gz"), &results)
	want := map[[2]int]bool{}
	for _, g := range results.TestGroups {
		for _, tc := range g.Tests {
			want[[2]int{g.TgID, tc.TcID}] = tc.TestPassed
		}
	}
	type count struct{ accept, reject int }
	counts := map[string]*count{}
	for _, g := range prompt.TestGroups {
		if g.PreHash == "preHash" {
			continue
		}
		p, err := slhverify.ParamsByName(g.ParameterSet)
		if err != nil {
			t.Fatalf("group %d: %v", g.TgID, err)
		}
		c := counts[p.Name+" "+g.Interface]
		if c == nil {
			c = new(count)
			counts[p.Name+" "+g.Interface] = c
		}
		for _, tc := range g.Tests {
			w, ok := want[[2]int{g.TgID, tc.TcID}]
			if !ok {
				t.Fatalf("group %d test %d: no expected result", g.TgID, tc.TcID)
			}
			var got bool
			var err error
			switch g.Interface {
			case "external":
				err = slhverify.Verify(p, slhverify.FIPS205, tc.PK, tc.Message, tc.Context, tc.Sig)
				got = err == nil
			case "internal":
				got = slhverify.VerifyInternal(p, tc.PK, tc.Message, tc.Sig, false)
			default:
				t.Fatalf("group %d: unknown signatureInterface %q", g.TgID, g.Interface)
			}
			if got != w {
				t.Errorf("%s %s group %d test %d: accepted=%v (%v), want %v", p.Name, g.Interface, g.TgID, tc.TcID, got, err, w)
			}
			if w {
				c.accept++
			} else {
				c.reject++
			}
		}
	}
	for _, name := range slhverify.Names() {
		for _, iface := range []string{"external", "internal"} {
			c := counts[name+" "+iface]
			if c == nil || c.accept == 0 || c.reject == 0 {
				t.Errorf("%s %s: ACVP vectors lack accepts or rejects: %+v", name, iface, c)
			}
		}
	}
	t.Logf("ACVP: %d (set, interface) groups", len(counts))
}

// hexString decodes a JSON hex string (ACVP uses upper case).
type hexString []byte

func (h *hexString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := hex.DecodeString(s)
	*h = v
	return err
}

func readGzipJSON(t *testing.T, path string, v any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("ACVP vectors of circl: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := json.NewDecoder(zr).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
