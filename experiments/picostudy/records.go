package picostudy

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

	"pqrepro/experiments/pico"
)

// Files of one image inside a run folder (data/pico/<run-id>/<image>/).
const (
	SerialLogFile    = "serial.log"          // the UART bytes, verbatim
	MeasurementsFile = "measurements.csv.gz" // parsed records, MeasurementsHeader
	VerifyFile       = "verify.json"         // host checks of the device's test vectors
	SizeFile         = "size.json"           // pico.SizeReport of the ELF
	ImageFile        = "image.json"          // ImageRecord: build provenance and run status
)

// MeasurementsHeader is the column list of measurements.csv.gz: one row per
// timed operation, in the order the firmware sent them. us is the 1 MHz
// TIMER (RP2040 datasheet 4.6), cycles the clk_sys SysTick count, stack
// the painted peak stack in bytes, heap the heap high-water mark in bytes,
// ok 1 when the on-device check passed.
var MeasurementsHeader = []string{"scheme", "op", "i", "us", "cycles", "stack", "heap", "ok"}

// EncodeMeasurements writes ms as CSV compressed with a deterministic gzip
// header (no name, zero modification time, RFC 1952 section 2.3), so that
// the same records always give the same bytes and the same SHA-256.
func EncodeMeasurements(ms []pico.Measurement) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	zw.Header.ModTime = time.Time{}
	zw.Header.Name = ""
	zw.Header.OS = 255 // unknown: the bytes do not depend on the host
	w := csv.NewWriter(zw)
	if err := w.Write(MeasurementsHeader); err != nil {
		return nil, err
	}
	for _, m := range ms {
		ok := "0"
		if m.OK {
			ok = "1"
		}
		rec := []string{m.Scheme, m.Op, strconv.Itoa(m.Iter), strconv.FormatUint(m.Micros, 10),
			strconv.FormatUint(m.Cycles, 10), strconv.FormatUint(uint64(m.Stack), 10),
			strconv.FormatUint(uint64(m.Heap), 10), ok}
		if err := w.Write(rec); err != nil {
			return nil, err
		}
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

// ErrRecords is wrapped by every DecodeMeasurements error.
var ErrRecords = errors.New("bad measurements file")

// DecodeMeasurements reads a measurements.csv.gz written by
// EncodeMeasurements. A wrong header, a short row, a number that does not
// parse or a truncated gzip stream is an error naming the row.
func DecodeMeasurements(r io.Reader) ([]pico.Measurement, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: not gzip: %v", ErrRecords, err)
	}
	cr := csv.NewReader(zr)
	cr.FieldsPerRecord = len(MeasurementsHeader)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrRecords, err)
	}
	if !slices.Equal(head, MeasurementsHeader) {
		return nil, fmt.Errorf("%w: header %q, want %q", ErrRecords, head, MeasurementsHeader)
	}
	var out []pico.Measurement
	for row := 2; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: row %d: %v", ErrRecords, row, err)
		}
		var m pico.Measurement
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
		if perr != nil {
			return nil, fmt.Errorf("%w: row %d: %v", ErrRecords, row, perr)
		}
		if m.Scheme == "" || m.Op == "" {
			return nil, fmt.Errorf("%w: row %d: empty scheme or op", ErrRecords, row)
		}
		out = append(out, m)
	}
	return out, nil
}
