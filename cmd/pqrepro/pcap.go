package main

import (
	"bufio"
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

	"pqrepro/experiments/capture"
)

func init() {
	register("pcap", "per-connection TLS handshake records from a pcap/pcapng capture", runPcap)
}

// pcapColumns are the CSV header and the JSON keys, in order.
var pcapColumns = []string{"client", "server", "syn_ns", "client_hello_ns", "server_hello_ns",
	"server_flight_end_ns", "client_finished_ns", "fin_ns", "hrr", "group", "retransmissions",
	"packets_c2s", "packets_s2c", "frame_bytes_c2s", "frame_bytes_s2c",
	"tcp_payload_bytes_c2s", "tcp_payload_bytes_s2c", "ths_ns", "complete"}

func runPcap(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pcap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keylog := fs.String("keylog", "", "NSS key log `file` (also read from the capture's Decryption Secrets Blocks); used to decrypt and confirm each client Finished")
	asCSV := fs.Bool("csv", false, "print CSV (the default)")
	asJSON := fs.Bool("json", false, "print a JSON array")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pqrepro pcap [--keylog FILE] [--csv|--json] CAPTURE (.gz: gunzipped first)")
		fmt.Fprintln(stderr, "Prints one record per TCP connection that carried a TLS handshake; times are Unix ns, absent ones empty (CSV) or null (JSON).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || (*asCSV && *asJSON) {
		fs.Usage()
		return 2
	}
	var opt capture.ReadOptions
	if *keylog != "" {
		b, err := os.ReadFile(*keylog)
		if err != nil {
			fmt.Fprintf(stderr, "pqrepro pcap: read key log: %v\n", err)
			return 2
		}
		opt.KeyLog = b
	}
	path := fs.Arg(0)
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro pcap: %v\n", err)
		return 2
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") { // a capture committed in a run folder
		zr, err := gzip.NewReader(bufio.NewReader(f))
		if err != nil {
			fmt.Fprintf(stderr, "pqrepro pcap: %s: %v\n", path, err)
			return 1
		}
		r = zr
	}
	res, err := capture.Read(r, opt)
	var damage *capture.DamageError
	if err != nil && !errors.As(err, &damage) {
		fmt.Fprintf(stderr, "pqrepro pcap: read %s: %v\n", path, err)
		return 1
	}
	if *asJSON {
		err = writeRecordsJSON(stdout, res.Records)
	} else {
		err = writeRecordsCSV(stdout, res.Records)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro pcap: write: %v\n", err)
		return 1
	}
	if damage != nil {
		fmt.Fprintf(stderr, "pqrepro pcap: %s: %v\n", path, damage)
		return 1
	}
	return 0
}

func optNs(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
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
			optNs(r.ThsNs), strconv.FormatBool(r.Complete)})
	}
	cw.Flush()
	return cw.Error()
}

func writeRecordsJSON(w io.Writer, rs []capture.Record) error {
	if rs == nil {
		rs = []capture.Record{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rs)
}
