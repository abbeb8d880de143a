// Package sample reads one numeric sample from a text file, for `pqrepro
// compare` and `pqrepro serial`.
//
// With it every study reads its measurements the same way and reports
// bad input the same way.
//
// Two formats:
//
//   - plain: one number per line. Blank lines and lines starting with '#'
//     are skipped; anything else must parse as a finite float64
//     (strconv.ParseFloat, so "1e-3" and "+4.5" are fine).
//   - CSV (RFC 4180) with a header row, when a column name is given: the
//     named column of every data row is read; other columns are ignored.
//
// A file whose name ends in ".gz" is decompressed first. Every error
// names the file and the 1-based line, so a user can fix the input.
package sample

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Error is a problem with one input, located by file and line (Line is 0
// when the problem concerns the whole file).
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ReadFile reads the sample in path: the column named column of a CSV
// file, or one number per line when column is empty.
func ReadFile(path, column string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read sample %s: %w", path, err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, &Error{File: path, Msg: "not a gzip file: " + err.Error()}
		}
		defer zr.Close()
		r = zr
	}
	return Read(r, path, column)
}

// Read reads one sample from r; name is used in error messages.
func Read(r io.Reader, name, column string) ([]float64, error) {
	var (
		xs  []float64
		err error
	)
	// Skip a UTF-8 byte order mark, which spreadsheet exports add.
	br := bufio.NewReader(r)
	if b, _ := br.Peek(3); string(b) == "\ufeff" {
		br.Discard(3)
	}
	r = br
	if column == "" {
		xs, err = readLines(r, name)
	} else {
		xs, err = readCSV(r, name, column)
	}
	if err != nil {
		return nil, err
	}
	if len(xs) == 0 {
		return nil, &Error{File: name, Msg: "no values (empty file); give one number per line"}
	}
	return xs, nil
}

// parse parses one field as a finite number.
func parse(name string, line int, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, &Error{File: name, Line: line, Msg: fmt.Sprintf("%q is not a number", clip(s))}
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, &Error{File: name, Line: line, Msg: fmt.Sprintf("%q is not a finite number (NaN and Inf are not allowed)", clip(s))}
	}
	return v, nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func readLines(r io.Reader, name string) ([]float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var xs []float64
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		v, err := parse(name, line, s)
		if err != nil {
			return nil, err
		}
		xs = append(xs, v)
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{File: name, Line: line + 1, Msg: "read: " + err.Error()}
	}
	return xs, nil
}

func readCSV(r io.Reader, name, column string) ([]float64, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &Error{File: name, Msg: "no header row (empty file); a CSV needs a header naming its columns"}
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	col := -1
	names := make([]string, len(header))
	for i, h := range header {
		h = strings.TrimSpace(h)
		names[i] = h
		if h == column && col < 0 {
			col = i
		}
	}
	if col < 0 {
		return nil, &Error{File: name, Line: 1, Msg: fmt.Sprintf("no column %q in the header; columns are %s", column, strings.Join(names, ", "))}
	}
	var xs []float64
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		if col >= len(rec) {
			return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("row has %d fields, no column %q (field %d)", len(rec), column, col+1)}
		}
		v, err := parse(name, line, strings.TrimSpace(rec[col]))
		if err != nil {
			return nil, err
		}
		xs = append(xs, v)
	}
	return xs, nil
}

// csvError turns a csv.ParseError into an Error with its line.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: name, Line: pe.Line, Msg: "bad CSV: " + pe.Err.Error()}
	}
	return &Error{File: name, Msg: "read: " + err.Error()}
}
