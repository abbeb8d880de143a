// Package netjoin derives Study B's records.csv.gz (datasets/netdata) from
// what a run measured. That is, one packet capture per series (scenario x
// round x group, on the client's TUN device), read by
// experiments/instruments/capture, joined with the attempts the process made
// (inproc.csv.gz). The runner (experiments/net/netrun) calls DeriveRows when
// it records a run and the build's net:records stage
// (experiments/instruments/rederive) calls the same function on the committed
// run, so the capture reader and this join are under that stage's code hash
// like any analysis code.
package netjoin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/rederive"
)

// fromCapture is the part of the capture reader's record of a connection
// that records.csv.gz keeps.
func fromCapture(r *capture.Record) netdata.Capture {
	return netdata.Capture{ThsNs: r.ThsNs, Complete: r.Complete, Group: r.Group, HRR: r.HRR,
		Retransmissions: r.Retransmissions, PacketsC2S: r.PacketsC2S, PacketsS2C: r.PacketsS2C,
		FrameBytesC2S: r.FrameBytesC2S, FrameBytesS2C: r.FrameBytesS2C,
		PayloadBytesC2S: r.TCPPayloadBytesC2S, PayloadBytesS2C: r.TCPPayloadBytesS2C}
}

// closeNotifyLen is the bytes of a TLS 1.3 close_notify record. They are a
// 5-byte header, the 2-byte alert, the inner content type and a 16-byte AEAD
// tag (RFC 8446 5.2, 6.1; every TLS 1.3 suite Go offers has a 16-byte tag).
// The server of the transfer block sends it right after the response, then its
// FIN, so the response's last byte is this many bytes before the FIN.
const closeNotifyLen = 5 + 2 + 1 + 16

// transferOf is the time to last byte of a transfer row (our extension)
// from its connection's capture record:
//
//	ttlb_ns     = last byte - ClientHello
//	ttlb_syn_ns = last byte - SYN
//
// where the last byte is when the client's side had the response
// complete in order (capture.Record.ResponseEnd); round_trips are the
// server's flights from its ServerHello's to the last byte
// (capture.Record.Flights: 2 at the least, the handshake's and the
// response's), stalls the flights beyond those two (the server waited
// for ACKs inside the response: congestion window or loss recovery). A
// response the client did not read in full has no time to last byte,
// whatever the capture shows. resp_window and hs_acked_segs, written for
// the controlled block's rows only, are the registered mechanism's W and
// A (capture.Record.ResponseWindow; AckedAtResponse over SegmentSize,
// rounded up), -1 when the capture lacks what they need.
func transferOf(row *netdata.Row, rec *capture.Record) *netdata.Transfer {
	x := &netdata.Transfer{}
	switch {
	case !row.OK || row.Failure != "" || row.ResponseRead != int64(row.ResponseBytes):
		x.Incomplete = netdata.IncompleteShort
		return x
	case rec.ClientHelloNs == nil:
		x.Incomplete = netdata.IncompleteNoStart
		return x
	}
	end, ok := rec.ResponseEnd(closeNotifyLen)
	if !ok || end <= *rec.ClientHelloNs {
		x.Incomplete = netdata.IncompleteNoEnd
		return x
	}
	v := end - *rec.ClientHelloNs
	x.TTLBNs = &v
	if rec.SynNs != nil && end > *rec.SynNs {
		w := end - *rec.SynNs
		x.TTLBSynNs = &w
	}
	x.RoundTrips = rec.Flights(end)
	x.Stalls = max(0, x.RoundTrips-2)
	if row.Controlled {
		x.RespWindow, x.HsAckedSegs = mechanism(rec)
	}
	return x
}

// mechanism returns the registered mechanism's W and A of a connection,
// -1 for either the capture cannot give (analysis/ttlb/mechanism.txt). W
// is the response's segments within one SYN round trip of its start; A
// the server's bytes the client had acknowledged by then in whole
// segments, rounded up.
func mechanism(rec *capture.Record) (window, ackedSegs int) {
	window, ackedSegs = -1, -1
	if rec.ResponseStartNs != nil && rec.SynNs != nil && rec.SynAckNs != nil {
		window = rec.ResponseWindow
	}
	if rec.AckedAtResponse >= 0 && rec.SegmentSize > 0 {
		seg := int64(rec.SegmentSize)
		ackedSegs = int((rec.AckedAtResponse + seg - 1) / seg)
	}
	return window, ackedSegs
}

// JoinInfo counts what the join of one series found.
type JoinInfo struct {
	Connections int // capture records (warm-up included)
	Joined      int // recorded attempts with a capture record
	Unmatched   int // recorded, handshake ok, but no complete capture record
}

// Join attaches to every row (one series, in time order) the capture
// record of its connection. That is, same client and server address, the
// earliest unused one whose first packet (SYN, else ClientHello) is not
// before the attempt started (minus 1 ms of clock slack between the
// kernel's packet stamps and time.Now). Ports are reused within a
// scenario (32,000 connections exceed the ephemeral range), which the
// reader handles by ending a connection at FIN/RST; the time order then
// tells reused 4-tuples apart. A record must also start before the next
// attempt and within the timeout, so that an attempt whose packets never
// reached the capture cannot take a later connection's record.
func Join(rows []*netdata.Row, caps []capture.Record, timeout time.Duration) JoinInfo {
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
			c := fromCapture(&caps[j])
			row.Cap = &c
			if row.ResponseBytes > 0 {
				row.Xfer = transferOf(row, &caps[j])
			}
			ji.Joined++
			break
		}
		if row.ResponseBytes > 0 && row.Xfer == nil {
			row.Xfer = &netdata.Transfer{Incomplete: netdata.IncompleteNoCapture}
		}
		if row.OK && (row.Cap == nil || row.Cap.ThsNs == nil) {
			ji.Unmatched++
		}
	}
	return ji
}

// DeriveRows re-derives a run's records from its in-process rows and
// captures.
//
// For every series of inproc (in order of first appearance) it reads the
// series' capture from open and joins it with the series' rows taken in
// time order (index), then renders the rows in inproc's order as
// records.csv.gz. It also returns what each series' join found.
func DeriveRows(ctx context.Context, inproc []byte, timeout time.Duration, open func(series string) (io.ReadCloser, error)) ([]byte, map[string]JoinInfo, error) {
	rows, err := netdata.ReadInproc(inproc, netdata.InprocFile)
	if err != nil {
		return nil, nil, err
	}
	var order []string
	bySeries := map[string][]*netdata.Row{}
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
			return nil, nil, fmt.Errorf("read %s: %w", netdata.CaptureName(s), err)
		}
		sr := bySeries[s]
		slices.SortStableFunc(sr, func(a, b *netdata.Row) int { return a.Index - b.Index })
		info[s] = Join(sr, res.Records, timeout)
	}
	b, err := netdata.EncodeRecords(rows)
	return b, info, err
}

// TrimmedName is the name of a transfer series' trimmed capture in the
// run folder and in meta.json's files.
//
// That is, the series' capture (netdata.CaptureName) cut by capture.Trim
// to each connection's handshake and the headers after it; a run recorded
// since issue 41 commits it as this name plus ".gz" whatever its size, so
// that a clone re-derives the transfer rows (DeriveTransfer).
func TrimmedName(series string) string { return "trimmed/" + series + rederive.CaptureExt }

// IsTrimmed reports whether a capture named in meta.json's files is a
// trimmed one (TrimmedName).
func IsTrimmed(name string) bool { return strings.HasPrefix(name, "trimmed/") }

// DeriveTransfer is rederive.Derive for Study B's transfer block (our
// extension): transfer-inproc.csv.gz, the join's timeout and one trimmed
// capture per series (TrimmedName) -> transfer.csv.gz bytes.
func DeriveTransfer(ctx context.Context, runDir string, read func(string) ([]byte, error), open func(rederive.Capture) (io.ReadCloser, error), caps []rederive.Capture) ([]byte, error) {
	return derive(ctx, read, open, caps, netdata.TransferInprocFile, TrimmedName)
}

// Derive is rederive.Derive for Study B: inproc.csv.gz, the join's
// timeout from meta.json (measured.design.timeout_ms) and one capture per
// series -> records.csv.gz bytes.
func Derive(ctx context.Context, runDir string, read func(string) ([]byte, error), open func(rederive.Capture) (io.ReadCloser, error), caps []rederive.Capture) ([]byte, error) {
	return derive(ctx, read, open, caps, netdata.InprocFile, netdata.CaptureName)
}

// derive joins the in-process file inprocFile with the captures named
// by capName(series).
func derive(ctx context.Context, read func(string) ([]byte, error), open func(rederive.Capture) (io.ReadCloser, error), caps []rederive.Capture, inprocFile string, capName func(string) string) ([]byte, error) {
	mb, err := read(netdata.MetaFile)
	if err != nil {
		return nil, err
	}
	var m netdata.Meta
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", netdata.MetaFile, err)
	}
	if m.Measured.Design == nil || m.Measured.Design.TimeoutMs <= 0 {
		return nil, fmt.Errorf("%s: measured.design.timeout_ms is missing", netdata.MetaFile)
	}
	in, err := read(inprocFile)
	if err != nil {
		return nil, err
	}
	byName := map[string]rederive.Capture{}
	for _, c := range caps {
		byName[c.Name] = c
	}
	timeout := time.Duration(math.Round(m.Measured.Design.TimeoutMs * 1e6))
	b, _, err := DeriveRows(ctx, in, timeout, func(series string) (io.ReadCloser, error) {
		c, ok := byName[capName(series)]
		if !ok {
			return nil, fmt.Errorf("%s names series %s, but meta.json has no %s", inprocFile, series, capName(series))
		}
		return open(c)
	})
	return b, err
}
