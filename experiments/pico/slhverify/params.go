package slhverify

import (
	"fmt"
	"strings"
)

// Params is an SLH-DSA parameter set (FIPS 205, Section 11, Table 2).
//
// N is the security parameter (bytes per hash value), H the total height
// of the hypertree, D its number of layers, HPrime = H/D the height of one
// XMSS tree, A the height of a FORS tree, K the number of FORS trees, LgW
// the base-2 logarithm of the Winternitz parameter and M the length in
// bytes of the message digest H_msg. SHA2 selects the SHA-2 instantiation
// of FIPS 205, Section 11.2 (otherwise SHAKE, Section 11.1). PKBytes and
// SigBytes are the lengths of a public key and of a signature.
//
// A *Params passed to [Verify] must be one returned by [ParamsByName];
// modified copies are rejected.
type Params struct {
	Name                          string
	N, H, D, HPrime, A, K, LgW, M int
	SHA2                          bool
	PKBytes, SigBytes             int
}

// paramSets lists the parameter sets of FIPS 205, Table 2, in its order.
var paramSets = []Params{
	newParams("slh-dsa-sha2-128s", 16, 63, 7, 12, 14, 30, true),
	newParams("slh-dsa-shake-128s", 16, 63, 7, 12, 14, 30, false),
	newParams("slh-dsa-sha2-128f", 16, 66, 22, 6, 33, 34, true),
	newParams("slh-dsa-shake-128f", 16, 66, 22, 6, 33, 34, false),
	newParams("slh-dsa-sha2-192s", 24, 63, 7, 14, 17, 39, true),
	newParams("slh-dsa-shake-192s", 24, 63, 7, 14, 17, 39, false),
	newParams("slh-dsa-sha2-192f", 24, 66, 22, 8, 33, 42, true),
	newParams("slh-dsa-shake-192f", 24, 66, 22, 8, 33, 42, false),
	newParams("slh-dsa-sha2-256s", 32, 64, 8, 14, 22, 47, true),
	newParams("slh-dsa-shake-256s", 32, 64, 8, 14, 22, 47, false),
	newParams("slh-dsa-sha2-256f", 32, 68, 17, 9, 35, 49, true),
	newParams("slh-dsa-shake-256f", 32, 68, 17, 9, 35, 49, false),
}

func newParams(name string, n, h, d, a, k, m int, sha2 bool) Params {
	p := Params{Name: name, N: n, H: h, D: d, HPrime: h / d, A: a, K: k, LgW: 4, M: m, SHA2: sha2}
	p.PKBytes = 2 * n
	// FIPS 205, Section 9.2: R, then k FORS trees of a
	// authentication nodes plus one secret value, then d XMSS signatures
	// of len WOTS+ chains and h' authentication nodes.
	p.SigBytes = (1 + k*(1+a) + h + d*p.wotsLen()) * n
	return p
}

// wotsLen1 and wotsLen2 are len_1 and len_2 of FIPS 205, Section 5,
// Equations 5.1-5.3; wotsLen2 is Algorithm 1 (gen_len2).
func (p *Params) wotsLen1() int { return (8*p.N + p.LgW - 1) / p.LgW }

func (p *Params) wotsLen2() int {
	w := 1 << p.LgW
	maxChecksum := p.wotsLen1() * (w - 1)
	len2, capacity := 1, w
	for capacity <= maxChecksum {
		len2++
		capacity *= w
	}
	return len2
}

func (p *Params) wotsLen() int { return p.wotsLen1() + p.wotsLen2() }

// Names returns the names of the supported parameter sets in the order of
// FIPS 205, Table 2.
func Names() []string {
	names := make([]string, len(paramSets))
	for i := range paramSets {
		names[i] = paramSets[i].Name
	}
	return names
}

// ParamsByName returns the parameter set of FIPS 205, Table 2, with the
// given name, such as "slh-dsa-sha2-128s". Names are case-insensitive, so
// the standard's spelling "SLH-DSA-SHA2-128s" is accepted too. The result
// is a fresh copy the caller may keep.
func ParamsByName(name string) (*Params, error) {
	for i := range paramSets {
		if strings.EqualFold(paramSets[i].Name, name) {
			p := paramSets[i]
			return &p, nil
		}
	}
	return nil, fmt.Errorf("slhverify: unknown parameter set %q (known: %s)", name, strings.Join(Names(), ", "))
}

// canonical returns the table entry equal to *p, or an error if p is nil,
// unknown or has been modified. No field value chosen by a caller can then
// reach the index arithmetic.
func canonical(p *Params) (*Params, error) {
	if p == nil {
		return nil, fmt.Errorf("slhverify: nil parameter set (use ParamsByName; known: %s)", strings.Join(Names(), ", "))
	}
	for i := range paramSets {
		if paramSets[i].Name == p.Name {
			if paramSets[i] != *p {
				return nil, fmt.Errorf("slhverify: parameter set %q has been modified; use ParamsByName", p.Name)
			}
			return &paramSets[i], nil
		}
	}
	return nil, fmt.Errorf("slhverify: unknown parameter set %q (known: %s)", p.Name, strings.Join(Names(), ", "))
}
