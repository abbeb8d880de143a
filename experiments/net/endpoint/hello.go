package main

import (
	"fmt"
	"net"
	"sync"
)

// hrrRandom is the ServerHello.random of a HelloRetryRequest, SHA-256 of
// "HelloRetryRequest" (RFC 8446 4.1.3).
var hrrRandom = [32]byte{
	0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
	0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
}

// groupNames are the TLS named groups (IANA "TLS Supported Groups") by the
// names Go's crypto/tls CurveID.String gives them. The runner and the
// capture reader use them too.
var groupNames = map[uint16]string{
	0x0017: "CurveP256", 0x0018: "CurveP384", 0x0019: "CurveP521", 0x001D: "X25519",
	0x0202: "MLKEM1024", 0x11EB: "SecP256r1MLKEM768", 0x11EC: "X25519MLKEM768", 0x11ED: "SecP384r1MLKEM1024",
}

func groupName(g uint16) string {
	if n, ok := groupNames[g]; ok {
		return n
	}
	return fmt.Sprintf("0x%04X", g)
}

func parseGroup(s string) (uint16, error) {
	for id, n := range groupNames {
		if n == s {
			return id, nil
		}
	}
	return 0, fmt.Errorf("unknown group %q", s)
}

// helloSniffer watches one direction of a connection's plaintext TLS
// records for the ServerHello and any HelloRetryRequest before it. It watches
// what the server writes, or what the client reads. The
// negotiated group and the HRR flag are then known with Go 1.24 too, whose
// tls.ConnectionState has neither (CurveID and HelloRetryRequest came
// later). It stops at the first record that is neither a handshake nor a
// change_cipher_spec record: from there on everything is encrypted.
type helloSniffer struct {
	mu    sync.Mutex
	buf   []byte // unparsed record bytes
	hs    []byte // handshake message bytes of the plaintext records
	done  bool
	group uint16
	hrr   bool
	err   error
}

func (h *helloSniffer) feed(p []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return
	}
	h.buf = append(h.buf, p...)
	for len(h.buf) >= 5 && !h.done {
		typ, n := h.buf[0], int(h.buf[3])<<8|int(h.buf[4])
		if len(h.buf) < 5+n {
			return
		}
		body := h.buf[5 : 5+n]
		h.buf = h.buf[5+n:]
		switch typ {
		case 20: // change_cipher_spec (middlebox compatibility)
		case 22:
			h.hs = append(h.hs, body...)
			h.parseHandshake()
		default:
			if h.group == 0 && h.err == nil {
				h.err = fmt.Errorf("no ServerHello before record type %d", typ)
			}
			h.done = true
		}
	}
}

func (h *helloSniffer) parseHandshake() {
	for len(h.hs) >= 4 && !h.done {
		typ, n := h.hs[0], int(h.hs[1])<<16|int(h.hs[2])<<8|int(h.hs[3])
		if len(h.hs) < 4+n {
			return
		}
		msg := h.hs[4 : 4+n]
		h.hs = h.hs[4+n:]
		if typ != 2 { // not a ServerHello
			continue
		}
		hrr, g, err := parseServerHello(msg)
		if err != nil {
			h.err, h.done = err, true
			return
		}
		if hrr {
			h.hrr = true
			continue
		}
		h.group, h.done = g, true
	}
}

// parseServerHello returns whether msg (a ServerHello body) is a
// HelloRetryRequest and the group of its key_share extension (RFC 8446
// 4.1.3, 4.2.8).
func parseServerHello(msg []byte) (hrr bool, group uint16, err error) {
	bad := fmt.Errorf("malformed ServerHello (%d bytes)", len(msg))
	if len(msg) < 2+32+1 {
		return false, 0, bad
	}
	hrr = [32]byte(msg[2:34]) == hrrRandom
	p := msg[34:]
	sid := int(p[0])
	if len(p) < 1+sid+2+1+2 {
		return false, 0, bad
	}
	p = p[1+sid+2+1:]
	extLen := int(p[0])<<8 | int(p[1])
	p = p[2:]
	if len(p) < extLen {
		return false, 0, bad
	}
	p = p[:extLen]
	for len(p) >= 4 {
		typ, n := int(p[0])<<8|int(p[1]), int(p[2])<<8|int(p[3])
		if len(p) < 4+n {
			return false, 0, bad
		}
		if typ == 0x0033 && n >= 2 { // key_share: the group first
			return hrr, uint16(p[4])<<8 | uint16(p[5]), nil
		}
		p = p[4+n:]
	}
	return false, 0, fmt.Errorf("ServerHello without key_share")
}

func (h *helloSniffer) result() (group string, hrr bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return "", h.hrr, h.err
	}
	if h.group == 0 {
		return "", h.hrr, fmt.Errorf("no ServerHello seen")
	}
	return groupName(h.group), h.hrr, nil
}

// sniffConn feeds what the client reads, or what the server writes, to a
// helloSniffer.
type sniffConn struct {
	net.Conn
	s      *helloSniffer
	writes bool // sniff writes (server side) instead of reads
}

func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.writes && n > 0 {
		c.s.feed(p[:n])
	}
	return n, err
}

func (c *sniffConn) Write(p []byte) (int, error) {
	if c.writes {
		c.s.feed(p)
	}
	return c.Conn.Write(p)
}
