package slhverify

// Hooks for the external tests in package slhverify_test.

// Base2b is base_2b (FIPS 205, Algorithm 4).
func Base2b(x []byte, b, outLen int) []uint32 { return base2b(x, b, outLen) }

// Round31Indices is round 3.1's message_to_indices.
func Round31Indices(md []byte, a, k int) []uint32 { return round31Indices(md, a, k) }

// VerifyInternal is slh_verify_internal (FIPS 205, Algorithm 20) on the
// already formatted message m, with round 3.1's FORS index extraction if
// lsbIndices is set. It reports false on malformed input.
func VerifyInternal(p *Params, pk, m, sig []byte, lsbIndices bool) bool {
	q, err := canonical(p)
	if err != nil || len(pk) != q.PKBytes || len(sig) != q.SigBytes {
		return false
	}
	return verifyInternal(q, pk, sig, lsbIndices, m)
}
