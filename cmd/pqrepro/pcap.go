package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"pqrepro/experiments/instruments/capture"
)

func init() {
	register("pcap", "per-connection TLS handshake records from a pcap/pcapng capture", runPcap)
}

// pcapColumns are the CSV header and the JSON keys, in order. They
// are the capture.Record fields the studies' records share, then reason,
// finished_verified and finished_check, which only this command prints.
var pcapColumns = []string{"client", "server", "syn_ns", "client_hello_ns", "server_hello_ns",
	"server_flight_end_ns", "client_finished_ns", "fin_ns", "hrr", "group", "retransmissions",
	"packets_c2s", "packets_s2c", "frame_bytes_c2s", "frame_bytes_s2c",
	"tcp_payload_bytes_c2s", "tcp_payload_bytes_s2c", "ths_ns", "complete",
	"reason", "finished_verified", "finished_check"}

// Exit codes of pqrepro pcap.
const (
	pcapOK      = 0 // the capture was read to its end
	pcapDamaged = 1 // damaged after some packets: the records before the damage were printed
	pcapUsage   = 2 // bad usage, or an input that could not be read at all: nothing printed
)

func runPcap(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pcap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keylog := fs.String("keylog", "", "NSS key log `file` (also read from the capture's Decryption Secrets Blocks); used to decrypt and confirm each client Finished")
	asCSV := fs.Bool("csv", false, "print CSV (the default)")
	asJSON := fs.Bool("json", false, "print a JSON array")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: pqrepro pcap [--keylog FILE] [--csv|--json] CAPTURE (a .gz file is gunzipped first)

Prints one record per TCP connection that carried a TLS handshake (or whose
client bytes may have held one the capture cannot show: such records are
incomplete and say why). Times are Unix ns; absent values are empty (CSV) or
null (JSON).

  reason             why a record is incomplete or which fields are empty
                     or corrected, ";"-separated: no_syn, no_client_hello,
                     no_server_hello, no_client_finished, gap_c2s, gap_s2c
                     (a hole never filled), reorder_limit_c2s/s2c,
                     snaplen_c2s/s2c (bytes cut by the snap length were
                     needed), group_not_captured, server_not_tls,
                     orig_len_corrected
  finished_verified  true when the key log decrypted the client Finished;
                     false when a secret was known but did not confirm it;
                     empty when not checked
  finished_check     verified, no_secret, decrypt_failed, not_finished,
                     unsupported_suite, record_not_captured; empty without
                     any key log secrets

Snap-length-cut captures (tcpdump -s 128) are read: times, packets, frame
bytes (original length) and TCP payload bytes (IP length) come from the
headers. Skipped packets, corrected lengths and key log problems (malformed
lines, secrets matching no connection, secrets that do not decrypt) are
reported on stderr.

The output is written once the capture has been read, so stdout is empty
whenever the exit code is 2.

Exit codes:
  0  the capture was read to its end (or -h)
  1  the capture is damaged after some packets: the records built before the
     damage are printed and stderr says where the damage is
  2  bad usage, or an input that cannot be read at all (missing, a directory,
     not a pcap/pcapng file, damaged before its first packet, unreadable key
     log): nothing is printed

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return pcapOK // asked for: -h prints the usage on stderr
		}
		return pcapUsage
	}
	if fs.NArg() != 1 || (*asCSV && *asJSON) {
		fs.Usage()
		return pcapUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "pqrepro pcap: "+format+"\n", a...)
		return pcapUsage
	}
	var opt capture.ReadOptions
	if *keylog != "" {
		kf, err := os.Open(*keylog)
		if err != nil {
			return fail("read key log: %v", err)
		}
		b, err := capture.ReadKeyLog(kf)
		kf.Close()
		if err != nil {
			return fail("%s: %v", *keylog, err)
		}
		opt.KeyLog = b
	}
	path := fs.Arg(0)
	if st, err := os.Stat(path); err != nil {
		return fail("%v", err)
	} else if st.IsDir() {
		return fail("%s is a directory; give a pcap or pcapng file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fail("%v", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") { // a capture committed gzip'd in a run folder
		zr, err := gzip.NewReader(bufio.NewReader(f))
		if err != nil {
			return fail("%s: not a gzip file: %v", path, err)
		}
		r = zr
	}
	res, err := capture.Read(r, opt)
	var damage *capture.DamageError
	if err != nil && !errors.As(err, &damage) {
		return fail("read %s: %v", path, err)
	}
	if damage != nil && res.Packets == 0 {
		return fail("%s: %v; nothing could be read", path, damage)
	}
	var out bytes.Buffer
	if *asJSON {
		err = writeRecordsJSON(&out, res.Records)
	} else {
		err = writeRecordsCSV(&out, res.Records)
	}
	if err == nil {
		_, err = stdout.Write(out.Bytes())
	}
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro pcap: write: %v\n", err)
		return pcapDamaged
	}
	for _, w := range res.Warnings() {
		fmt.Fprintf(stderr, "pqrepro pcap: %s: %s\n", path, w)
	}
	if damage != nil {
		fmt.Fprintf(stderr, "pqrepro pcap: %s: %v; printed the %d records read before it\n", path, damage, len(res.Records))
		return pcapDamaged
	}
	return pcapOK
}

func optNs(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

// finishedVerified is the finished_verified value: "true", "false" or ""
// (not checked: no secret for the connection, or nothing to decrypt).
func finishedVerified(r capture.Record) *bool {
	switch r.FinishedCheck {
	case capture.CheckVerified:
		v := true
		return &v
	case capture.CheckDecryptFailed, capture.CheckNotFinished:
		v := false
		return &v
	}
	return nil
}

func optBool(p *bool) string {
	if p == nil {
		return ""
	}
	return strconv.FormatBool(*p)
}

func writeRecordsCSV(w io.Writer, rs []capture.Record) error {
	cw := csv.NewWriter(w)
	cw.Write(pcapColumns)
	for _, r := range rs {
		cw.Write([]string{r.Client, r.Server, optNs(r.SynNs), optNs(r.ClientHelloNs), optNs(r.ServerHelloNs),
			optNs(r.ServerFlightEndNs), optNs(r.ClientFinishedNs), optNs(r.FinNs), strconv.FormatBool(r.HRR), r.Group,
			strconv.Itoa(r.Retransmissions), strconv.Itoa(r.PacketsC2S), strconv.Itoa(r.PacketsS2C),
			strconv.FormatInt(r.FrameBytesC2S, 10), strconv.FormatInt(r.FrameBytesS2C, 10),
			strconv.FormatInt(r.TCPPayloadBytesC2S, 10), strconv.FormatInt(r.TCPPayloadBytesS2C, 10),
			optNs(r.ThsNs), strconv.FormatBool(r.Complete),
			r.Reason, optBool(finishedVerified(r)), r.FinishedCheck})
	}
	cw.Flush()
	return cw.Error()
}

// pcapJSONRecord is a record with the command's own fields.
type pcapJSONRecord struct {
	capture.Record
	Reason           string `json:"reason"`
	FinishedVerified *bool  `json:"finished_verified"`
	FinishedCheck    string `json:"finished_check"`
}

func writeRecordsJSON(w io.Writer, rs []capture.Record) error {
	out := make([]pcapJSONRecord, len(rs))
	for i, r := range rs {
		out[i] = pcapJSONRecord{r, r.Reason, finishedVerified(r), r.FinishedCheck}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
