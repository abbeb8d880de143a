package picoboard

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"

	"pqrepro/datasets/picodata"
)

// hostVectors makes the vectors a correct device would print, with circl.
func hostVectors(t *testing.T) *picodata.Dataset {
	t.Helper()
	d := &picodata.Dataset{Header: picodata.Header{Schemes: []string{"ml-kem-768", "ml-dsa-65"}}, Vectors: map[string]map[string][]byte{}}
	ks := circlKEM("ml-kem-768")
	coins := bytes.Repeat([]byte{7}, 64)
	m := bytes.Repeat([]byte{9}, 32)
	pk, sk := ks.DeriveKeyPair(coins)
	ct, ss, err := ks.EncapsulateDeterministically(pk, m)
	if err != nil {
		t.Fatal(err)
	}
	pkb, _ := pk.MarshalBinary()
	skb, _ := sk.MarshalBinary()
	d.Vectors["ml-kem-768"] = map[string][]byte{"keygen_coins": coins, "encaps_coins": m, "pk": pkb, "sk": skb, "ct": ct, "ss": ss}

	var seed [32]byte
	seed[0] = 1
	dpk, dsk := mldsa65.NewKeyFromSeed(&seed)
	msg := []byte("message")
	sig := make([]byte, mldsa65.SignatureSize)
	if err := mldsa65.SignTo(dsk, msg, nil, false, sig); err != nil {
		t.Fatal(err)
	}
	d.Vectors["ml-dsa-65"] = map[string][]byte{"keygen_seed": seed[:], "pk": dpk.Bytes(), "sk": dsk.Bytes(), "msg": msg, "sig": sig}
	return d
}

func TestVerifyVectors(t *testing.T) {
	checks, err := VerifyVectors(hostVectors(t))
	if err != nil {
		t.Fatal(err)
	}
	libs := map[string]bool{}
	for _, c := range checks {
		libs[c.Lib] = true
	}
	if !libs["circl"] || !libs["crypto/mlkem"] || !libs["crypto/mldsa"] || len(checks) < 14 {
		t.Errorf("checks %+v", checks)
	}
}

func TestVerifyVectorsMismatch(t *testing.T) {
	tests := []struct{ scheme, field string }{
		{"ml-kem-768", "pk"}, {"ml-kem-768", "sk"}, {"ml-kem-768", "ct"}, {"ml-kem-768", "ss"},
		{"ml-kem-768", "encaps_coins"}, {"ml-dsa-65", "pk"}, {"ml-dsa-65", "sig"}, {"ml-dsa-65", "msg"}, {"ml-dsa-65", "sk"},
	}
	for _, tc := range tests {
		t.Run(tc.scheme+"/"+tc.field, func(t *testing.T) {
			d := hostVectors(t)
			d.Vectors[tc.scheme][tc.field][3] ^= 0x10
			if _, err := VerifyVectors(d); !errors.Is(err, ErrVectorMismatch) {
				t.Fatalf("a flipped bit in %s passed: %v", tc.field, err)
			}
		})
	}
	d := hostVectors(t)
	delete(d.Vectors["ml-dsa-65"], "sig")
	if _, err := VerifyVectors(d); !errors.Is(err, ErrVectorMismatch) {
		t.Fatalf("missing vector passed: %v", err)
	}
}
