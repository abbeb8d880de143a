// Package slhverify is an independent, from-the-specification verifier of
// stateless hash-based signatures. That is, SLH-DSA as specified in [FIPS
// 205], and its predecessor SPHINCS+ round 3.1 "simple" as implemented by
// PQClean
// (crypto_sign/sphincs-{sha2,shake}-{128,192,256}{f,s}-simple/clean),
// which our RP2040 firmware runs.
//
// It only verifies: it holds no secrets and shares no code with the
// signers it checks (circl for FIPS 205, PQClean for round 3.1), so that a
// signature accepted here was checked against the standard rather than
// against the implementation that produced it.
//
// All twelve parameter sets of FIPS 205, Table 2, are supported; see
// [Names]. Each has a round 3.1 counterpart with the same (n, h, d, a, k,
// w): slh-dsa-sha2-128s is sphincs-sha2-128s-simple, and so on.
//
// # Round 3.1 versus FIPS 205
//
// For every parameter set the signature and public-key formats, the
// address (ADRS) layout including the compressed ADRSc of the SHA2 sets,
// the tweakable hashes F, H and T_l, H_msg (MGF1 over SHA-256 or SHA-512
// for SHA2, SHAKE256 for SHAKE), the split of the digest into md, the tree
// index and the leaf index (big-endian, masked to h-h/d and h/d bits) and
// WOTS+ (base_2b and the checksum) are the same. The [Round31] variant
// differs from [FIPS205] in exactly two places, established by the tests
// against PQClean signatures (PQClean's signatures verify with exactly
// these two changes, and undoing either one alone makes them fail, except
// as noted for a = 8):
//
//  1. Message. FIPS 205 (Algorithm 24, slh_verify) hashes M' =
//     toByte(0, 1) || toByte(|ctx|, 1) || ctx || M; round 3.1 hashes M
//     itself and has no context string.
//  2. FORS indices. FIPS 205 (Algorithm 17, fors_pkFromSig) takes the k
//     a-bit indices from md with base_2b(md, a, k), i.e. md read as a
//     big-endian bit string, most significant bit of each index first.
//     Round 3.1 (message_to_indices) reads md least significant bit
//     first: bit j of index i (j = 0 the least significant) is bit
//     (o mod 8) of byte md[o div 8], counted from the least significant
//     bit of the byte, where o = i*a + j. When a = 8 (the 192f sets)
//     both rules give index i = md[i], so this difference vanishes there:
//     a FIPS 205 signature of M with an empty context is then also a
//     valid round 3.1 signature of 0x00 || 0x00 || M. For a = 6, 9, 12
//     and 14 (all other sets) the indices differ.
//
// [FIPS 205]: https://doi.org/10.6028/NIST.FIPS.205
package slhverify

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
)

// Variant selects the signature scheme a signature is verified against.
type Variant int

const (
	// FIPS205 is SLH-DSA as specified in FIPS 205 (August 2024), pure
	// (non-pre-hash) signing: Algorithm 24 (slh_verify) and Algorithm 20
	// (slh_verify_internal).
	FIPS205 Variant = iota
	// Round31 is SPHINCS+ round 3.1 with "simple" tweakable hashes, as in
	// PQClean. It has no context string; see the package documentation
	// for how it differs from FIPS205.
	Round31
)

// String returns "FIPS205" or "Round31".
func (v Variant) String() string {
	switch v {
	case FIPS205:
		return "FIPS205"
	case Round31:
		return "Round31"
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

// ErrSignature is returned (possibly wrapped) by [Verify] when the inputs
// are well formed but the signature is not valid for them.
var ErrSignature = errors.New("slhverify: signature does not verify (computed root differs from PK.root)")

// Verify reports whether sig is a valid signature of msg under pk for the
// parameter set p and variant v.
//
// The public key is pk = PK.seed || PK.root. It returns nil if it is, and
// otherwise an error saying why: a malformed input (parameter set,
// variant, public key or signature length, context longer than 255 bytes,
// or a non-empty context for [Round31]), or [ErrSignature].
//
// For [FIPS205], Verify is slh_verify (FIPS 205, Section 10.3, Algorithm
// 24) with context string ctx, which must be at most 255 bytes long. For
// [Round31], ctx must be empty and msg is hashed as is.
//
// Verify never panics and does not retain its arguments.
func Verify(p *Params, v Variant, pk, msg, ctx, sig []byte) error {
	q, err := canonical(p)
	if err != nil {
		return err
	}
	var prefix []byte
	switch v {
	case FIPS205:
		if len(ctx) > 255 {
			return fmt.Errorf("slhverify: context string is %d bytes long, FIPS 205 allows at most 255", len(ctx))
		}
		// Algorithm 24, line 4: M' = toByte(0, 1) || toByte(|ctx|, 1) || ctx || M.
		prefix = append([]byte{0, byte(len(ctx))}, ctx...)
	case Round31:
		if len(ctx) != 0 {
			return fmt.Errorf("slhverify: SPHINCS+ round 3.1 has no context string, got %d bytes", len(ctx))
		}
	default:
		return fmt.Errorf("slhverify: unknown variant %v", v)
	}
	if len(pk) != q.PKBytes {
		return fmt.Errorf("slhverify: wrong public key length for %s: got %d bytes, want %d", q.Name, len(pk), q.PKBytes)
	}
	if len(sig) != q.SigBytes {
		return fmt.Errorf("slhverify: wrong signature length for %s: got %d bytes, want %d", q.Name, len(sig), q.SigBytes)
	}
	if !verifyInternal(q, pk, sig, v == Round31, prefix, msg) {
		return fmt.Errorf("%w (%s, %v)", ErrSignature, q.Name, v)
	}
	return nil
}

// verifyInternal is slh_verify_internal (FIPS 205, Section 9.3, Algorithm
// 20) for M = the concatenation of parts. lsbIndices selects round 3.1's
// FORS index extraction instead of base_2b. The lengths of pk and sig must
// have been checked.
func verifyInternal(p *Params, pk, sig []byte, lsbIndices bool, parts ...[]byte) bool {
	n := p.N
	pkSeed, pkRoot := pk[:n], pk[n:2*n]
	// Lines 3-5: R, SIG_FORS and SIG_HT.
	forsLen := p.K * (1 + p.A) * n
	r, sigFORS, sigHT := sig[:n], sig[n:n+forsLen], sig[n+forsLen:]

	// Lines 6-11: digest, md, idx_tree and idx_leaf.
	digest := hashMessage(p, r, pkSeed, pkRoot, parts...)
	mdLen := (p.K*p.A + 7) / 8
	treeBits := p.H - p.HPrime
	treeLen := (treeBits + 7) / 8
	leafLen := (p.HPrime + 7) / 8
	md := digest[:mdLen]
	idxTree := toInt(digest[mdLen:mdLen+treeLen]) & mask(treeBits)
	idxLeaf := uint32(toInt(digest[mdLen+treeLen:mdLen+treeLen+leafLen]) & mask(p.HPrime))

	// Lines 12-15: the FORS public key.
	h := newHasher(p, pkSeed)
	var adrs address
	adrs.setTree(idxTree)
	adrs.setTypeAndClear(addrFORSTree)
	adrs.setKeyPair(idxLeaf)
	var indices []uint32
	if lsbIndices {
		indices = round31Indices(md, p.A, p.K)
	} else {
		indices = base2b(md, p.A, p.K)
	}
	pkFORS := forsPKFromSig(p, h, sigFORS, indices, &adrs)

	// Line 16: the hypertree.
	root := htPKFromSig(p, h, pkFORS, sigHT, idxTree, idxLeaf)
	return subtle.ConstantTimeCompare(root, pkRoot) == 1
}

// toInt is toInt(X, len(X)) (FIPS 205, Algorithm 2) for len(X) <= 8.
func toInt(x []byte) uint64 {
	var v uint64
	for _, b := range x {
		v = v<<8 | uint64(b)
	}
	return v
}

// mask returns 2^bits - 1 for 0 <= bits <= 64.
func mask(bits int) uint64 {
	if bits >= 64 {
		return ^uint64(0)
	}
	return 1<<bits - 1
}

// base2b is base_2b(X, b, out_len) (FIPS 205, Section 4.4, Algorithm 4):
// X read as a big-endian bit string cut into out_len b-bit integers. X must
// hold at least ceil(out_len*b/8) bytes and b must be at most 16.
func base2b(x []byte, b, outLen int) []uint32 {
	out := make([]uint32, outLen)
	in, bits := 0, 0
	var total uint32
	for i := range out {
		for bits < b {
			total = total<<8 | uint32(x[in])
			in++
			bits += 8
		}
		bits -= b
		out[i] = total >> bits & (1<<b - 1)
		total &= 1<<bits - 1
	}
	return out
}

// round31Indices is message_to_indices of SPHINCS+ round 3.1. It reads md
// least significant bit first, bit j of index i being bit (o mod 8) of byte
// md[o div 8] with o = i*a + j.
func round31Indices(md []byte, a, k int) []uint32 {
	out := make([]uint32, k)
	o := 0
	for i := range out {
		for j := 0; j < a; j++ {
			out[i] |= uint32(md[o>>3]>>(o&7)&1) << j
			o++
		}
	}
	return out
}

// forsPKFromSig is fors_pkFromSig (FIPS 205, Section 8.4, Algorithm 17),
// with the indices already extracted from md (line 1).
func forsPKFromSig(p *Params, h *hasher, sigFORS []byte, indices []uint32, adrs *address) []byte {
	n, a := p.N, p.A
	roots := make([]byte, p.K*n)
	for i, idx := range indices {
		blk := sigFORS[i*(a+1)*n : (i+1)*(a+1)*n]
		sk, auth := blk[:n], blk[n:]
		node := roots[i*n : (i+1)*n]
		// Lines 3-5: the leaf.
		adrs.setTreeHeight(0)
		adrs.setTreeIndex(uint32(i)<<a + idx)
		h.f(node, adrs, sk)
		// Lines 6-17: up to the root of tree i.
		climb(h, node, adrs, idx, auth, a, n)
	}
	// Lines 20-24: T_k over the k roots.
	var pkADRS address = *adrs
	pkADRS.setTypeAndClear(addrFORSRoots)
	pkADRS.setKeyPair(adrs.keyPair())
	pk := make([]byte, n)
	h.t(pk, &pkADRS, roots)
	return pk
}

// htPKFromSig is ht_verify (FIPS 205, Section 7.2, Algorithm 13) up to,
// but not including, the comparison with PK.root on line 15. It returns the
// computed root.
func htPKFromSig(p *Params, h *hasher, m, sigHT []byte, idxTree uint64, idxLeaf uint32) []byte {
	xmssLen := (p.HPrime + p.wotsLen()) * p.N
	var adrs address
	node := m
	for j := 0; j < p.D; j++ {
		if j > 0 {
			// Lines 7-8.
			idxLeaf = uint32(idxTree & mask(p.HPrime))
			idxTree >>= p.HPrime
		}
		adrs.setLayer(uint32(j))
		adrs.setTree(idxTree)
		node = xmssPKFromSig(p, h, idxLeaf, sigHT[j*xmssLen:(j+1)*xmssLen], node, &adrs)
	}
	return node
}

// xmssPKFromSig is xmss_pkFromSig (FIPS 205, Section 6.3, Algorithm 11).
func xmssPKFromSig(p *Params, h *hasher, idx uint32, sigXMSS, m []byte, adrs *address) []byte {
	n := p.N
	wlen := p.wotsLen() * n
	// Lines 1-4: the WOTS+ public key.
	adrs.setTypeAndClear(addrWOTSHash)
	adrs.setKeyPair(idx)
	node := wotsPKFromSig(p, h, sigXMSS[:wlen], m, adrs)
	auth := sigXMSS[wlen:]
	// Lines 5-17: up to the root of the XMSS tree.
	adrs.setTypeAndClear(addrTree)
	adrs.setTreeIndex(idx)
	climb(h, node, adrs, idx, auth, p.HPrime, n)
	return node
}

// climb hashes node up height levels of a tree along its authentication
// path auth, in place. At level k the sibling auth[k] goes right of node
// when bit k of the leaf index idx is 0, left when it is 1, and the tree
// index in adrs halves (FIPS 205 Algorithm 11 lines 7-17, Algorithm 17
// lines 6-17).
func climb(h *hasher, node []byte, adrs *address, idx uint32, auth []byte, height, n int) {
	for k := 0; k < height; k++ {
		adrs.setTreeHeight(uint32(k + 1))
		sib := auth[k*n : (k+1)*n]
		if idx>>k&1 == 0 {
			adrs.setTreeIndex(adrs.treeIndex() / 2)
			h.hh(node, adrs, node, sib)
		} else {
			adrs.setTreeIndex((adrs.treeIndex() - 1) / 2)
			h.hh(node, adrs, sib, node)
		}
	}
}

// wotsPKFromSig is wots_pkFromSig (FIPS 205, Section 5.3, Algorithm 8),
// with chain (Algorithm 5) inlined.
func wotsPKFromSig(p *Params, h *hasher, sig, m []byte, adrs *address) []byte {
	n, lgw := p.N, p.LgW
	w := uint32(1) << lgw
	len1, len2 := p.wotsLen1(), p.wotsLen2()
	// Lines 1-7: base-w digits of m and of the checksum.
	msg := base2b(m, lgw, len1)
	var csum uint32
	for _, d := range msg {
		csum += w - 1 - d
	}
	csum <<= (8 - len2*lgw%8) % 8
	csumBytes := (len2*lgw + 7) / 8
	var cb [4]byte
	binary.BigEndian.PutUint32(cb[:], csum)
	msg = append(msg, base2b(cb[4-csumBytes:], lgw, len2)...)
	// Lines 8-11: finish every chain.
	tmp := make([]byte, len(msg)*n)
	copy(tmp, sig)
	for i, d := range msg {
		adrs.setChain(uint32(i))
		x := tmp[i*n : (i+1)*n]
		for j := d; j < w-1; j++ {
			adrs.setHash(j)
			h.f(x, adrs, x)
		}
	}
	// Lines 12-15: T_len.
	var pkADRS address = *adrs
	pkADRS.setTypeAndClear(addrWOTSPK)
	pkADRS.setKeyPair(adrs.keyPair())
	pk := make([]byte, n)
	h.t(pk, &pkADRS, tmp)
	return pk
}
