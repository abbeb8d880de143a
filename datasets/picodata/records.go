package picodata

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// Files of one image inside a run folder (data/pico/<run-id>/<image>/).
const (
	SerialLogFile    = "serial.log"          // the UART bytes, verbatim
	MeasurementsFile = "measurements.csv.gz" // parsed records, MeasurementsHeader
	VerifyFile       = "verify.json"         // host checks of the device's test vectors
	SizeFile         = "size.json"           // SizeReport of the ELF
	ImageFile        = "image.json"          // ImageRecord: build provenance and run status
)

// HostTimingsFile, at the top of a run folder, holds the same operations timed
// on the host CPU (experiments/pico/picoboard.HostTimings), HostTimingsHeader
// columns. One row per repetition, ns is its wall-clock duration.
const HostTimingsFile = "host-timings.csv.gz"

// HostTimingsHeader is the column list of host-timings.csv.gz.
var HostTimingsHeader = []string{"scheme", "op", "library", "i", "ns"}

// MeasurementsHeader is the column list of measurements.csv.gz: one row per
// timed operation, in the order the firmware sent them. us is the 1 MHz
// TIMER (RP2040 datasheet 4.6), cycles the clk_sys SysTick count, stack
// the painted peak stack in bytes, heap the heap high-water mark in bytes,
// ok 1 when the on-device check passed.
var MeasurementsHeader = []string{"scheme", "op", "i", "us", "cycles", "stack", "heap", "ok"}

// MeasurementsHeaderLoop is MeasurementsHeader and an ML-DSA signature's
// rejection-loop counts (DSALoop; empty in other rows): the header of runs
// whose firmware counted them. Runs before the counts keep the old header
// and their bytes.
var MeasurementsHeaderLoop = append(slices.Clip(MeasurementsHeader), "iters", "r0", "ct0", "hints")

// gzipCSV writes rows as CSV compressed with a deterministic gzip header.
func gzipCSV(header []string, rows func(w *csv.Writer) error) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	zw.Header.ModTime = time.Time{}
	zw.Header.Name = ""
	zw.Header.OS = 255 // unknown: the bytes do not depend on the host
	w := csv.NewWriter(zw)
	if err := w.Write(header); err != nil {
		return nil, err
	}
	if err := rows(w); err != nil {
		return nil, err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeHostTimings writes host timings as host-timings.csv.gz.
func EncodeHostTimings(hs []HostTiming) ([]byte, error) {
	return gzipCSV(HostTimingsHeader, func(w *csv.Writer) error {
		for _, h := range hs {
			for i, d := range h.Durations {
				if err := w.Write([]string{h.Scheme, h.Op, h.Lib, strconv.Itoa(i), strconv.FormatInt(d.Nanoseconds(), 10)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// DecodeHostTimings reads host-timings.csv.gz back, one HostTiming per
// scheme, op and library in file order.
func DecodeHostTimings(r io.Reader) ([]HostTiming, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: not gzip: %w", ErrRecords, err)
	}
	cr := csv.NewReader(zr)
	cr.FieldsPerRecord = len(HostTimingsHeader)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrRecords, err)
	}
	if !slices.Equal(head, HostTimingsHeader) {
		return nil, fmt.Errorf("%w: header %q, want %q", ErrRecords, head, HostTimingsHeader)
	}
	var out []HostTiming
	idx := map[[3]string]int{}
	for row := 2; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: row %d: %w", ErrRecords, row, err)
		}
		ns, err := strconv.ParseInt(rec[4], 10, 64)
		if err != nil || ns < 0 || rec[0] == "" || rec[1] == "" || rec[2] == "" {
			return nil, fmt.Errorf("%w: row %d: bad row %q", ErrRecords, row, rec)
		}
		k := [3]string{rec[0], rec[1], rec[2]}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, HostTiming{Scheme: rec[0], Op: rec[1], Lib: rec[2]})
		}
		out[i].Durations = append(out[i].Durations, time.Duration(ns))
		out[i].N = len(out[i].Durations)
	}
	return out, nil
}

// EncodeMeasurements writes ms as deterministically gzip'd CSV.
//
// The gzip header has no name, zero modification time (RFC 1952 section 2.3),
// so that the same records always give the same bytes and the same SHA-256.
func EncodeMeasurements(ms []Measurement) ([]byte, error) {
	header := MeasurementsHeader
	if slices.ContainsFunc(ms, func(m Measurement) bool { return m.Loop.Counted() }) {
		header = MeasurementsHeaderLoop
	}
	return gzipCSV(header, func(w *csv.Writer) error {
		for _, m := range ms {
			ok := "0"
			if m.OK {
				ok = "1"
			}
			rec := []string{m.Scheme, m.Op, strconv.Itoa(m.Iter), strconv.FormatUint(m.Micros, 10),
				strconv.FormatUint(m.Cycles, 10), strconv.FormatUint(uint64(m.Stack), 10),
				strconv.FormatUint(uint64(m.Heap), 10), ok}
			if len(header) == len(MeasurementsHeaderLoop) {
				if l := m.Loop; l.Counted() {
					rec = append(rec, u32(l.Iters), u32(l.R0Checks), u32(l.Ct0Checks), u32(l.Hints))
				} else {
					rec = append(rec, "", "", "", "")
				}
			}
			if err := w.Write(rec); err != nil {
				return err
			}
		}
		return nil
	})
}

func u32(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

// ErrRecords is wrapped by every DecodeMeasurements and DecodeHostTimings
// error, together with the underlying gzip, CSV or number error.
var ErrRecords = errors.New("bad measurements file")

// DecodeMeasurements reads a measurements.csv.gz written by
// EncodeMeasurements. A wrong header, a short row, a number that does not
// parse or a truncated gzip stream is an error naming the row.
func DecodeMeasurements(r io.Reader) ([]Measurement, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: not gzip: %w", ErrRecords, err)
	}
	cr := csv.NewReader(zr)
	cr.FieldsPerRecord = -1 // checked against the header below
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrRecords, err)
	}
	loop := slices.Equal(head, MeasurementsHeaderLoop)
	if !loop && !slices.Equal(head, MeasurementsHeader) {
		return nil, fmt.Errorf("%w: header %q, want %q or %q", ErrRecords, head, MeasurementsHeader, MeasurementsHeaderLoop)
	}
	var out []Measurement
	for row := 2; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: row %d: %w", ErrRecords, row, err)
		}
		if len(rec) != len(head) {
			return nil, fmt.Errorf("%w: row %d: %d fields, want %d", ErrRecords, row, len(rec), len(head))
		}
		var m Measurement
		var perr error
		num := func(s string, bits int) uint64 {
			v, err := strconv.ParseUint(s, 10, bits)
			if err != nil && perr == nil {
				perr = err
			}
			return v
		}
		m.Scheme, m.Op = rec[0], rec[1]
		m.Iter = int(num(rec[2], 31))
		m.Micros = num(rec[3], 64)
		m.Cycles = num(rec[4], 64)
		m.Stack = uint32(num(rec[5], 32))
		m.Heap = uint32(num(rec[6], 32))
		switch rec[7] {
		case "1":
			m.OK = true
		case "0":
		default:
			perr = fmt.Errorf("ok = %q, want 0 or 1", rec[7])
		}
		if loop && perr == nil && rec[8] != "" {
			l := DSALoop{Iters: uint32(num(rec[8], 32)), R0Checks: uint32(num(rec[9], 32)), Ct0Checks: uint32(num(rec[10], 32)), Hints: uint32(num(rec[11], 32))}
			if perr == nil {
				perr = l.Check()
			}
			m.Loop = l
		} else if loop && perr == nil && (rec[9] != "" || rec[10] != "" || rec[11] != "") {
			perr = fmt.Errorf("rejection loop counts without iterations")
		}
		if perr != nil {
			return nil, fmt.Errorf("%w: row %d: %w", ErrRecords, row, perr)
		}
		if m.Scheme == "" || m.Op == "" {
			return nil, fmt.Errorf("%w: row %d: empty scheme or op", ErrRecords, row)
		}
		out = append(out, m)
	}
	return out, nil
}
