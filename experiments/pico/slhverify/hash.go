package slhverify

import (
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/binary"
	"hash"
)

// Address types, FIPS 205, Section 4.2.
const (
	addrWOTSHash  = 0
	addrWOTSPK    = 1
	addrTree      = 2
	addrFORSTree  = 3
	addrFORSRoots = 4
)

// address is the 32-byte ADRS of FIPS 205, Section 4.2 (Figure 2). It holds
// the layer address (4 bytes), tree address (12 bytes), type (4 bytes) and
// three 4-byte words whose meaning depends on the type. All fields are
// big-endian.
type address [32]byte

// setLayer is ADRS.setLayerAddress (FIPS 205, Table 1).
func (a *address) setLayer(l uint32) { binary.BigEndian.PutUint32(a[0:4], l) }

// setTree is ADRS.setTreeAddress: the tree address is at most 64 bits wide
// for every parameter set, so bytes 4..7 stay zero.
func (a *address) setTree(t uint64) {
	clear(a[4:8])
	binary.BigEndian.PutUint64(a[8:16], t)
}

// setTypeAndClear is ADRS.setTypeAndClear: it sets the type and zeroes the
// three words that follow it.
func (a *address) setTypeAndClear(typ uint32) {
	binary.BigEndian.PutUint32(a[16:20], typ)
	clear(a[20:32])
}

func (a *address) setKeyPair(i uint32)    { binary.BigEndian.PutUint32(a[20:24], i) }
func (a *address) keyPair() uint32        { return binary.BigEndian.Uint32(a[20:24]) }
func (a *address) setChain(i uint32)      { binary.BigEndian.PutUint32(a[24:28], i) }
func (a *address) setHash(i uint32)       { binary.BigEndian.PutUint32(a[28:32], i) }
func (a *address) setTreeHeight(i uint32) { binary.BigEndian.PutUint32(a[24:28], i) }
func (a *address) setTreeIndex(i uint32)  { binary.BigEndian.PutUint32(a[28:32], i) }
func (a *address) treeIndex() uint32      { return binary.BigEndian.Uint32(a[28:32]) }

// appendCompressed appends ADRSc = ADRS[3] || ADRS[8:16] || ADRS[19] ||
// ADRS[20:32], the 22-byte compressed address of FIPS 205, Section 11.2.
func (a *address) appendCompressed(b []byte) []byte {
	b = append(b, a[3])
	b = append(b, a[8:16]...)
	b = append(b, a[19])
	return append(b, a[20:32]...)
}

// hasher computes the tweakable hash functions F, H and T_l of FIPS 205,
// Section 11, for one public seed. It is not safe for concurrent use.
type hasher struct {
	n     int
	sha2  bool
	big   bool   // SHA2 at security categories 3 and 5: H and T_l use SHA-512 (Section 11.2.2)
	pre   []byte // SHA2: PK.seed || toByte(0, 64 - n); SHAKE: PK.seed
	pre2  []byte // SHA2 with big: PK.seed || toByte(0, 128 - n)
	buf   []byte
	shake *sha3.SHAKE
	sum   [sha512.Size]byte
}

func newHasher(p *Params, pkSeed []byte) *hasher {
	h := &hasher{n: p.N, sha2: p.SHA2, big: p.SHA2 && p.N > 16}
	if h.sha2 {
		h.pre = make([]byte, sha256.BlockSize)
		copy(h.pre, pkSeed)
		if h.big {
			h.pre2 = make([]byte, sha512.BlockSize)
			copy(h.pre2, pkSeed)
		}
	} else {
		h.pre = append([]byte(nil), pkSeed...)
		h.shake = sha3.NewSHAKE256()
	}
	return h
}

// tweak computes Trunc_n(Hash(PK.seed-block || ADRS(c) || x...)) into out. The
// hash is, with wide set, the SHA-512 based H and T_l of Section 11.2.2,
// otherwise F (and, for n = 16, H and T_l) of Sections 11.1 and 11.2.1. out
// may alias any input.
func (h *hasher) tweak(out []byte, adrs *address, wide bool, x ...[]byte) {
	if !h.sha2 {
		// Section 11.1: SHAKE256(PK.seed || ADRS || M, 8n).
		h.shake.Reset()
		h.shake.Write(h.pre)
		h.shake.Write(adrs[:])
		for _, b := range x {
			h.shake.Write(b)
		}
		h.shake.Read(out[:h.n])
		return
	}
	pre := h.pre
	if wide && h.big {
		pre = h.pre2
	}
	b := append(h.buf[:0], pre...)
	b = adrs.appendCompressed(b)
	for _, v := range x {
		b = append(b, v...)
	}
	h.buf = b
	if wide && h.big {
		h.sum = sha512.Sum512(b)
	} else {
		*(*[sha256.Size]byte)(h.sum[:]) = sha256.Sum256(b)
	}
	copy(out[:h.n], h.sum[:h.n])
}

// f is F(PK.seed, ADRS, M1).
func (h *hasher) f(out []byte, adrs *address, m []byte) { h.tweak(out, adrs, false, m) }

// hh is H(PK.seed, ADRS, left || right).
func (h *hasher) hh(out []byte, adrs *address, left, right []byte) {
	h.tweak(out, adrs, true, left, right)
}

// t is T_l(PK.seed, ADRS, M) for l = len(m)/n.
func (h *hasher) t(out []byte, adrs *address, m []byte) { h.tweak(out, adrs, true, m) }

// hashMessage is H_msg(R, PK.seed, PK.root, M) of FIPS 205, Section 11,
// with M given as the concatenation of parts, returning p.M bytes.
func hashMessage(p *Params, r, pkSeed, pkRoot []byte, parts ...[]byte) []byte {
	out := make([]byte, p.M)
	if !p.SHA2 {
		// Section 11.1: SHAKE256(R || PK.seed || PK.root || M, 8m).
		s := sha3.NewSHAKE256()
		for _, b := range [][]byte{r, pkSeed, pkRoot} {
			s.Write(b)
		}
		for _, b := range parts {
			s.Write(b)
		}
		s.Read(out)
		return out
	}
	// Sections 11.2.1 and 11.2.2: MGF1-SHA-x(R || PK.seed ||
	// SHA-x(R || PK.seed || PK.root || M), m), with x = 256 for n = 16
	// and x = 512 otherwise.
	newHash := sha256.New
	if p.N > 16 {
		newHash = sha512.New
	}
	hs := newHash()
	for _, b := range [][]byte{r, pkSeed, pkRoot} {
		hs.Write(b)
	}
	for _, b := range parts {
		hs.Write(b)
	}
	seed := append(append(append([]byte(nil), r...), pkSeed...), hs.Sum(nil)...)
	return mgf1(newHash, seed, out)
}

// mgf1 fills out with MGF1 (RFC 8017, Appendix B.2.1) of seed.
func mgf1(newHash func() hash.Hash, seed, out []byte) []byte {
	h := newHash()
	var ctr [4]byte
	var blk []byte
	for done, i := 0, uint32(0); done < len(out); i++ {
		h.Reset()
		h.Write(seed)
		binary.BigEndian.PutUint32(ctr[:], i)
		h.Write(ctr[:])
		blk = h.Sum(blk[:0])
		done += copy(out[done:], blk)
	}
	return out
}
