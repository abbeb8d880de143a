package netdata

// late.csv.gz: Study B's late-packet record (one file per run).
//
// Why: the link emulator's forwarder writes each packet at its due time
// (the scenario's delay, jitter and rate); when the machine does not run
// the writer in time, the packet leaves later than the model says and
// the handshake it belongs to measures the machine, not the network. The
// forwarder keeps every write later than the run's bound (measured
// .late_bound_ns in meta.json, late_bound_ms in experiments/net.toml) and
// the runner writes them all here, so that the analysis can flag the
// handshakes they touched and report the results with and without them.

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// LateFile is the name of the late-packet record in a Study B run folder.
const LateFile = "late.csv.gz"

// LateColumns is the header of late.csv.gz, one row per late packet:
//
//   - series: the series whose link carried it (netstudy's Series.ID);
//     scenario, round, toolchain: that series' (the toolchain column of
//     records.csv.gz; empty for series run in process); control: 1 when
//     the series is a serial control (its handshakes are in control.csv.gz,
//     not records.csv.gz), else 0
//   - dir: "a->b" (client to server) or "b->a"
//   - proto: IP protocol number (6 TCP; 17 UDP is the link self-test);
//     src_port, dst_port: from the packet's TCP or UDP header (0 when it
//     has none); the client's port is src_port for a->b, dst_port for b->a
//   - bytes: the IP datagram's length
//   - due_unix_ns: when the emulator should have written it; written_unix_ns:
//     when it did (wall clock, Unix ns, the clock of records.csv.gz's
//     start_unix_ns); written - due is the lateness, above the run's bound
var LateColumns = []string{
	"series", "scenario", "round", "toolchain", "control",
	"dir", "proto", "src_port", "dst_port", "bytes", "due_unix_ns", "written_unix_ns",
}

// Directions of a late packet.
const (
	DirAtoB = "a->b"
	DirBtoA = "b->a"
)

// LateEvent is one row of late.csv.gz.
type LateEvent struct {
	Series    string
	Scenario  string
	Round     int
	Toolchain string
	Control   bool
	Dir       string // DirAtoB or DirBtoA
	Proto     uint8
	SrcPort   uint16
	DstPort   uint16
	Bytes     int
	DueNs     int64
	WrittenNs int64
}

// LateNs is the packet's lateness: written minus due.
func (e LateEvent) LateNs() int64 { return e.WrittenNs - e.DueNs }

// ClientPort is the port of the flow's side A (the client's on a Study B
// link). That is, the source port of a->b packets, the destination port
// of b->a.
func (e LateEvent) ClientPort() uint16 {
	if e.Dir == DirAtoB {
		return e.SrcPort
	}
	return e.DstPort
}

// Validate reports what is wrong with one event.
func (e LateEvent) Validate() error {
	var errs []error
	if e.Series == "" {
		errs = append(errs, errors.New("empty series"))
	}
	if e.Scenario == "" {
		errs = append(errs, errors.New("empty scenario"))
	}
	if e.Round < 1 {
		errs = append(errs, fmt.Errorf("round %d: must be >= 1", e.Round))
	}
	if e.Dir != DirAtoB && e.Dir != DirBtoA {
		errs = append(errs, fmt.Errorf("dir %q: want %q or %q", e.Dir, DirAtoB, DirBtoA))
	}
	if e.Bytes < 1 {
		errs = append(errs, fmt.Errorf("bytes %d: must be >= 1", e.Bytes))
	}
	if e.DueNs <= 0 || e.WrittenNs < e.DueNs {
		errs = append(errs, fmt.Errorf("due %d, written %d: want 0 < due <= written", e.DueNs, e.WrittenNs))
	}
	return errors.Join(errs...)
}

// SortLate orders events as late.csv.gz keeps them: by series, then write
// time, then direction.
func SortLate(evs []LateEvent) {
	slices.SortStableFunc(evs, func(a, b LateEvent) int {
		if a.Series != b.Series {
			if a.Series < b.Series {
				return -1
			}
			return 1
		}
		if a.WrittenNs != b.WrittenNs {
			if a.WrittenNs < b.WrittenNs {
				return -1
			}
			return 1
		}
		if a.Dir < b.Dir {
			return -1
		} else if a.Dir > b.Dir {
			return 1
		}
		return 0
	})
}

// EncodeLate returns late.csv.gz's bytes, the same for the same events.
//
// They are the header and one row per event in SortLate's order, gzip'd
// with an empty gzip header (no name, no time) so that the same events
// always give the same bytes. Every event must be valid.
func EncodeLate(evs []LateEvent) ([]byte, error) {
	evs = slices.Clone(evs)
	SortLate(evs)
	var body bytes.Buffer
	w := csv.NewWriter(&body)
	w.Write(LateColumns)
	for i, e := range evs {
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("%s: event %d: %w", LateFile, i, err)
		}
		ctl := "0"
		if e.Control {
			ctl = "1"
		}
		w.Write([]string{e.Series, e.Scenario, strconv.Itoa(e.Round), e.Toolchain, ctl,
			e.Dir, strconv.Itoa(int(e.Proto)), strconv.Itoa(int(e.SrcPort)), strconv.Itoa(int(e.DstPort)),
			strconv.Itoa(e.Bytes), strconv.FormatInt(e.DueNs, 10), strconv.FormatInt(e.WrittenNs, 10)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("%s: %w", LateFile, err)
	}
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(body.Bytes()); err != nil {
		return nil, fmt.Errorf("%s: %w", LateFile, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("%s: %w", LateFile, err)
	}
	return out.Bytes(), nil
}

// ReadLate reads late.csv.gz (gzip'd; see ParseLate). name is used in errors.
func ReadLate(r io.Reader, name string) ([]LateEvent, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (is it the run's %s?)", name, err, LateFile)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: the file is truncated or damaged; restore it from git", name, err)
	}
	return ParseLate(body, name)
}

// ParseLate parses late.csv.gz's uncompressed CSV strictly: the header
// must be LateColumns, every row complete and valid (Validate). Errors
// name the file and line.
func ParseLate(body []byte, name string) ([]LateEvent, error) {
	cr := csv.NewReader(bytes.NewReader(body))
	cr.FieldsPerRecord = len(LateColumns)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty: want at least the header %v", name, LateColumns)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	if !slices.Equal(head, LateColumns) {
		return nil, fmt.Errorf("%s: header %v, want %v (a file of another version or not a late-packet record)", name, head, LateColumns)
	}
	var out []LateEvent
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		e, err := parseLateRow(rec)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out = append(out, e)
	}
}

func parseLateRow(rec []string) (LateEvent, error) {
	e := LateEvent{Series: rec[0], Scenario: rec[1], Toolchain: rec[3], Dir: rec[5]}
	var errs []error
	num := func(col int, bits int) int64 {
		v, err := strconv.ParseInt(rec[col], 10, bits)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: not an integer", LateColumns[col], rec[col]))
		}
		return v
	}
	unum := func(col int, bits int) uint64 {
		v, err := strconv.ParseUint(rec[col], 10, bits)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: not an unsigned %d-bit integer", LateColumns[col], rec[col], bits))
		}
		return v
	}
	e.Round = int(num(2, 32))
	switch rec[4] {
	case "0":
	case "1":
		e.Control = true
	default:
		errs = append(errs, fmt.Errorf("control %q: want 0 or 1", rec[4]))
	}
	e.Proto = uint8(unum(6, 8))
	e.SrcPort = uint16(unum(7, 16))
	e.DstPort = uint16(unum(8, 16))
	e.Bytes = int(num(9, 32))
	e.DueNs = num(10, 64)
	e.WrittenNs = num(11, 64)
	if err := errors.Join(errs...); err != nil {
		return e, err
	}
	return e, e.Validate()
}

// The serial controls' files in a Study B run folder (profiles.*.
// serial_control in experiments/net.toml): the series re-run alone after
// the concurrent phase, kept apart from records.csv.gz so that the study's
// comparisons use each series once. ControlFile has records.csv.gz's
// columns and is derived the same way (experiments/net/netjoin) from
// ControlInprocFile and the controls' captures; its rows' series are
// recognised by their scenario, round, group and toolchain, and compared
// with the records' rows of the same four.
const (
	ControlFile       = "control.csv.gz"
	ControlInprocFile = "control-inproc.csv.gz"
)
