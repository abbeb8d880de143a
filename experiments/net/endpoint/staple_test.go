package main

import (
	"bytes"
	"crypto/tls"
	"net"
	"testing"
)

// TestStapleOnlyWhenAsked: a listener with staple=N sends exactly N zero
// bytes as its OCSP staple (ConnectionState.OCSPResponse at the client:
// Go's client asks in every ClientHello), one without sends none, and
// the key exchange is the listener's group either way (the
// configuration offers only it).
func TestStapleOnlyWhenAsked(t *testing.T) {
	cert, pool := testCert(t)
	for _, tc := range []struct {
		listen string
		staple int
	}{
		{"127.0.0.1:0=X25519/staple=1080", 1080},
		{"127.0.0.1:0=X25519", 0},
		{"127.0.0.1:0=X25519MLKEM768", 0},
	} {
		t.Run(tc.listen, func(t *testing.T) {
			addr, gname, staple, err := parseListen(tc.listen)
			if err != nil || staple != tc.staple || addr != "127.0.0.1:0" {
				t.Fatalf("parseListen(%q) = %q, %q, %d, %v", tc.listen, addr, gname, staple, err)
			}
			g, _ := parseGroup(gname)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			done := make(chan error, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					done <- err
					return
				}
				defer c.Close()
				s := tls.Server(c, serverConfig(cert, tls.CurveID(g), staple))
				done <- s.Handshake()
			}()
			raw, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			cfg := tlsBase()
			cfg.RootCAs, cfg.ServerName, cfg.CurvePreferences = pool, "localhost", []tls.CurveID{tls.CurveID(g)}
			c := tls.Client(raw, cfg)
			if err := c.Handshake(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			st := c.ConnectionState()
			if len(st.OCSPResponse) != tc.staple || !bytes.Equal(st.OCSPResponse, make([]byte, tc.staple)) {
				t.Errorf("staple of %d bytes, want %d zero bytes", len(st.OCSPResponse), tc.staple)
			}
		})
	}
	for _, bad := range []string{"a:1=X25519/staple=x", "a:1=X25519/pad=3", "a:1=X25519/staple=-1", "a:1=Nope", "a:1"} {
		if _, _, _, err := parseListen(bad); err == nil {
			t.Errorf("parseListen(%q) accepted", bad)
		}
	}
}
