package netstudy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"time"

	"pqrepro/experiments/capture"
	"pqrepro/internal/atomicfile"
	"pqrepro/internal/repro"
)

// RecordsFile is the dataset's table, one row per recorded handshake attempt.
const RecordsFile = "records.csv.gz"

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
//     process, the runner's. Files of before the column are of runs made
//     in process with go1.27.3 (LegacyToolchain).
var Columns = []string{
	"scenario", "round", "group", "seq", "index", "start_unix_ns", "ok", "failure", "client",
	"ths_ns", "cap_complete", "cap_group", "hrr", "retransmissions",
	"packets_c2s", "packets_s2c", "frame_bytes_c2s", "frame_bytes_s2c", "payload_bytes_c2s", "payload_bytes_s2c",
	"client_ns", "server_ns", "toolchain",
}

// LegacyToolchain is the toolchain of the rows of runs recorded before the
// toolchain column: all ran in process with Go 1.27.3.
const LegacyToolchain = "go1.27.3"

// Row is one recorded handshake attempt.
type Row struct {
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
	// column).
	Toolchain string
}

func (r Row) cells() []string {
	opt := func(v int64) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatInt(v, 10)
	}
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
	return append(c, opt(r.ClientNs), opt(r.ServerNs), r.Toolchain)
}

// encodeRecords renders rows as a gzip'd CSV whose bytes depend only on the
// rows: the gzip header carries no name and a zero modification time
// (RFC 1952 section 2.3.1: MTIME = 0 means no time stamp).
func encodeRecords(rows []Row) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	zw.Header = gzip.Header{OS: 255}
	bw := bufio.NewWriter(zw)
	w := csv.NewWriter(bw)
	if err := w.Write(Columns); err != nil {
		return nil, err
	}
	for _, r := range rows {
		if err := w.Write(r.cells()); err != nil {
			return nil, err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
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

// writeRecords writes the rows atomically and returns the file's SHA-256.
func writeRecords(path string, rows []Row) (string, error) {
	b, err := encodeRecords(rows)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return repro.HashBytes(b), nil
}

// joinCapture reads the scenario's capture and attaches to every row the
// capture record of its connection: same client and server address, the
// earliest unused one whose first packet (SYN, else ClientHello) is not
// before the attempt started (minus 1 ms of clock slack between the
// kernel's packet stamps and time.Now). Ports are reused within a scenario
// (32,000 connections exceed the ephemeral range), which the reader
// handles by ending a connection at FIN/RST; the time order then tells
// reused 4-tuples apart. A record must also start before the next attempt
// and within the timeout, so that an attempt whose packets never reached
// the capture cannot take a later connection's record.
func joinCapture(path string, rows []Row, timeout time.Duration) (captureInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return captureInfo{}, fmt.Errorf("read the capture: %w", err)
	}
	defer f.Close()
	res, err := capture.Read(bufio.NewReaderSize(f, 1<<20), capture.ReadOptions{})
	if err != nil {
		return captureInfo{}, fmt.Errorf("read the capture %s: %w", path, err)
	}
	type key struct{ c, s string }
	byKey := map[key][]int{}
	for i, rec := range res.Records {
		k := key{rec.Client, rec.Server}
		byKey[k] = append(byKey[k], i)
	}
	used := make([]bool, len(res.Records))
	first := func(rec *capture.Record) int64 {
		if rec.SynNs != nil {
			return *rec.SynNs
		}
		return *rec.ClientHelloNs
	}
	ci := captureInfo{Connections: len(res.Records)}
	slack := int64(time.Millisecond)
	for i := range rows {
		row := &rows[i]
		if row.Client == "" {
			continue
		}
		upper := row.StartNs + int64(timeout) + slack
		if i+1 < len(rows) {
			upper = min(upper, rows[i+1].StartNs)
		}
		for _, j := range byKey[key{row.Client, row.Server}] {
			t := first(&res.Records[j])
			if used[j] || t < row.StartNs-slack || t > upper {
				continue
			}
			used[j] = true
			rec := res.Records[j]
			row.Cap = &rec
			ci.Joined++
			break
		}
		if row.OK && (row.Cap == nil || row.Cap.ThsNs == nil) {
			ci.Unmatched++
		}
	}
	return ci, nil
}
