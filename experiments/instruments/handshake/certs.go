// Package handshake runs TLS 1.3 handshakes (RFC 8446) between a Go
// crypto/tls server and client for exactly one configuration at a time.
// That is, one key-exchange group, one certificate key type, leaf only or
// leaf plus CA certificate. It is the traffic generator of Study A: every
// connection is a fresh full handshake (no session tickets, no
// resumption), every connection is checked against the configuration, and
// every connection is timed in process so that capture-derived times can
// be compared with it.
package handshake

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/mldsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"net"
	"strings"
	"time"
)

// CertKey names the public-key algorithm of the server certificate (and of
// its CA when a chain is sent).
type CertKey string

// The supported certificate key types. ML-DSA is FIPS 204; its TLS 1.3
// signature schemes are 0x0904-0x0906 (draft-ietf-tls-mldsa).
const (
	Ed25519   CertKey = "ed25519"
	ECDSAP256 CertKey = "ecdsa-p256"
	MLDSA44   CertKey = "mldsa44"
	MLDSA65   CertKey = "mldsa65"
	MLDSA87   CertKey = "mldsa87"
)

// CertKeys lists every supported certificate key type in a fixed order.
var CertKeys = []CertKey{Ed25519, ECDSAP256, MLDSA44, MLDSA65, MLDSA87}

// ParseCertKey accepts a CertKey name, case-insensitively, with or without
// dashes ("ML-DSA-87", "mldsa87", "ECDSA-P256").
func ParseCertKey(s string) (CertKey, error) {
	n := strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(s, "-", ""), "_", ""))
	for _, k := range CertKeys {
		if strings.ReplaceAll(string(k), "-", "") == n {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown certificate key %q: use one of %v", s, CertKeys)
}

// Groups lists the key-exchange groups Study A measures, in a fixed order.
var Groups = []tls.CurveID{tls.X25519, tls.X25519MLKEM768, tls.SecP256r1MLKEM768, tls.SecP384r1MLKEM1024, tls.MLKEM1024}

// ParseGroup accepts a group by the name Go's tls.CurveID.String prints
// (e.g. "X25519MLKEM768"), case-insensitively, or as a hex code point
// ("0x0202").
func ParseGroup(s string) (tls.CurveID, error) {
	for _, g := range append(slicesClone(Groups), tls.CurveP256, tls.CurveP384, tls.CurveP521) {
		if strings.EqualFold(g.String(), s) {
			return g, nil
		}
	}
	var v uint16
	if _, err := fmt.Sscanf(strings.ToLower(s), "0x%x", &v); err == nil {
		return tls.CurveID(v), nil
	}
	return 0, fmt.Errorf("unknown key-exchange group %q: use one of %v", s, Groups)
}

func slicesClone(g []tls.CurveID) []tls.CurveID { return append([]tls.CurveID(nil), g...) }

// CertConfig says which certificates to make.
type CertConfig struct {
	Key   CertKey
	Chain bool // leaf signed by a CA, server sends leaf + CA; else a self-signed leaf
	// Seed makes keys and certificates reproducible: the same seed gives
	// byte-identical certificates.
	Seed uint64
	// NotBefore and NotAfter are the validity dates (fixed, never time.Now,
	// so certificates stay byte-identical). Zero means 2026-01-01 to 2036-01-01.
	NotBefore, NotAfter time.Time
	// Host is the DNS name and the IP address in the leaf (default "localhost", 127.0.0.1, ::1).
	Host string
}

// Bundle is the result of MakeCerts: the server's certificate and the
// client's trust anchors.
type Bundle struct {
	Server tls.Certificate // Certificate[0] is the leaf; Certificate[1] the CA when chained
	Roots  *x509.CertPool
	Leaf   *x509.Certificate
	Key    CertKey
}

// seededStream returns a deterministic byte stream for key generation.
// ChaCha8 (math/rand/v2) keyed with SHA-256("pqrepro handshake" || label || seed).
func seededStream(seed uint64, label string) io.Reader {
	h := sha256.New()
	fmt.Fprintf(h, "pqrepro handshake %s %d", label, seed)
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return rand.NewChaCha8(k)
}

// newKey derives a private key of kind k from the stream r. Go's
// GenerateKey functions ignore custom readers (Go 1.26+), so keys come from
// seeds: Ed25519 from a 32-byte seed (RFC 8032 5.1.5), ML-DSA from its
// 32-byte xi seed (FIPS 204 Algorithm 1), ECDSA P-256 from a raw scalar
// drawn by rejection sampling in [1, n-1] (SEC 1 2.3.6 encoding).
func newKey(k CertKey, r io.Reader) (crypto.Signer, error) {
	seed := make([]byte, 32)
	read := func() error { _, err := io.ReadFull(r, seed); return err }
	if err := read(); err != nil {
		return nil, err
	}
	switch k {
	case Ed25519:
		return ed25519.NewKeyFromSeed(seed), nil
	case ECDSAP256:
		for i := 0; i < 64; i++ {
			if key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), seed); err == nil {
				return key, nil
			}
			if err := read(); err != nil {
				return nil, err
			}
		}
		return nil, fmt.Errorf("ecdsa: no valid scalar after 64 draws (stream broken?)")
	case MLDSA44:
		return mldsa.NewPrivateKey(mldsa.MLDSA44(), seed)
	case MLDSA65:
		return mldsa.NewPrivateKey(mldsa.MLDSA65(), seed)
	case MLDSA87:
		return mldsa.NewPrivateKey(mldsa.MLDSA87(), seed)
	}
	return nil, fmt.Errorf("unknown certificate key %q: use one of %v", k, CertKeys)
}

// detSigner makes certificate signatures deterministic so that the same
// seed gives byte-identical certificates (and so identical bytes on the
// wire). ECDSA with a nil reader signs per RFC 6979, ML-DSA uses the
// deterministic variant of FIPS 204 Algorithm 2 (rnd = 0^32), Ed25519 is
// deterministic anyway.
type detSigner struct{ crypto.Signer }

func (s detSigner) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	switch k := s.Signer.(type) {
	case *ecdsa.PrivateKey:
		return k.Sign(nil, digest, opts)
	case *mldsa.PrivateKey:
		return k.SignDeterministic(digest, opts)
	}
	return s.Signer.Sign(nil, digest, opts)
}

// MakeCerts builds the server certificate (and CA) for c deterministically.
func MakeCerts(c CertConfig) (*Bundle, error) {
	nb, na := c.NotBefore, c.NotAfter
	if nb.IsZero() {
		nb = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if na.IsZero() {
		na = time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if !na.After(nb) {
		return nil, fmt.Errorf("certificate validity: NotAfter %s is not after NotBefore %s", na, nb)
	}
	host := c.Host
	if host == "" {
		host = "localhost"
	}
	stream := seededStream(c.Seed, string(c.Key))
	leafKey, err := newKey(c.Key, stream)
	if err != nil {
		return nil, fmt.Errorf("leaf key %s: %w", c.Key, err)
	}
	leafT := &x509.Certificate{
		SerialNumber:          big.NewInt(2),
		Subject:               pkix.Name{CommonName: host, Organization: []string{"pqrepro"}},
		NotBefore:             nb,
		NotAfter:              na,
		DNSNames:              []string{host},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	b := &Bundle{Roots: x509.NewCertPool(), Key: c.Key}
	var leafDER []byte
	if c.Chain {
		caKey, err := newKey(c.Key, stream)
		if err != nil {
			return nil, fmt.Errorf("CA key %s: %w", c.Key, err)
		}
		caT := &x509.Certificate{
			SerialNumber:          big.NewInt(1),
			Subject:               pkix.Name{CommonName: "pqrepro test CA " + string(c.Key), Organization: []string{"pqrepro"}},
			NotBefore:             nb,
			NotAfter:              na,
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
			IsCA:                  true,
			BasicConstraintsValid: true,
		}
		caDER, err := x509.CreateCertificate(nil, caT, caT, caKey.Public(), detSigner{caKey})
		if err != nil {
			return nil, fmt.Errorf("create CA certificate %s: %w", c.Key, err)
		}
		ca, err := x509.ParseCertificate(caDER)
		if err != nil {
			return nil, fmt.Errorf("parse CA certificate: %w", err)
		}
		leafDER, err = x509.CreateCertificate(nil, leafT, ca, leafKey.Public(), detSigner{caKey})
		if err != nil {
			return nil, fmt.Errorf("create leaf certificate %s: %w", c.Key, err)
		}
		b.Roots.AddCert(ca)
		b.Server.Certificate = [][]byte{leafDER, caDER}
	} else {
		leafT.IsCA = true // a self-signed leaf is its own trust anchor
		leafT.KeyUsage |= x509.KeyUsageCertSign
		leafDER, err = x509.CreateCertificate(nil, leafT, leafT, leafKey.Public(), detSigner{leafKey})
		if err != nil {
			return nil, fmt.Errorf("create self-signed leaf %s: %w", c.Key, err)
		}
		b.Server.Certificate = [][]byte{leafDER}
	}
	b.Leaf, err = x509.ParseCertificate(leafDER)
	if err != nil {
		return nil, fmt.Errorf("parse leaf certificate: %w", err)
	}
	if !c.Chain {
		b.Roots.AddCert(b.Leaf)
	}
	b.Server.PrivateKey = leafKey
	b.Server.Leaf = b.Leaf
	return b, nil
}

// CertKeyOf names the key type of a parsed certificate, for checking what a
// peer actually presented.
func CertKeyOf(c *x509.Certificate) (CertKey, error) {
	switch pk := c.PublicKey.(type) {
	case ed25519.PublicKey:
		return Ed25519, nil
	case *ecdsa.PublicKey:
		if pk.Curve == elliptic.P256() {
			return ECDSAP256, nil
		}
	case *mldsa.PublicKey:
		switch pk.Parameters() {
		case mldsa.MLDSA44():
			return MLDSA44, nil
		case mldsa.MLDSA65():
			return MLDSA65, nil
		case mldsa.MLDSA87():
			return MLDSA87, nil
		}
	}
	return "", fmt.Errorf("certificate key %T (%s) is not one of %v", c.PublicKey, c.PublicKeyAlgorithm, CertKeys)
}
