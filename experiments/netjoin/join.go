// Package netjoin derives Study B's records.csv.gz from what a run
// measured: one packet capture per series (scenario x round x group, on
// the client's TUN device), read by experiments/capture, joined with the
// attempts the process made (inproc.csv.gz). The runner
// (experiments/netstudy) calls DeriveRows when it records a run and the
// build's net:records stage (experiments/rederive) calls the same function
// on the committed run, so the capture reader and this join are under that
// stage's code hash like any analysis code.
package netjoin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"pqrepro/experiments/capture"
	"pqrepro/experiments/rederive"
	"pqrepro/internal/gzcsv"
)

// RecordsFile is the dataset's table, one row per recorded handshake attempt.
const RecordsFile = rederive.RecordsFile

// CaptureName is the name of a series' capture in meta.json's files.
func CaptureName(series string) string { return "captures/" + series + rederive.CaptureExt }

// Columns are the header of records.csv.gz. Empty cells mean "not
// observed" (a failed attempt has no Finished, hence no ths_ns).
//
//   - scenario, round (its size), group, seq (0-based within the series
//     scenario x round x group, in time order), index (0-based position of
//     the attempt within the scenario), start_unix_ns (attempt start, wall
//     clock)
//   - ok: the TLS handshake completed and passed every check; failure:
//     the network failure class (timeout, reset, refused, unreachable, eof;
//     close-<class> when only the orderly close failed)
//   - client: the client's ip:port, the key of the join with the capture
//   - from the capture on A's TUN device (capture.Record): ths_ns =
//     ClientHello to client Finished, cap_complete, cap_group, hrr,
//     retransmissions, packets and bytes per direction; frame bytes are IP
//     datagram lengths (TUN has no link header), payload bytes are TCP
//     payload; a connection's counts run from SYN to the last FIN/ACK
//   - client_ns: dial start to client handshake complete (in process);
//     server_ns: accept to server handshake complete (in process; in the
//     endpoint process for an endpoint series)
//   - toolchain: the Go release that ran the handshakes: the endpoint
//     build's (runtime version from its build info) or, for series run in
//     process, the runner's.
//
// A run whose every row has toolchain LegacyToolchain (every run before
// the column: all ran in process with Go 1.27.3) is written with the
// header ColumnsV1, without the column, so that it keeps the bytes it has
// always had; readers take rows of such files as LegacyToolchain.
var Columns = []string{
	"scenario", "round", "group", "seq", "index", "start_unix_ns", "ok", "failure", "client",
	"ths_ns", "cap_complete", "cap_group", "hrr", "retransmissions",
	"packets_c2s", "packets_s2c", "frame_bytes_c2s", "frame_bytes_s2c", "payload_bytes_c2s", "payload_bytes_s2c",
	"client_ns", "server_ns", "toolchain",
}

// ColumnsV1 is the header of records.csv.gz without the toolchain column
// (see Columns).
var ColumnsV1 = Columns[:len(Columns)-1]

// LegacyToolchain is the toolchain of the rows of runs recorded before
// the toolchain column: all ran in process with Go 1.27.3.
const LegacyToolchain = "go1.27.3"

// InprocColumns is the header of inproc.csv.gz: what the process knew
// about every recorded attempt, in the order of records.csv.gz. series
// names the capture (CaptureName); server is the server's ip:port;
// toolchain as in Columns. Like records.csv.gz, a run whose every row is
// LegacyToolchain's has the header InprocColumnsV1, without toolchain.
var InprocColumns = []string{
	"series", "scenario", "round", "group", "seq", "index", "start_unix_ns", "ok", "failure", "client", "server",
	"client_ns", "server_ns", "toolchain",
}

// InprocColumnsV1 is InprocColumns without the toolchain column.
var InprocColumnsV1 = InprocColumns[:len(InprocColumns)-1]

// Row is one recorded handshake attempt.
type Row struct {
	Series   string
	Scenario string
	Round    int
	Group    string
	Seq      int
	Index    int
	StartNs  int64
	OK       bool
	Failure  string
	Client   string
	Server   string
	Cap      *capture.Record // nil when the capture has no record of it
	ClientNs int64           // 0 when not measured
	ServerNs int64
	// Toolchain is the Go release that ran the handshake (the toolchain
	// column); "" is LegacyToolchain.
	Toolchain string
}

// ToolchainName is r.Toolchain with "" read as LegacyToolchain.
func (r Row) ToolchainName() string {
	if r.Toolchain == "" {
		return LegacyToolchain
	}
	return r.Toolchain
}

// legacy reports whether every row is LegacyToolchain's, so that the
// files are written without the toolchain column.
func legacy(rows []Row) bool {
	for _, r := range rows {
		if r.ToolchainName() != LegacyToolchain {
			return false
		}
	}
	return true
}

func opt(v int64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatInt(v, 10)
}

func (r Row) cells() []string {
	c := []string{
		r.Scenario, strconv.Itoa(r.Round), r.Group, strconv.Itoa(r.Seq), strconv.Itoa(r.Index), strconv.FormatInt(r.StartNs, 10),
		strconv.FormatBool(r.OK), r.Failure, r.Client,
	}
	if cr := r.Cap; cr != nil {
		ths := ""
		if cr.ThsNs != nil {
			ths = strconv.FormatInt(*cr.ThsNs, 10)
		}
		c = append(c, ths, strconv.FormatBool(cr.Complete), cr.Group, strconv.FormatBool(cr.HRR), strconv.Itoa(cr.Retransmissions),
			strconv.Itoa(cr.PacketsC2S), strconv.Itoa(cr.PacketsS2C),
			strconv.FormatInt(cr.FrameBytesC2S, 10), strconv.FormatInt(cr.FrameBytesS2C, 10),
			strconv.FormatInt(cr.TCPPayloadBytesC2S, 10), strconv.FormatInt(cr.TCPPayloadBytesS2C, 10))
	} else {
		c = append(c, "", "", "", "", "", "", "", "", "", "", "")
	}
	return append(c, opt(r.ClientNs), opt(r.ServerNs), r.ToolchainName())
}

func (r Row) inprocCells() []string {
	return []string{
		r.Series, r.Scenario, strconv.Itoa(r.Round), r.Group, strconv.Itoa(r.Seq), strconv.Itoa(r.Index), strconv.FormatInt(r.StartNs, 10),
		strconv.FormatBool(r.OK), r.Failure, r.Client, r.Server, opt(r.ClientNs), opt(r.ServerNs), r.ToolchainName(),
	}
}

// encode renders rows under header, or under v1 (the header without the
// last, toolchain, column: cells cut to its width) when every row is
// LegacyToolchain's.
func encode(header, v1 []string, rows []Row, cells func(Row) []string) ([]byte, error) {
	if legacy(rows) {
		header = v1
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = cells(r)[:len(header)]
	}
	return gzcsv.Marshal(header, out)
}

// EncodeRecords renders rows as records.csv.gz.
func EncodeRecords(rows []Row) ([]byte, error) { return encode(Columns, ColumnsV1, rows, Row.cells) }

// EncodeInproc renders rows as inproc.csv.gz (their capture records left out).
func EncodeInproc(rows []Row) ([]byte, error) {
	return encode(InprocColumns, InprocColumnsV1, rows, Row.inprocCells)
}

// ReadInproc parses inproc.csv.gz (either header); name is for messages.
// Rows of a file without the toolchain column are LegacyToolchain's.
func ReadInproc(b []byte, name string) ([]Row, error) {
	_, recs, err := gzcsv.Unmarshal(b, name, InprocColumnsV1, InprocColumns)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(recs))
	for i, c := range recs {
		var errs []error
		num := func(s string) int64 {
			if s == "" {
				return 0
			}
			v, err := strconv.ParseInt(s, 10, 64)
			errs = append(errs, err)
			return v
		}
		ok, err := strconv.ParseBool(c[7])
		errs = append(errs, err)
		r := Row{Series: c[0], Scenario: c[1], Round: int(num(c[2])), Group: c[3], Seq: int(num(c[4])), Index: int(num(c[5])),
			StartNs: num(c[6]), OK: ok, Failure: c[8], Client: c[9], Server: c[10], ClientNs: num(c[11]), ServerNs: num(c[12]),
			Toolchain: LegacyToolchain}
		if len(c) == len(InprocColumns) {
			if r.Toolchain = c[13]; r.Toolchain == "" {
				errs = append(errs, errors.New("empty toolchain"))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, i+2, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// JoinInfo counts what the join of one series found.
type JoinInfo struct {
	Connections int // capture records (warm-up included)
	Joined      int // recorded attempts with a capture record
	Unmatched   int // recorded, handshake ok, but no complete capture record
}

// Join attaches to every row (one series, in time order) the capture
// record of its connection: same client and server address, the earliest
// unused one whose first packet (SYN, else ClientHello) is not before the
// attempt started (minus 1 ms of clock slack between the kernel's packet
// stamps and time.Now). Ports are reused within a scenario (32,000
// connections exceed the ephemeral range), which the reader handles by
// ending a connection at FIN/RST; the time order then tells reused
// 4-tuples apart. A record must also start before the next attempt and
// within the timeout, so that an attempt whose packets never reached the
// capture cannot take a later connection's record.
func Join(rows []*Row, caps []capture.Record, timeout time.Duration) JoinInfo {
	type key struct{ c, s string }
	byKey := map[key][]int{}
	for i, rec := range caps {
		k := key{rec.Client, rec.Server}
		byKey[k] = append(byKey[k], i)
	}
	used := make([]bool, len(caps))
	first := func(rec *capture.Record) int64 {
		if rec.SynNs != nil {
			return *rec.SynNs
		}
		if rec.ClientHelloNs != nil {
			return *rec.ClientHelloNs
		}
		return math.MinInt64 // an incomplete record with neither (capture.Record.Reason): joins nothing
	}
	ji := JoinInfo{Connections: len(caps)}
	slack := int64(time.Millisecond)
	for i, row := range rows {
		if row.Client == "" {
			continue
		}
		upper := row.StartNs + int64(timeout) + slack
		if i+1 < len(rows) {
			upper = min(upper, rows[i+1].StartNs)
		}
		for _, j := range byKey[key{row.Client, row.Server}] {
			t := first(&caps[j])
			if used[j] || t < row.StartNs-slack || t > upper {
				continue
			}
			used[j] = true
			rec := caps[j]
			row.Cap = &rec
			ji.Joined++
			break
		}
		if row.OK && (row.Cap == nil || row.Cap.ThsNs == nil) {
			ji.Unmatched++
		}
	}
	return ji
}

// DeriveRows re-derives the records: for every series of inproc (in order
// of first appearance) it reads the series' capture from open and joins
// it with the series' rows taken in time order (index), then renders the
// rows in inproc's order as records.csv.gz. It also returns what each
// series' join found.
func DeriveRows(ctx context.Context, inproc []byte, timeout time.Duration, open func(series string) (io.ReadCloser, error)) ([]byte, map[string]JoinInfo, error) {
	rows, err := ReadInproc(inproc, rederive.InprocFile)
	if err != nil {
		return nil, nil, err
	}
	var order []string
	bySeries := map[string][]*Row{}
	for i := range rows {
		s := rows[i].Series
		if bySeries[s] == nil {
			order = append(order, s)
		}
		bySeries[s] = append(bySeries[s], &rows[i])
	}
	info := map[string]JoinInfo{}
	for _, s := range order {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		rc, err := open(s)
		if err != nil {
			return nil, nil, err
		}
		res, err := capture.Read(rc, capture.ReadOptions{})
		if cerr := rc.Close(); cerr != nil {
			return nil, nil, cerr // a corrupt capture explains any other error
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", CaptureName(s), err)
		}
		sr := bySeries[s]
		slices.SortStableFunc(sr, func(a, b *Row) int { return a.Index - b.Index })
		info[s] = Join(sr, res.Records, timeout)
	}
	b, err := EncodeRecords(rows)
	return b, info, err
}

// Derive is rederive.Derive for Study B: inproc.csv.gz, the join's
// timeout from meta.json (measured.design.timeout_ms) and one capture per
// series -> records.csv.gz bytes.
func Derive(ctx context.Context, runDir string, read func(string) ([]byte, error), open func(rederive.Capture) (io.ReadCloser, error), caps []rederive.Capture) ([]byte, error) {
	mb, err := read(rederive.MetaFile)
	if err != nil {
		return nil, err
	}
	var m struct {
		Measured struct {
			Design struct {
				TimeoutMs float64 `json:"timeout_ms"`
			} `json:"design"`
		} `json:"measured"`
	}
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", rederive.MetaFile, err)
	}
	if m.Measured.Design.TimeoutMs <= 0 {
		return nil, fmt.Errorf("%s: measured.design.timeout_ms is missing", rederive.MetaFile)
	}
	in, err := read(rederive.InprocFile)
	if err != nil {
		return nil, err
	}
	byName := map[string]rederive.Capture{}
	for _, c := range caps {
		byName[c.Name] = c
	}
	timeout := time.Duration(math.Round(m.Measured.Design.TimeoutMs * 1e6))
	b, _, err := DeriveRows(ctx, in, timeout, func(series string) (io.ReadCloser, error) {
		c, ok := byName[CaptureName(series)]
		if !ok {
			return nil, fmt.Errorf("%s names series %s, but meta.json has no %s", rederive.InprocFile, series, CaptureName(series))
		}
		return open(c)
	})
	return b, err
}
