package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"
)

func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}, pool
}

// The sniffers on both sides read the group the handshake used, and a
// HelloRetryRequest when the client's first key share is not the
// server's group.
func TestSniffGroupAndHRR(t *testing.T) {
	cert, pool := testCert(t)
	for _, tc := range []struct {
		name           string
		client, server []tls.CurveID
		group          string
		hrr            bool
	}{
		{"x25519", []tls.CurveID{tls.X25519}, []tls.CurveID{tls.X25519}, "X25519", false},
		{"hybrid", []tls.CurveID{tls.X25519MLKEM768}, []tls.CurveID{tls.X25519MLKEM768}, "X25519MLKEM768", false},
		{"hrr", []tls.CurveID{tls.CurveP256, tls.CurveP384}, []tls.CurveID{tls.CurveP384}, "CurveP384", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// TCP, not net.Pipe: a HelloRetryRequest flight has the
			// server write while the client writes, which an unbuffered
			// pipe deadlocks.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			a, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			b, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			cs, ss := &helloSniffer{}, &helloSniffer{}
			srv := tls.Server(&sniffConn{Conn: b, s: ss, writes: true}, &tls.Config{Certificates: []tls.Certificate{cert}, CurvePreferences: tc.server, MinVersion: tls.VersionTLS13})
			cli := tls.Client(&sniffConn{Conn: a, s: cs}, &tls.Config{RootCAs: pool, ServerName: "localhost", CurvePreferences: tc.client, MinVersion: tls.VersionTLS13})
			done := make(chan error, 1)
			go func() { done <- srv.Handshake() }()
			if err := cli.Handshake(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			for side, s := range map[string]*helloSniffer{"client": cs, "server": ss} {
				g, hrr, err := s.result()
				if err != nil || g != tc.group || hrr != tc.hrr {
					t.Errorf("%s: group %q hrr %v err %v, want %s hrr %v", side, g, hrr, err, tc.group, tc.hrr)
				}
			}
			a.Close()
			b.Close()
		})
	}
}

// FuzzSniffer: any byte stream, fed in any pieces, never panics.
func FuzzSniffer(f *testing.F) {
	f.Add([]byte{22, 3, 3, 0, 4, 2, 0, 0, 0}, 3)
	f.Add([]byte{23, 3, 3, 0, 0}, 1)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		s := &helloSniffer{}
		if cut < 0 {
			cut = -cut
		}
		if len(b) == 0 {
			cut = 0
		} else {
			cut %= len(b)
		}
		s.feed(b[:cut])
		s.feed(b[cut:])
		s.result()
	})
}
