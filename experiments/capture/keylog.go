package capture

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
)

// parseKeyLog reads NSS key log lines and keeps, per client random, the
// CLIENT_HANDSHAKE_TRAFFIC_SECRET (the key of the client's encrypted
// handshake messages, RFC 8446 7.1).
func parseKeyLog(b []byte) map[[32]byte][]byte {
	m := make(map[[32]byte][]byte)
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) != 3 || string(f[0]) != "CLIENT_HANDSHAKE_TRAFFIC_SECRET" {
			continue
		}
		cr, err1 := hex.DecodeString(string(f[1]))
		sec, err2 := hex.DecodeString(string(f[2]))
		if err1 != nil || err2 != nil || len(cr) != 32 {
			continue
		}
		m[[32]byte(cr)] = sec
	}
	return m
}

// hkdfExpandLabel is HKDF-Expand-Label of RFC 8446 7.1 with an empty context.
func hkdfExpandLabel(h func() hash.Hash, secret []byte, label string, n int) ([]byte, error) {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full))
	info = append(info, byte(n>>8), byte(n), byte(len(full)))
	info = append(info, full...)
	info = append(info, 0)
	return hkdf.Expand(h, secret, string(info), n)
}

// verifyFinished decrypts the record at ClientFinishedNs with the client
// handshake traffic key (RFC 8446 7.3: key and iv from the secret, nonce =
// iv XOR sequence number 0, additional data = the record header) and checks
// that its inner plaintext is a Finished message (type 20, length = hash
// length; RFC 8446 4.4.4). Only the AES-GCM suites are supported (the
// standard library exposes no ChaCha20-Poly1305); other suites stay
// unverified.
func verifyFinished(r *Record, keys map[[32]byte][]byte) {
	if len(keys) == 0 || !r.haveCR || len(r.cfinRec) < 5+16 {
		return
	}
	secret := keys[r.cr]
	if secret == nil {
		return
	}
	var h func() hash.Hash
	var keyLen int
	switch r.suite {
	case 0x1301: // TLS_AES_128_GCM_SHA256
		h, keyLen = sha256.New, 16
	case 0x1302: // TLS_AES_256_GCM_SHA384
		h, keyLen = sha512.New384, 32
	default:
		return
	}
	key, err := hkdfExpandLabel(h, secret, "key", keyLen)
	if err != nil {
		return
	}
	iv, err := hkdfExpandLabel(h, secret, "iv", 12)
	if err != nil {
		return
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return
	}
	pt, err := aead.Open(nil, iv, r.cfinRec[5:], r.cfinRec[:5])
	if err != nil {
		return
	}
	i := len(pt) - 1
	for i >= 0 && pt[i] == 0 {
		i--
	}
	if i < 4 || pt[i] != recHandshake || pt[0] != 20 {
		return
	}
	n := int(pt[1])<<16 | int(pt[2])<<8 | int(pt[3])
	r.ClientFinishedVerified = n == h().Size() && 4+n <= i
}
