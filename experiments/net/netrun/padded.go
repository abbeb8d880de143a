package netrun

import (
	"crypto/tls"
	"fmt"
)

// PaddedArm is the group column of the padded arm's rows, the arm's name
// in the registration (analysis/ttlb/mechanism2.txt, "arm:").
const PaddedArm = "X25519-padded"

// The sizes that fix the padded arm's pad, in bytes.
//
// The hybrid's server key share is an ML-KEM-768 ciphertext (FIPS 203,
// table 3) followed by an X25519 share (RFC 7748), as
// draft-ietf-tls-ecdhe-mlkem defines X25519MLKEM768; X25519's own share
// is 32 bytes. The staple rides in a status_request extension of the
// Certificate message's first entry (RFC 8446 4.4.2.1), framed by the
// extension's type and length (4 bytes, RFC 8446 4.2) and by the
// CertificateStatus' status_type and the OCSPResponse's length (4
// bytes, RFC 6066 8).
const (
	MLKEM768CiphertextBytes   = 1088
	X25519ShareBytes          = 32
	HybridServerShareBytes    = MLKEM768CiphertextBytes + X25519ShareBytes
	StatusRequestFramingBytes = 4 + 4
)

// PadBytes is the padded arm's OCSP staple length: 1,120 - 32 - 8 = 1,080.
//
// With it the padded X25519 server's first flight carries as many TLS
// bytes as the hybrid's (analysis/ttlb/mechanism2.txt, "pad-bytes:",
// checked by a test).
const PadBytes = HybridServerShareBytes - X25519ShareBytes - StatusRequestFramingBytes

// paddedHow says in meta.json how the server tells the arms apart.
const paddedHow = "the padded arm has a listener of its own on the server (port + its index, like each group's), an endpoint server listening with X25519 and an OCSP staple of pad_bytes zero bytes (tls.Certificate.OCSPStaple, sent in TLS 1.3's Certificate message because Go's client always sends status_request); its client dials that port offering X25519 only, with the same server name as every arm, so every arm's ClientHello is the one X25519 or the hybrid always sends: no byte of it changes with the arm"

// arms are the arm indices of a transfer series holding every arm: the
// plan's groups, then the padded arm (index len(Groups)) when it is on.
func (p Plan) arms() []int {
	n := len(p.Groups)
	if p.TransferPaddedArm {
		n++
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// isPadded reports whether arm index gi is the padded arm.
func (p Plan) isPadded(gi int) bool { return p.TransferPaddedArm && gi == len(p.Groups) }

// armName is the group column of arm gi: its group's IANA name, or
// PaddedArm.
func (p Plan) armName(gi int) string {
	if p.isPadded(gi) {
		return PaddedArm
	}
	return p.Groups[gi].String()
}

// armGroup is the key exchange arm gi negotiates (X25519 for the padded
// arm).
func (p Plan) armGroup(gi int) tls.CurveID {
	if p.isPadded(gi) {
		return tls.X25519
	}
	return p.Groups[gi]
}

// armListen is the endpoint server's -listen value of arm gi at addr.
func (p Plan) armListen(addr string, gi int) string {
	l := addr + "=" + p.armGroup(gi).String()
	if p.isPadded(gi) {
		l += fmt.Sprintf("/staple=%d", p.TransferPadBytes)
	}
	return l
}
