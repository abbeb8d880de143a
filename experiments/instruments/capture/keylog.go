package capture

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"slices"
	"unicode"
)

// KeyLogStats says what the key log (the --keylog file plus the capture's
// Decryption Secrets Blocks) held and what it confirmed.
type KeyLogStats struct {
	Lines    int // non-empty lines that are not comments
	Unusable int // lines that are not "LABEL <64 hex digits> <hex secret>"
	Secrets  int // distinct CLIENT_HANDSHAKE_TRAFFIC_SECRET client randoms
	Matched  int // of those, the ones whose client random is a record's
	// Conflicts counts client randoms for which the given key log and the
	// capture's Decryption Secrets Blocks hold different secrets; the
	// capture's are used (they were written with the packets).
	Conflicts int
	Verified  int // records whose client Finished decrypted as a Finished
	Failed    int // records with a secret whose client Finished did not decrypt
}

// Finished check outcomes (Record.FinishedCheck).
const (
	CheckVerified         = "verified"            // decrypted with the key log secret and was a Finished message
	CheckNoSecret         = "no_secret"           // the key log has no secret for this client random
	CheckDecryptFailed    = "decrypt_failed"      // the secret did not decrypt the record: a wrong or foreign key log
	CheckNotFinished      = "not_finished"        // decrypted, but not a Finished message
	CheckUnsupportedSuite = "unsupported_suite"   // not an AES-GCM suite (ChaCha20-Poly1305 is not checked)
	CheckNotCaptured      = "record_not_captured" // no client random or no complete client Finished record in the capture
)

// maxKeyLogLine bounds a key log line. The longest NSS label
// (CLIENT_HANDSHAKE_TRAFFIC_SECRET, 31 bytes), a space, the client random
// (64 hex digits), a space and the longest TLS secret (SHA-384's 48 bytes,
// 96 hex digits) make 193 bytes; white space around them is allowed up to
// 256. A longer line is no key log line: one 200 MB "secret" would
// otherwise cost a gigabyte to decode.
const maxKeyLogLine = 256

// MaxKeyLog bounds a key log's size. 64 MiB holds the five secret lines of
// TLS 1.3 (about 1 kB a connection) for some 60,000 connections, far more
// than any study's capture, and the parsed secrets take at most about the
// file's size again (parseKeyLog keeps hex slices of it).
const MaxKeyLog = 64 << 20

// ErrKeyLogTooLarge is returned for a key log larger than MaxKeyLog.
var ErrKeyLogTooLarge = errors.New("capture: key log larger than 64 MiB")

// ReadKeyLog reads a key log of at most MaxKeyLog bytes from r. A longer
// or endless one (/dev/zero, a capture given by mistake) is refused
// without holding more than MaxKeyLog bytes.
// A regular file is read into a buffer of its size, so the bytes held are
// the file's (io.ReadAll's doubling would hold up to twice as many).
func ReadKeyLog(r io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() <= MaxKeyLog {
			buf.Grow(int(st.Size()) + bytes.MinRead)
		}
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, MaxKeyLog+1)); err != nil {
		return nil, fmt.Errorf("capture: read key log: %w", err)
	}
	b := buf.Bytes()
	if len(b) > MaxKeyLog {
		return nil, fmt.Errorf("%w (at most %d bytes); give the NSS key log file of the run (SSLKEYLOGFILE), not a capture or a device", ErrKeyLogTooLarge, MaxKeyLog)
	}
	return b, nil
}

// checkKeyLogLines rejects a key log (named what, for the message) with
// a line longer than any key log line, naming the first such line.
func checkKeyLogLines(what string, b []byte) error {
	if len(b) > MaxKeyLog {
		return fmt.Errorf("%w: %s has %d bytes; give the NSS key log file of the run", ErrKeyLogTooLarge, what, len(b))
	}
	n := 0
	for line := range bytes.Lines(b) {
		n++
		if len(line) > maxKeyLogLine {
			return fmt.Errorf("capture: %s, line %d: %d bytes, longer than any key log line (at most %d: LABEL, a 64-digit client random and a secret of at most 48 bytes in hex); is it an NSS key log?", what, n, len(line), maxKeyLogLine)
		}
	}
	return nil
}

// parseKeyLog reads NSS key log lines and keeps, per client random, the
// CLIENT_HANDSHAKE_TRAFFIC_SECRET as a hex slice of b (no copy). That secret
// keys the client's encrypted handshake messages (RFC 8446 7.1). Lines of
// other labels are valid but unused; malformed lines are counted.
func parseKeyLog(b []byte) (map[[32]byte][]byte, KeyLogStats) {
	m := make(map[[32]byte][]byte)
	st := scanKeyLog(b, func(cr [32]byte, sec []byte) { m[cr] = sec })
	st.Secrets = len(m)
	return m, st
}

// scanKeyLog calls fn with the client random and hex secret of every
// CLIENT_HANDSHAKE_TRAFFIC_SECRET line of b, in order. It counts the
// lines and the unusable ones; it allocates nothing per line.
func scanKeyLog(b []byte, fn func(cr [32]byte, sec []byte)) KeyLogStats {
	var st KeyLogStats
	var f [3][]byte
	for line := range bytes.Lines(b) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		st.Lines++
		n := 0
		for len(line) > 0 && n < len(f) {
			i := bytes.IndexFunc(line, unicode.IsSpace)
			if i < 0 {
				i = len(line)
			}
			f[n], line = line[:i], bytes.TrimLeftFunc(line[i:], unicode.IsSpace)
			n++
		}
		var cr [32]byte
		var sec [maxKeyLogLine / 2]byte
		if n != 3 || len(line) > 0 || len(f[1]) != 64 || len(f[2]) == 0 || len(f[2]) > 2*len(sec) {
			st.Unusable++
			continue
		}
		if _, err := hex.Decode(cr[:], f[1]); err != nil {
			st.Unusable++
			continue
		}
		if _, err := hex.Decode(sec[:], f[2]); err != nil {
			st.Unusable++
			continue
		}
		if string(f[0]) == "CLIENT_HANDSHAKE_TRAFFIC_SECRET" {
			fn(cr, f[2])
		}
	}
	return st
}

// checkFinished fills FinishedCheck and ClientFinishedVerified of every
// record from the given key log and the capture's own secrets (dsb), and
// returns the key logs' statistics. Of the given key log it keeps only
// the secrets of the records' client randoms and of the capture's own
// (for Conflicts), and 32 bytes a line to count distinct secrets, so
// its memory is the file's and a sixth of it again at most.
func checkFinished(rs []Record, given, dsb []byte) KeyLogStats {
	keys, st := parseKeyLog(dsb)
	want := make(map[[32]byte]bool, len(rs))
	for i := range rs {
		if rs[i].haveCR {
			want[rs[i].cr] = true
		}
	}
	inDSB := map[[32]byte][]byte{} // the given key log's last secret of a client random the capture has
	gk := map[[32]byte][]byte{}    // ... of a record's client random the capture has not
	var others [][32]byte          // client randoms the capture has not, with repeats
	gst := scanKeyLog(given, func(cr [32]byte, sec []byte) {
		if _, ok := keys[cr]; ok {
			inDSB[cr] = sec
			return
		}
		if want[cr] {
			gk[cr] = sec
		}
		others = append(others, cr)
	})
	st.Lines += gst.Lines
	st.Unusable += gst.Unusable
	for cr, sec := range inDSB {
		if !bytes.EqualFold(keys[cr], sec) { // hex digits of either case
			st.Conflicts++
		}
	}
	slices.SortFunc(others, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
	st.Secrets = len(keys) + len(slices.Compact(others))
	for cr, sec := range gk {
		keys[cr] = sec
	}
	matched := map[[32]byte]bool{}
	for i := range rs {
		r := &rs[i]
		if st.Secrets > 0 {
			if r.haveCR && keys[r.cr] != nil {
				matched[r.cr] = true
			}
			r.FinishedCheck = verifyFinished(r, keys)
			r.ClientFinishedVerified = r.FinishedCheck == CheckVerified
			switch r.FinishedCheck {
			case CheckVerified:
				st.Verified++
			case CheckDecryptFailed, CheckNotFinished:
				st.Failed++
			}
		}
		r.cfinRec = nil
	}
	st.Matched = len(matched)
	return st
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
// handshake traffic key. It checks that its inner plaintext is a Finished
// message (type 20, length = hash length; RFC 8446 4.4.4). Key and iv come
// from the secret (RFC 8446 7.3), the nonce is iv XOR sequence number 0, the
// additional data the record header. Only the AES-GCM suites are supported
// (the standard library exposes no ChaCha20-Poly1305); other suites stay
// unverified. It returns one of the Check* outcomes.
func verifyFinished(r *Record, keys map[[32]byte][]byte) string {
	if !r.haveCR {
		return CheckNotCaptured
	}
	secret, err := hex.DecodeString(string(keys[r.cr]))
	if err != nil || len(secret) == 0 {
		return CheckNoSecret
	}
	if r.cfinCut || len(r.cfinRec) < 5+16 {
		return CheckNotCaptured
	}
	var h func() hash.Hash
	var keyLen int
	switch r.suite {
	case 0x1301: // TLS_AES_128_GCM_SHA256
		h, keyLen = sha256.New, 16
	case 0x1302: // TLS_AES_256_GCM_SHA384
		h, keyLen = sha512.New384, 32
	default:
		return CheckUnsupportedSuite
	}
	key, err := hkdfExpandLabel(h, secret, "key", keyLen)
	if err != nil {
		return CheckDecryptFailed
	}
	iv, err := hkdfExpandLabel(h, secret, "iv", 12)
	if err != nil {
		return CheckDecryptFailed
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return CheckDecryptFailed
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return CheckDecryptFailed
	}
	pt, err := aead.Open(nil, iv, r.cfinRec[5:], r.cfinRec[:5])
	if err != nil {
		return CheckDecryptFailed
	}
	i := len(pt) - 1
	for i >= 0 && pt[i] == 0 {
		i--
	}
	if i < 4 || pt[i] != recHandshake || pt[0] != 20 {
		return CheckNotFinished
	}
	n := int(pt[1])<<16 | int(pt[2])<<8 | int(pt[3])
	if n != h().Size() || 4+n > i {
		return CheckNotFinished
	}
	return CheckVerified
}
