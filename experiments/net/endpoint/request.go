package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// maxResponse bounds the response size a request may ask for: 16 MiB,
// netrun.MaxResponseBytes (the spec's bound, checked there first).
const maxResponse = 16 << 20

// maxRequest bounds the request line: "size " and eight digits and "\n".
const maxRequest = 64

// parseSize reads a response size: a decimal number of bytes in
// [0, maxResponse].
func parseSize(s string) (int, error) {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("response size %q: not a number of bytes", s)
	case n < 0:
		return 0, fmt.Errorf("response size %d: negative", n)
	case n > maxResponse:
		return 0, fmt.Errorf("response size %d: above the bound of %d bytes", n, maxResponse)
	}
	return n, nil
}

// zeros is what the server sends: the content does not matter, the
// record layer encrypts it; 64 KiB per Write keeps memory flat.
var zeros = make([]byte, 64<<10)

// respond serves one connection after its handshake: it reads the
// client's request line, "size N\n", and writes N bytes of application
// data. A client that sends nothing and closes (the handshake-only
// connection) gets nothing, as before the transfer block existed. A bad
// request is dropped without an answer: the client then sees a short
// response and reports it.
func respond(tc *tls.Conn) {
	br := bufio.NewReaderSize(tc, maxRequest)
	line, err := br.ReadSlice('\n')
	if err != nil {
		return // the client's close_notify/FIN (handshake only), or a line too long
	}
	f := strings.Fields(string(line))
	if len(f) != 2 || f[0] != "size" {
		return
	}
	n, err := parseSize(f[1])
	if err != nil {
		return
	}
	for n > 0 {
		k := min(n, len(zeros))
		if _, err := tc.Write(zeros[:k]); err != nil {
			return
		}
		n -= k
	}
}

// errLong is a response longer than asked for.
var errLong = errors.New("the server sent more than asked for")

// fetch sends the request for size bytes and reads the response to the
// server's close_notify. It returns the bytes read, the time the last of
// the size bytes arrived (time.Now after the Read that completed them) and
// an error when the response ended short (io.ErrUnexpectedEOF), ran long
// or failed. A zero-byte response has its last byte at the close_notify.
func fetch(tc *tls.Conn, size int) (int, time.Time, error) {
	if _, err := fmt.Fprintf(tc, "size %d\n", size); err != nil {
		return 0, time.Time{}, err
	}
	buf := make([]byte, 64<<10)
	var n int
	var last time.Time
	for {
		k, err := tc.Read(buf)
		n += k
		if k > 0 && n >= size && last.IsZero() {
			last = time.Now()
		}
		if err == io.EOF {
			switch {
			case n < size:
				return n, time.Time{}, io.ErrUnexpectedEOF
			case size == 0:
				last = time.Now()
			}
			break
		}
		if err != nil {
			return n, time.Time{}, err
		}
	}
	if n > size {
		return n, time.Time{}, errLong
	}
	return n, last, nil
}
