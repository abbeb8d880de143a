// Package gzcsv is the gzip'd CSV of the studies' records and in-process
// files. That is, bytes that depend only on the header and rows, so that
// a file re-derived from the same data is the same file, byte for byte.
package gzcsv

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
)

// Marshal renders a header and rows as gzip'd CSV whose bytes depend only
// on them. That is, best compression, no name and no time stamp in the
// gzip header (RFC 1952 section 2.3.1: MTIME = 0 means no time stamp).
// The studies' records and in-process files use it.
func Marshal(header []string, rows [][]string) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	zw.Header = gzip.Header{OS: 255}
	bw := bufio.NewWriter(zw)
	w := csv.NewWriter(bw)
	if err := w.Write(header); err != nil {
		return nil, err
	}
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Unmarshal parses gzip'd CSV whose first line is one of headers, and
// returns which and the rows.
//
// A format that gained columns keeps its old header as an alternative;
// the index says which header the file has. Every row has the header's
// number of cells. Name is for messages.
func Unmarshal(b []byte, name string, headers ...[]string) (int, [][]string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", name, err)
	}
	rows, err := csv.NewReader(zr).ReadAll()
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", name, err)
	}
	for i, h := range headers {
		if len(rows) > 0 && slices.Equal(rows[0], h) {
			return i, rows[1:], nil
		}
	}
	want := make([]string, len(headers))
	for i, h := range headers {
		want[i] = strings.Join(h, ",")
	}
	return 0, nil, fmt.Errorf("%s: header is not %s", name, strings.Join(want, " nor "))
}
