package main

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

// pair returns a client and a server TLS connection over loopback TCP,
// both past their handshake.
func pair(t *testing.T) (cli, srv *tls.Conn) {
	t.Helper()
	cert, pool := testCert(t)
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
	srv = tls.Server(b, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13, SessionTicketsDisabled: true})
	cli = tls.Client(a, &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS13})
	done := make(chan error, 1)
	go func() { done <- srv.Handshake() }()
	if err := cli.Handshake(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return cli, srv
}

// The server answers a request with exactly the bytes asked for; the
// client reads them to the close_notify and reports their last byte.
func TestFetchRespond(t *testing.T) {
	for _, size := range []int{0, 1, 10 << 10, 1 << 20} {
		cli, srv := pair(t)
		go func() { respond(srv); srv.Close() }()
		n, last, err := fetch(cli, size)
		if err != nil || n != size || last.IsZero() {
			t.Errorf("size %d: read %d, last %v, err %v; want %d bytes and a last-byte time", size, n, last, err, size)
		}
	}
}

// A connection that ends before the last byte is incomplete: how far it
// came and an error, never a time to last byte; so is one that runs long.
func TestFetchIncomplete(t *testing.T) {
	for _, tc := range []struct {
		name       string
		size, sent int
		want       error
	}{
		{"short", 100 << 10, 60 << 10, io.ErrUnexpectedEOF},
		{"nothing", 10, 0, io.ErrUnexpectedEOF},
		{"long", 10, 20, errLong},
	} {
		cli, srv := pair(t)
		go func() {
			br := make([]byte, 64)
			srv.Read(br) // the request
			srv.Write(make([]byte, tc.sent))
			srv.Close()
		}()
		n, last, err := fetch(cli, tc.size)
		if !errors.Is(err, tc.want) || n != tc.sent || !last.IsZero() {
			t.Errorf("%s: read %d, last %v, err %v; want %d bytes, no last-byte time, %v", tc.name, n, last, err, tc.sent, tc.want)
		}
	}
}

// A request the server cannot serve (bad line, negative, above the
// bound) gets no answer, so the client sees an incomplete response.
func TestRespondBadRequest(t *testing.T) {
	for _, req := range []string{"size -1\n", "size 16777217\n", "get 10\n", "size ten\n", strings.Repeat("x", 100) + "\n"} {
		cli, srv := pair(t)
		go func() { respond(srv); srv.Close() }()
		if _, err := io.WriteString(cli, req); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(cli)
		if len(b) != 0 || err != nil {
			t.Errorf("request %q: answered %d bytes (err %v), want none", req, len(b), err)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"1048576", 1 << 20, true}, {"16777216", 16 << 20, true},
		{"16777217", 0, false}, {"-1", 0, false}, {"1e6", 0, false}, {"", 0, false},
	} {
		n, err := parseSize(tc.in)
		if (err == nil) != tc.ok || n != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d ok %v", tc.in, n, err, tc.want, tc.ok)
		}
	}
}
