// Package netdata is the dataset format of Study B (TLS 1.3 handshakes over
// emulated networks). That is, the only code its runner
// (experiments/net/netrun, with the capture join in experiments/net/netjoin)
// and its analysis (analysis/netstudy) share.
//
// A run folder data/net/<run-id>/ holds
//
//   - inproc.csv.gz (InprocFile): what the process knew about every
//     recorded attempt (InprocColumns; EncodeInproc, ReadInproc);
//   - records.csv.gz (RecordsFile): the same attempts joined with their
//     packet captures (Columns; EncodeRecords, ReadRecords), what the
//     analysis reads;
//   - meta.json (MetaFile): the run's provenance, whose measured.design
//     (Design) says what was run, in which order (ParseMeta);
//   - captures/<series>.pcapng[.gz] (CaptureName): one capture per series.
//
// It depends on the standard library and internal/gzcsv only, so that a
// change to the runner, the link emulator or the capture reader does not
// change the analysis stages' code version.
package netdata

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"pqrepro/internal/gzcsv"
)

// Files of a run folder.
const (
	RecordsFile = "records.csv.gz"
	InprocFile  = "inproc.csv.gz"
	MetaFile    = "meta.json"
	// TransferFile and TransferInprocFile hold the transfer block's rows (our
	// extension, issue 34: time to last byte; TransferColumns). They are
	// derived like records.csv.gz; a run without the block has neither, and
	// records.csv.gz never holds a transfer row.
	TransferFile       = "transfer.csv.gz"
	TransferInprocFile = "transfer-inproc.csv.gz"
)

// CaptureName is the name of a series' capture in the run folder and in
// meta.json's files.
//
// It is the uncompressed name; a capture committed with the run has
// ".gz" appended.
func CaptureName(series string) string { return "captures/" + series + ".pcapng" }

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

// TransferColumns are Columns and the transfer block's (our extension,
// issue 34: time to last byte). A file with a row of the transfer block
// (Row.ResponseBytes > 0: TransferFile) has this header; every other
// file keeps Columns or ColumnsV1, so a run without the block has the
// bytes it always had. The cells after toolchain:
//
//   - response_bytes: the response size asked for (> 0);
//   - response_read: the bytes the client read (in process);
//   - client_ttlb_ns: dial start to the response's last byte (in process);
//   - from the capture on A's TUN device (Transfer): ttlb_ns = the
//     ClientHello's first segment to the segment that completes the
//     response in order; ttlb_syn_ns = the same from the client's SYN;
//     round_trips, the server's flights from its first handshake flight
//     to that segment; stalls, its pauses longer than half the
//     connection's SYN round trip inside the response (the server waited
//     for ACKs: congestion window or loss recovery); incomplete, why
//     there is no time to last byte (Incomplete*), empty with one.
var TransferColumns = append(slices.Clone(Columns),
	"response_bytes", "response_read", "client_ttlb_ns", "ttlb_ns", "ttlb_syn_ns", "round_trips", "stalls", "incomplete")

// ControlledColumns are TransferColumns, cc, position, resp_window and
// hs_acked_segs: the header of a file with a row of issue 41's controlled
// block (Row.Controlled). Every other file keeps its header, so no
// committed run's bytes change. The cells after incomplete:
//
//   - cc: the congestion control the connection ran under, read back from
//     its sockets (TCP_CONGESTION) by the endpoint; empty when the
//     connection had no socket (a failed dial);
//   - position: the connection's 0-based place in its series' time order
//     (recorded attempts only), which with the group column gives the
//     order the groups were interleaved in;
//   - resp_window: the server's segments with new data that reached the
//     client within one SYN round trip of the response's first one
//     (capture.Record.ResponseWindow: W of the registered mechanism,
//     analysis/ttlb/mechanism.txt);
//   - hs_acked_segs: the server's payload bytes the client had
//     acknowledged when the response started, in segments of the
//     connection's segment size, rounded up (capture.Record
//     AckedAtResponse and SegmentSize: the mechanism's A).
//
// The last two are empty without a time to last byte, and hs_acked_segs
// also when the capture lacks a SYN's MSS or the acknowledgment. In such
// a file response_bytes may be 0: the block's handshake-only connection
// (no request, no response), whose transfer cells after response_read
// are empty.
var ControlledColumns = append(slices.Clone(TransferColumns), "cc", "position", "resp_window", "hs_acked_segs")

// Why a transfer row has no time to last byte (the incomplete cell).
const (
	IncompleteShort     = "short_response"    // the client read fewer bytes than asked for (or the attempt failed)
	IncompleteNoCapture = "no_capture_record" // the capture has no record of the connection
	IncompleteNoEnd     = "no_last_byte"      // the capture does not show the response's last byte in order
	IncompleteNoStart   = "no_client_hello"   // the capture has no ClientHello (or SYN) to count from
)

// Transfer is what the capture showed of a transfer row's response.
type Transfer struct {
	TTLBNs     *int64 // ClientHello to the response's last byte; nil when Incomplete says why
	TTLBSynNs  *int64 // SYN to the response's last byte; nil without a SYN
	RoundTrips int
	Stalls     int
	Incomplete string
	// Controlled rows only (ControlledColumns): the mechanism's W and A;
	// -1 when the capture does not give them.
	RespWindow  int
	HsAckedSegs int
}

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

// TransferInprocColumns are InprocColumns and response_bytes,
// response_read and client_ttlb_ns (TransferColumns): the header of a file
// with a row of the transfer block.
var TransferInprocColumns = append(slices.Clone(InprocColumns), "response_bytes", "response_read", "client_ttlb_ns")

// ControlledInprocColumns are TransferInprocColumns and cc and position
// (ControlledColumns): the header of a file with a controlled row.
var ControlledInprocColumns = append(slices.Clone(TransferInprocColumns), "cc", "position")

// Capture is what the packet capture on the client's TUN device saw of
// one attempt's connection.
//
// It is the capture reader's record, as far as records.csv.gz keeps it: the
// cells ths_ns .. payload_bytes_s2c.
type Capture struct {
	ThsNs           *int64 // ClientHello to client Finished; nil when not seen
	Complete        bool   // cap_complete
	Group           string // cap_group: the negotiated group; "" when no ServerHello was seen
	HRR             bool
	Retransmissions int
	PacketsC2S      int
	PacketsS2C      int
	FrameBytesC2S   int64 // IP datagram lengths (TUN has no link header)
	FrameBytesS2C   int64
	PayloadBytesC2S int64 // TCP payload
	PayloadBytesS2C int64
}

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
	Cap      *Capture // nil when the capture has no record of it
	ClientNs int64    // 0 when not measured
	ServerNs int64
	// Toolchain is the Go release that ran the handshake (the toolchain
	// column); "" is LegacyToolchain.
	Toolchain string
	// ResponseBytes is the response size of a transfer row (our
	// extension); 0 for the handshake-only connection of the rounds.
	ResponseBytes int
	ResponseRead  int64     // bytes the client read
	ClientTTLBNs  int64     // dial start to the last byte, in process; 0 when there is none
	Xfer          *Transfer // from the capture (netjoin); nil when not derived
	// Controlled marks a row of the controlled transfer block (issue 41:
	// groups interleaved, size 0 inside the block, congestion control as
	// a factor), written under ControlledColumns with CC and Position.
	// ResponseBytes 0 is then the block's handshake-only connection.
	Controlled bool
	CC         string // congestion control read back from the sockets
	Position   int    // 0-based place in the series' time order
}

// transfer reports whether a row of rows is the transfer block's.
func transfer(rows []Row) bool {
	return slices.ContainsFunc(rows, func(r Row) bool { return r.ResponseBytes > 0 || r.Controlled })
}

// controlled reports whether a row of rows is the controlled block's.
func controlled(rows []Row) bool {
	return slices.ContainsFunc(rows, func(r Row) bool { return r.Controlled })
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
			strconv.FormatInt(cr.PayloadBytesC2S, 10), strconv.FormatInt(cr.PayloadBytesS2C, 10))
	} else {
		c = append(c, "", "", "", "", "", "", "", "", "", "", "")
	}
	c = append(c, opt(r.ClientNs), opt(r.ServerNs), r.ToolchainName())
	return append(c, r.transferCells()...)
}

// transferCells are the cells after toolchain (ControlledColumns; a
// narrower header cuts them), all empty for a handshake-only row of the
// rounds.
func (r Row) transferCells() []string {
	if r.ResponseBytes <= 0 && !r.Controlled {
		return make([]string, len(ControlledColumns)-len(Columns))
	}
	c := []string{strconv.Itoa(r.ResponseBytes), strconv.FormatInt(r.ResponseRead, 10), opt(r.ClientTTLBNs)}
	x := r.Xfer
	switch {
	case r.ResponseBytes <= 0: // the controlled block's handshake-only connection
		c = append(c, "", "", "", "", "")
	case x == nil:
		c = append(c, "", "", "", "", IncompleteNoCapture)
	default:
		c = append(c, optPtr(x.TTLBNs), optPtr(x.TTLBSynNs), strconv.Itoa(x.RoundTrips), strconv.Itoa(x.Stalls), x.Incomplete)
	}
	return append(c, r.controlCells()...)
}

// controlCells are the cells cc, position, resp_window and hs_acked_segs
// of a controlled row, empty for any other.
func (r Row) controlCells() []string {
	if !r.Controlled {
		return []string{"", "", "", ""}
	}
	c := []string{r.CC, strconv.Itoa(r.Position), "", ""}
	if x := r.Xfer; x != nil && x.TTLBNs != nil {
		c[2], c[3] = optInt(x.RespWindow), optInt(x.HsAckedSegs)
	}
	return c
}

// optInt is v, or empty when v is negative (unknown).
func optInt(v int) string {
	if v < 0 {
		return ""
	}
	return strconv.Itoa(v)
}

func optPtr(v *int64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v, 10)
}

func (r Row) inprocCells() []string {
	c := []string{
		r.Series, r.Scenario, strconv.Itoa(r.Round), r.Group, strconv.Itoa(r.Seq), strconv.Itoa(r.Index), strconv.FormatInt(r.StartNs, 10),
		strconv.FormatBool(r.OK), r.Failure, r.Client, r.Server, opt(r.ClientNs), opt(r.ServerNs), r.ToolchainName(),
	}
	if r.ResponseBytes <= 0 && !r.Controlled {
		return append(c, "", "", "", "", "")
	}
	c = append(c, strconv.Itoa(r.ResponseBytes), strconv.FormatInt(r.ResponseRead, 10), opt(r.ClientTTLBNs))
	return append(c, r.controlCells()[:2]...) // the inproc header has no capture cells
}

// encode renders rows under the narrowest header that holds them. That is
// v4 (the controlled block's) when a row is the controlled block's, v3
// (the transfer block's) when a row is the transfer block's, else header,
// or v1 (without the last, toolchain, column) when every row is
// LegacyToolchain's; cells are cut to the header's width.
func encode(v4, v3, header, v1 []string, rows []Row, cells func(Row) []string) ([]byte, error) {
	switch {
	case controlled(rows):
		header = v4
	case transfer(rows):
		header = v3
	case legacy(rows):
		header = v1
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = cells(r)[:len(header)]
	}
	return gzcsv.Marshal(header, out)
}

// EncodeRecords renders rows as records.csv.gz.
func EncodeRecords(rows []Row) ([]byte, error) {
	return encode(ControlledColumns, TransferColumns, Columns, ColumnsV1, rows, Row.cells)
}

// EncodeInproc renders rows as inproc.csv.gz (their capture records left out).
func EncodeInproc(rows []Row) ([]byte, error) {
	return encode(ControlledInprocColumns, TransferInprocColumns, InprocColumns, InprocColumnsV1, rows, Row.inprocCells)
}

// ReadInproc parses inproc.csv.gz (either header); name is for messages.
// Rows of a file without the toolchain column are LegacyToolchain's.
func ReadInproc(b []byte, name string) ([]Row, error) {
	_, recs, err := gzcsv.Unmarshal(b, name, InprocColumnsV1, InprocColumns, TransferInprocColumns, ControlledInprocColumns)
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
		if len(c) >= len(InprocColumns) {
			if r.Toolchain = c[13]; r.Toolchain == "" {
				errs = append(errs, errors.New("empty toolchain"))
			}
		}
		ctl := len(c) == len(ControlledInprocColumns) && c[14] != ""
		if len(c) >= len(TransferInprocColumns) && c[14] != "" {
			r.ResponseBytes, r.ResponseRead, r.ClientTTLBNs = int(num(c[14])), num(c[15]), num(c[16])
			lo := 1
			if ctl {
				lo = 0 // the controlled block's handshake-only connection
			}
			if r.ResponseBytes < lo || r.ResponseRead < 0 || r.ClientTTLBNs < 0 {
				errs = append(errs, fmt.Errorf("response_bytes %q, response_read %q, client_ttlb_ns %q: want a size >= %d and counts >= 0", c[14], c[15], c[16], lo))
			}
		} else if len(c) >= len(TransferInprocColumns) && c[15]+c[16] != "" {
			errs = append(errs, errors.New("response_read and client_ttlb_ns must be empty without response_bytes"))
		}
		if ctl {
			r.Controlled, r.CC = true, c[17]
			if r.Position = int(num(c[18])); c[18] == "" || r.Position < 0 {
				errs = append(errs, fmt.Errorf("position %q: want the connection's place in its series, a whole number >= 0", c[18]))
			}
		} else if len(c) == len(ControlledInprocColumns) && c[17]+c[18] != "" {
			errs = append(errs, errors.New("cc and position must be empty without response_bytes"))
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, i+2, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// ReadRecords parses records.csv.gz (either header: Columns or ColumnsV1)
// from r; name (the file's path) is used in errors. Rows of a file
// without the toolchain column are LegacyToolchain's. Every cell is
// checked: numbers are whole and not negative, round is at least 1,
// scenario and group are present, a failed attempt names its failure,
// and the capture's cells are all empty (no capture record) or all
// present but ths_ns and cap_group, which may be empty. The first problem
// is returned as an error naming the file, its line and the column.
func ReadRecords(r io.Reader, name string) ([]Row, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	_, recs, err := gzcsv.Unmarshal(b, name, ColumnsV1, Columns, TransferColumns, ControlledColumns)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, len(recs))
	for i, c := range recs {
		if err := parseRecord(&rows[i], c); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, i+2, err)
		}
	}
	return rows, nil
}

// parseRecord fills r from the cells c of one records.csv.gz row.
func parseRecord(r *Row, c []string) error {
	p := cells{c: c}
	r.Scenario = p.str(0, true)
	r.Round = int(p.num(1, 1, false))
	r.Group = p.str(2, true)
	r.Seq = int(p.num(3, 0, false))
	r.Index = int(p.num(4, 0, false))
	r.StartNs = p.num(5, 0, false)
	r.OK = p.bool(6)
	r.Failure = p.str(7, false)
	r.Client = p.str(8, false)
	if c[10] != "" {
		cr := &Capture{Complete: p.bool(10), Group: p.str(11, false), HRR: p.bool(12),
			Retransmissions: int(p.num(13, 0, false)), PacketsC2S: int(p.num(14, 0, false)), PacketsS2C: int(p.num(15, 0, false)),
			FrameBytesC2S: p.num(16, 0, false), FrameBytesS2C: p.num(17, 0, false),
			PayloadBytesC2S: p.num(18, 0, false), PayloadBytesS2C: p.num(19, 0, false)}
		if c[9] != "" {
			ths := p.num(9, 1, false)
			cr.ThsNs = &ths
		}
		r.Cap = cr
	} else {
		for i := 9; i <= 19; i++ {
			if c[i] != "" && p.err == nil {
				p.err = fmt.Errorf("%s %q: the capture's cells must all be empty when cap_complete is (no capture record)", Columns[i], c[i])
			}
		}
	}
	r.ClientNs = p.num(20, 0, true)
	r.ServerNs = p.num(21, 0, true)
	r.Toolchain = LegacyToolchain
	if len(c) >= len(Columns) {
		r.Toolchain = p.str(22, true)
	}
	if len(c) >= len(TransferColumns) {
		parseTransfer(r, &p)
	}
	if p.err != nil {
		return p.err
	}
	if !r.OK && r.Failure == "" {
		return errors.New("failure is empty: a failed attempt (ok false) must name its failure class")
	}
	return nil
}

// parseTransfer fills the transfer block's cells (TransferColumns, or
// ControlledColumns) of r. They are all empty for a handshake-only row of the
// rounds; for a transfer row a size > 0 and either a time to last byte
// (ttlb_ns, with round_trips and stalls) or the reason there is none
// (incomplete), never both. A controlled row (ControlledColumns) also has
// a position, and may have size 0, the block's handshake-only connection,
// whose cells after response_read are empty.
func parseTransfer(r *Row, p *cells) {
	c, k := p.c, len(Columns)
	if c[k] == "" {
		for i := k + 1; i < len(c); i++ {
			if c[i] != "" && p.err == nil {
				p.fail(i, "must be empty without response_bytes (a handshake-only row)")
			}
		}
		return
	}
	lo := int64(1)
	if len(c) == len(ControlledColumns) {
		r.Controlled, r.CC = true, c[k+8]
		r.Position = int(p.num(k+9, 0, false))
		lo = 0
	}
	r.ResponseBytes = int(p.num(k, lo, false))
	if r.ResponseBytes == 0 && p.err == nil {
		r.ResponseRead = p.num(k+1, 0, false)
		for i := k + 2; i < len(c); i++ {
			if c[i] != "" && i != k+8 && i != k+9 { // cc and position are given
				p.fail(i, "must be empty for size 0 (the handshake-only connection)")
			}
		}
		return
	}
	r.ResponseRead = p.num(k+1, 0, false)
	r.ClientTTLBNs = p.num(k+2, 1, true)
	x := &Transfer{Incomplete: c[k+7]}
	if c[k+3] != "" {
		v := p.num(k+3, 1, false)
		x.TTLBNs = &v
		if x.Incomplete != "" {
			p.fail(k+7, "must be empty when ttlb_ns is given: an incomplete response has no time to last byte")
		}
	} else if x.Incomplete == "" {
		p.fail(k+7, "empty, want the reason ttlb_ns is empty")
	}
	if c[k+4] != "" {
		v := p.num(k+4, 1, false)
		x.TTLBSynNs = &v
		if x.TTLBNs == nil {
			p.fail(k+4, "given without ttlb_ns")
		}
	}
	x.RoundTrips = int(p.num(k+5, 0, true))
	x.Stalls = int(p.num(k+6, 0, true))
	if r.Controlled {
		x.RespWindow, x.HsAckedSegs = -1, -1
		for i, v := range []*int{&x.RespWindow, &x.HsAckedSegs} {
			switch col := k + 10 + i; {
			case c[col] == "":
			case x.TTLBNs == nil:
				p.fail(col, "must be empty without ttlb_ns")
			default:
				*v = int(p.num(col, 0, false))
			}
		}
	}
	r.Xfer = x
}

// cells parses the cells of one row, keeping the first error, which names
// the column.
type cells struct {
	c   []string
	err error
}

func (p *cells) fail(i int, format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%s %q: "+format, append([]any{ControlledColumns[i], p.c[i]}, args...)...)
	}
}

func (p *cells) str(i int, required bool) string {
	if required && p.c[i] == "" {
		p.fail(i, "empty, want a value")
	}
	return p.c[i]
}

func (p *cells) bool(i int) bool {
	switch p.c[i] {
	case "true":
		return true
	case "false":
		return false
	}
	p.fail(i, "want true or false")
	return false
}

// num parses a whole number of at least lo; an empty cell is 0 when
// mayBeEmpty (the writer's spelling of "not measured").
func (p *cells) num(i int, lo int64, mayBeEmpty bool) int64 {
	s := p.c[i]
	if s == "" && mayBeEmpty {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo {
		p.fail(i, "want a whole number of at least %d", lo)
		return 0
	}
	return v
}
