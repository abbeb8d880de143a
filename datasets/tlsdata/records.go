// Package tlsdata is Study A's dataset format. A run folder
// data/tls/<run-id>/ holds records.csv.gz, one row per connection in the
// order the interleaved run made them, warm-ups included but flagged. The
// runner (experiments/tls/tlsrun) writes it; the analysis
// (analysis/tlsstudy) reads it with ReadRecords and assumes nothing else
// about a run folder.
//
// It is a leaf package on purpose: the analysis depends on the format,
// not on the runner, so that a change to the runner, the handshake or the
// capture code does not change the analysis stages' code version.
package tlsdata

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// RecordsFile is the name of the records file inside a run folder.
const RecordsFile = "records.csv.gz"

// Columns are the header of records.csv.gz, in this order. The writer
// always writes exactly these; the reader refuses any other header so that
// a renamed or reordered column cannot be read silently as another one.
//
//   - seq: 0-based position of the connection in the interleaved run
//     (warm-ups included), strictly increasing down the file.
//   - config, cert_key, group, chain: the configuration (see ParseConfigID).
//   - warmup: true for connections that are made but not analysed.
//   - client .. complete: the per-connection record of the capture reader
//     (experiments/instruments/capture.Record; `negotiated_group` is its `group`).
//     Times are Unix nanoseconds of the first captured segment.
//   - inproc_client_ns, inproc_server_ns: the in-process timers of
//     experiments/instruments/handshake (dial start to client handshake complete,
//     accept to server handshake complete), in nanoseconds.
//   - stack: the TLS implementation of both ends, "go" (crypto/tls) or
//     "openssl" (experiments/tls/openssl).
//   - path: the network path between client and server, one of
//     KnownPaths.
//
// Files written before the stack and path columns existed have the header
// ColumnsV1 and are read as stack "go", path "loopback"; WriteRecords
// writes that header too whenever every record is Go's on loopback, so
// such a run keeps the bytes it has always had.
//
// Absent values are empty cells: times the capture did not see, an
// unknown negotiated group, a timer that was not taken.
var Columns = []string{
	"seq", "config", "cert_key", "group", "chain", "warmup",
	"client", "server", "syn_ns", "client_hello_ns", "server_hello_ns",
	"server_flight_end_ns", "client_finished_ns", "fin_ns", "hrr",
	"negotiated_group", "retransmissions", "packets_c2s", "packets_s2c",
	"frame_bytes_c2s", "frame_bytes_s2c", "tcp_payload_bytes_c2s",
	"tcp_payload_bytes_s2c", "ths_ns", "complete",
	"inproc_client_ns", "inproc_server_ns", "stack", "path",
}

// ColumnsEmulated is the header of runs with an emulated-path cell (issue
// 30): Columns and three more, for the gap model (analysis/gapmodel).
//
//   - client_groups: the client's group-list mode (ClientGroupModes).
//   - round_trips: the round trips before the client's Finished, measured
//     from the capture (experiments/tls/tlsjoin): 1, one more after a
//     HelloRetryRequest (RFC 8446 4.1.4), one more per server flight held
//     back by TCP's congestion window (RFC 6928); empty when the capture
//     could not count them.
//   - link_rtt_ns: the emulated link's self-tested round-trip time
//     (median of its probes), empty on other paths.
//
// WriteRecords writes it only when a record is on an emulated path or
// has a client group list other than per-config, so that the records of
// every other run keep their bytes; ReadRecords reads Columns files with
// client_groups per-config and the two counts empty.
var ColumnsEmulated = append(slices.Clip(Columns), "client_groups", "round_trips", "link_rtt_ns")

// ColumnsServerEnd is the header of runs with server-end captures of
// their emulated paths (issue 42): ColumnsEmulated and six more times.
// They are Unix nanoseconds on the host clock both captures share.
//
//   - client_hello2_ns: at the client's end, the first segment of the
//     ClientHello sent after a HelloRetryRequest (RFC 8446 4.1.4); empty
//     without one.
//   - srv_syn_ns, srv_client_hello_ns, srv_client_hello2_ns: at the
//     server's end, the client's SYN, ClientHello and second ClientHello as
//     they arrive.
//   - srv_server_flight_end_ns: at the server's end, the last server
//     segment of its ServerHello..Finished flight as it leaves.
//   - srv_client_finished_ns: at the server's end, the client's Finished as
//     it arrives.
//
// A server-end cell is empty when that capture did not see the item, and
// all five srv_ cells are empty when it lacks the connection (the run's
// meta.json and log say why). WriteRecords writes this header when a record
// has one of these times, and MarshalRecordsServerEnd always, so the
// records of every run without server-end captures keep their bytes.
var ColumnsServerEnd = append(slices.Clip(ColumnsEmulated),
	"client_hello2_ns", "srv_syn_ns", "srv_client_hello_ns", "srv_client_hello2_ns",
	"srv_server_flight_end_ns", "srv_client_finished_ns")

// ColumnsV1 is the header of runs whose every record is Go's on loopback.
// That is, files written before the stack and path columns, and every
// file WriteRecords writes for such a run (see writeCSV). ReadRecords
// reads them with Stack = StackGo and Path = DefaultPath.
var ColumnsV1 = Columns[:len(Columns)-2]

// Stacks are the TLS implementations a record's stack may name; StackGo
// is the default of ConfigID and of files without the column.
var Stacks = []string{StackGo, StackOpenSSL, StackOpenSSLCLI}

const (
	StackGo      = "go"
	StackOpenSSL = "openssl"
	// StackOpenSSLCLI is the same OpenSSL build as StackOpenSSL, driven
	// as the original study drove it. That is, its own command-line
	// tools, one long-running `openssl s_server` per configuration and
	// one `openssl s_client` process per connection. It is a level of
	// the stack column because a process model exists only for OpenSSL;
	// the gap analysis treats openssl -> openssl-cli as its own factor
	// ("process").
	StackOpenSSLCLI = "openssl-cli"
)

// KnownPaths are the network paths a record may name. That is, "loopback"
// (client and server in one namespace, on lo) and "bridge" (two namespaces
// joined by veth pairs through a Linux bridge, MTU 1500, like Docker's
// default bridge network; experiments/tls/bridgenet) and "remote" (the
// server on a second host reached over SSH, the client and capture here;
// experiments/instruments/sshhost) and "docker" (client and server in two
// containers of a private Docker daemon on a Compose bridge network, MTU
// 1500, as the original study ran them; experiments/tls/dockernet).
var KnownPaths = []string{"loopback", "bridge", "remote", "docker"}

// DefaultPath is the path of records that do not name one.
const DefaultPath = "loopback"

// EmulatedPathPrefix starts the name of an emulated path,
// "emulated-<delay>ms" (EmulatedPath). There client and server are in two
// namespaces joined by the user-space link emulator with a fixed one-way
// delay each way.
const EmulatedPathPrefix = "emulated-"

// MaxEmulatedDelayMs bounds an emulated path's one-way delay; a larger
// value is taken for a unit mistake.
const MaxEmulatedDelayMs = 100

// EmulatedPath names the emulated path of one-way delay delayMs, for
// example "emulated-0.5ms"; the number is Go's shortest decimal.
func EmulatedPath(delayMs float64) string {
	return EmulatedPathPrefix + strconv.FormatFloat(delayMs, 'f', -1, 64) + "ms"
}

// ParseEmulatedPath returns the one-way delay (ms) of an emulated path's
// name; ok is false for any other name or a non-canonical spelling.
func ParseEmulatedPath(p string) (delayMs float64, ok bool) {
	num, found := strings.CutPrefix(p, EmulatedPathPrefix)
	if !found {
		return 0, false
	}
	num, found = strings.CutSuffix(num, "ms")
	if !found {
		return 0, false
	}
	d, err := strconv.ParseFloat(num, 64)
	if err != nil || !(d >= 0 && d <= MaxEmulatedDelayMs) || EmulatedPath(d) != p {
		return 0, false
	}
	return d, true
}

// ValidPath says whether p is one of KnownPaths or an emulated path.
func ValidPath(p string) bool {
	_, emu := ParseEmulatedPath(p)
	return emu || slices.Contains(KnownPaths, p)
}

// pathWords lists the valid paths for errors.
func pathWords() string {
	return strings.Join(KnownPaths, ", ") + " or " + EmulatedPathPrefix + "<one-way delay>ms"
}

// Client group-list modes of a configuration on an emulated path: which
// groups the client offers and which it sends a key share for (its
// first). ClientGroupsPerConfig is the default: the configuration's own
// group only, never a HelloRetryRequest.
const (
	ClientGroupsPerConfig = "per-config"
	// ClientGroupsX25519First: one list for every configuration,
	// X25519:MLKEM1024:SecP384r1MLKEM1024, so the ML-KEM configurations
	// take a HelloRetryRequest.
	ClientGroupsX25519First = "x25519-first"
	// ClientGroupsStrongestFirst: one list for every configuration,
	// SecP384r1MLKEM1024:MLKEM1024:X25519, so every configuration but the
	// hybrid takes a HelloRetryRequest.
	ClientGroupsStrongestFirst = "strongest-first"
)

// ClientGroupModes are the client group-list modes a record may name.
var ClientGroupModes = []string{ClientGroupsPerConfig, ClientGroupsX25519First, ClientGroupsStrongestFirst}

// ClientGroupList is a mode's one list of groups, in the client's order
// (Go's names, KnownGroups); nil for ClientGroupsPerConfig.
func ClientGroupList(mode string) []string {
	switch mode {
	case ClientGroupsX25519First:
		return []string{"X25519", "MLKEM1024", "SecP384r1MLKEM1024"}
	case ClientGroupsStrongestFirst:
		return []string{"SecP384r1MLKEM1024", "MLKEM1024", "X25519"}
	}
	return nil
}

// ExpectHRR says whether a configuration of group under client group-list
// mode takes a HelloRetryRequest. Its client sends one key share, for its
// list's first group (RFC 8446 4.1.4), so exactly when that is not the
// server's one group.
func ExpectHRR(mode, group string) bool {
	l := ClientGroupList(mode)
	return len(l) > 0 && l[0] != group
}

// KnownCertKeys are the certificate key names a config may use, as
// experiments/instruments/handshake.CertKey prints them, in the order tables list them.
var KnownCertKeys = []string{"ed25519", "ecdsa-p256", "mldsa44", "mldsa65", "mldsa87"}

// KnownGroups are the key-exchange group names a config may use, in the order
// tables list them.
//
// They are spelled as Go's crypto/tls CurveID.String prints them (the names
// experiments/instruments/handshake and the capture reader use).
var KnownGroups = []string{"X25519", "X25519MLKEM768", "SecP256r1MLKEM768", "MLKEM1024", "SecP384r1MLKEM1024"}

// ConfigID is one configuration of the matrix, as named by its ID
//
//	<cert_key>/<group>[/chain][/hrr][/openssl|/openssl-cli]
//
// for example "ed25519/X25519", "mldsa87/X25519", "ed25519/MLKEM1024",
// "ed25519/SecP384r1MLKEM1024" or "ecdsa-p256/X25519MLKEM768/chain". The
// cert key is spelled exactly as KnownCertKeys (as handshake.CertKey prints it,
// so ECDSA P-256 is "ecdsa-p256"), the group as KnownGroups. "chain" means the
// server sends
// its CA certificate after the leaf; "hrr" means the client deliberately
// offers a key share the server lacks, so every connection of the
// configuration is expected to have a HelloRetryRequest (RFC 8446 4.1.4)
// and any other connection is expected to have none; "openssl" means both
// ends are the OpenSSL harness (Stack "openssl"), "openssl-cli" both ends
// OpenSSL's s_server and s_client (Stack "openssl-cli"); without either
// the stack is Go's crypto/tls ("go").
type ConfigID struct {
	CertKey string
	Group   string
	Chain   bool
	HRR     bool
	Stack   string // "" (Go, the default; ParseConfigID leaves it empty), StackOpenSSL or StackOpenSSLCLI
	// Groups is the client group-list mode (ClientGroupModes); "" is
	// ClientGroupsPerConfig, which the ID does not name.
	Groups string
}

// GroupsName is c.Groups with "" read as ClientGroupsPerConfig.
func (c ConfigID) GroupsName() string {
	if c.Groups == "" {
		return ClientGroupsPerConfig
	}
	return c.Groups
}

// StackName is the stack column's value for c: StackGo, StackOpenSSL or
// StackOpenSSLCLI.
func (c ConfigID) StackName() string {
	if c.Stack == "" {
		return StackGo
	}
	return c.Stack
}

// ID returns the canonical config ID.
func (c ConfigID) ID() string {
	s := c.CertKey + "/" + c.Group
	if c.Chain {
		s += "/chain"
	}
	if c.HRR {
		s += "/hrr"
	}
	if c.Stack == StackOpenSSL || c.Stack == StackOpenSSLCLI {
		s += "/" + c.Stack
	}
	if g := c.GroupsName(); g != ClientGroupsPerConfig {
		s += "/groups-" + g
	}
	return s
}

// ParseConfigID parses a canonical config ID. It is strict (exact case,
// options in the order chain, hrr) so that one configuration has one ID.
func ParseConfigID(id string) (ConfigID, error) {
	parts := strings.Split(id, "/")
	if len(parts) < 2 || len(parts) > 6 {
		return ConfigID{}, fmt.Errorf("config %q: want <cert_key>/<group>[/chain][/hrr][/openssl|/openssl-cli][/groups-<mode>]", id)
	}
	c := ConfigID{CertKey: parts[0], Group: parts[1]}
	if !slices.Contains(KnownCertKeys, c.CertKey) {
		return ConfigID{}, fmt.Errorf("config %q: unknown cert key %q (one of %s)", id, c.CertKey, strings.Join(KnownCertKeys, ", "))
	}
	if !slices.Contains(KnownGroups, c.Group) {
		return ConfigID{}, fmt.Errorf("config %q: unknown group %q (one of %s)", id, c.Group, strings.Join(KnownGroups, ", "))
	}
	for _, o := range parts[2:] {
		mode, isGroups := strings.CutPrefix(o, "groups-")
		switch {
		case isGroups && c.Groups == "" && mode != ClientGroupsPerConfig && slices.Contains(ClientGroupModes, mode):
			c.Groups = mode
		case c.Groups != "":
			return ConfigID{}, fmt.Errorf("config %q: option %q after /groups-%s: the group-list mode comes last", id, o, c.Groups)
		case o == "chain" && !c.Chain && !c.HRR && c.Stack == "":
			c.Chain = true
		case o == "hrr" && !c.HRR && c.Stack == "":
			c.HRR = true
		case (o == StackOpenSSL || o == StackOpenSSLCLI) && c.Stack == "":
			c.Stack = o
		default:
			return ConfigID{}, fmt.Errorf("config %q: option %q: want /chain, /hrr, then /openssl or /openssl-cli, then /groups-<mode> (one of %s but %s), in this order, each at most once", id, o, strings.Join(ClientGroupModes[1:], ", "), ClientGroupsPerConfig)
		}
	}
	return c, nil
}

// Record is one row of records.csv.gz: one TCP connection of the run.
// Pointer fields are nil when the value is absent (an empty cell).
type Record struct {
	Seq     int
	Config  string // canonical config ID (ParseConfigID)
	CertKey string // = the config's cert key
	Group   string // configured group = the config's group
	Chain   bool   // = the config's chain flag
	Warmup  bool

	// The capture reader's view of the connection (experiments/instruments/capture.Record).
	Client             string
	Server             string
	SynNs              *int64
	ClientHelloNs      *int64
	ServerHelloNs      *int64
	ServerFlightEndNs  *int64
	ClientFinishedNs   *int64
	FinNs              *int64
	HRR                bool
	NegotiatedGroup    string // "" when the capture did not see a ServerHello
	Retransmissions    int
	PacketsC2S         int
	PacketsS2C         int
	FrameBytesC2S      int64
	FrameBytesS2C      int64
	TCPPayloadBytesC2S int64
	TCPPayloadBytesS2C int64
	ThsNs              *int64 // ClientFinishedNs - ClientHelloNs
	Complete           bool

	// In-process timers of experiments/instruments/handshake.ConnRecord.
	InprocClientNs *int64 // ClientNs: dial start to client handshake complete
	InprocServerNs *int64 // ServerNs: accept to server handshake complete

	// Stack is the TLS implementation, StackGo or StackOpenSSL (= the
	// config's); "" means StackGo.
	Stack string

	// Path is the network path (KnownPaths); "" is written and read as
	// DefaultPath.
	Path string

	// ClientGroups is the client group-list mode (ClientGroupModes); ""
	// is ClientGroupsPerConfig.
	ClientGroups string
	// RoundTrips is the measured round trips before the client's Finished
	// (ColumnsEmulated); nil when not counted.
	RoundTrips *int64
	// LinkRTTNs is the emulated link's self-tested RTT; nil on other paths.
	LinkRTTNs *int64

	// ClientHello2Ns and the Srv times are ColumnsServerEnd's; nil when
	// not seen. The first is the client end's second ClientHello, the
	// others the server end's (experiments/tls/tlsjoin joins its capture).
	ClientHello2Ns       *int64
	SrvSynNs             *int64
	SrvClientHelloNs     *int64
	SrvClientHello2Ns    *int64
	SrvServerFlightEndNs *int64
	SrvClientFinishedNs  *int64
}

// serverEndTimes are r's fields of ColumnsServerEnd's last columns, in
// their order.
func (r *Record) serverEndTimes() []**int64 {
	return []**int64{&r.ClientHello2Ns, &r.SrvSynNs, &r.SrvClientHelloNs, &r.SrvClientHello2Ns, &r.SrvServerFlightEndNs, &r.SrvClientFinishedNs}
}

// serverEndColumns says whether r has a time only ColumnsServerEnd holds.
func (r *Record) serverEndColumns() bool {
	return slices.ContainsFunc(r.serverEndTimes(), func(p **int64) bool { return *p != nil })
}

// ClientGroupsName is r.ClientGroups with "" read as ClientGroupsPerConfig.
func (r *Record) ClientGroupsName() string {
	if r.ClientGroups == "" {
		return ClientGroupsPerConfig
	}
	return r.ClientGroups
}

// emulatedColumns says whether r needs ColumnsEmulated.
func (r *Record) emulatedColumns() bool {
	_, emu := ParseEmulatedPath(r.Path)
	return emu || r.ClientGroupsName() != ClientGroupsPerConfig || r.RoundTrips != nil || r.LinkRTTNs != nil
}

// StackName is r.Stack with "" read as StackGo.
func (r *Record) StackName() string {
	if r.Stack == "" {
		return StackGo
	}
	return r.Stack
}

// PathOrDefault returns r.Path, or DefaultPath when it is empty.
func (r *Record) PathOrDefault() string {
	if r.Path == "" {
		return DefaultPath
	}
	return r.Path
}

// Check reports whether r is internally consistent: a valid config ID that
// agrees with the cert_key, group and chain columns; non-negative counts.
// ths_ns equal to client_finished_ns - client_hello_ns when both are
// present; and a complete connection has its ClientHello, ServerHello,
// client Finished and Ths (the capture reader's definition of complete).
func (r *Record) Check() error {
	if r.Seq < 0 {
		return fmt.Errorf("seq %d is negative", r.Seq)
	}
	c, err := ParseConfigID(r.Config)
	if err != nil {
		return err
	}
	if !ValidPath(r.PathOrDefault()) {
		return fmt.Errorf("path %q: want one of %s", r.Path, pathWords())
	}
	if !slices.Contains(ClientGroupModes, r.ClientGroupsName()) {
		return fmt.Errorf("client_groups %q: want one of %s", r.ClientGroups, strings.Join(ClientGroupModes, ", "))
	}
	if r.ClientGroupsName() != c.GroupsName() {
		return fmt.Errorf("config %s disagrees with client_groups=%s", r.Config, r.ClientGroupsName())
	}
	if r.RoundTrips != nil && (*r.RoundTrips < 1 || *r.RoundTrips > 100) {
		return fmt.Errorf("round_trips %d: want 1..100", *r.RoundTrips)
	}
	if r.LinkRTTNs != nil && *r.LinkRTTNs < 0 {
		return fmt.Errorf("link_rtt_ns is negative (%d)", *r.LinkRTTNs)
	}
	if c.CertKey != r.CertKey || c.Group != r.Group || c.Chain != r.Chain {
		return fmt.Errorf("config %s disagrees with cert_key=%s group=%s chain=%v", r.Config, r.CertKey, r.Group, r.Chain)
	}
	if st := r.StackName(); st != c.StackName() {
		return fmt.Errorf("config %s disagrees with stack=%s (want %s)", r.Config, st, c.StackName())
	}
	for _, n := range []struct {
		name string
		v    int64
	}{
		{"retransmissions", int64(r.Retransmissions)}, {"packets_c2s", int64(r.PacketsC2S)},
		{"packets_s2c", int64(r.PacketsS2C)}, {"frame_bytes_c2s", r.FrameBytesC2S},
		{"frame_bytes_s2c", r.FrameBytesS2C}, {"tcp_payload_bytes_c2s", r.TCPPayloadBytesC2S},
		{"tcp_payload_bytes_s2c", r.TCPPayloadBytesS2C},
	} {
		if n.v < 0 {
			return fmt.Errorf("%s is negative (%d)", n.name, n.v)
		}
	}
	for _, p := range []struct {
		name string
		v    *int64
	}{{"ths_ns", r.ThsNs}, {"inproc_client_ns", r.InprocClientNs}, {"inproc_server_ns", r.InprocServerNs}} {
		if p.v != nil && *p.v < 0 {
			return fmt.Errorf("%s is negative (%d)", p.name, *p.v)
		}
	}
	if r.ThsNs != nil && r.ClientHelloNs != nil && r.ClientFinishedNs != nil && *r.ThsNs != *r.ClientFinishedNs-*r.ClientHelloNs {
		return fmt.Errorf("ths_ns %d is not client_finished_ns - client_hello_ns = %d", *r.ThsNs, *r.ClientFinishedNs-*r.ClientHelloNs)
	}
	if r.Complete && (r.ClientHelloNs == nil || r.ServerHelloNs == nil || r.ClientFinishedNs == nil || r.ThsNs == nil) {
		return errors.New("complete is true but client_hello_ns, server_hello_ns, client_finished_ns or ths_ns is empty")
	}
	if !r.HRR && (r.ClientHello2Ns != nil || r.SrvClientHello2Ns != nil) {
		return errors.New("client_hello2_ns or srv_client_hello2_ns is set but hrr is false: a second ClientHello follows only a HelloRetryRequest")
	}
	return nil
}

// WriteRecords writes rs as records.csv.gz content. That is, gzip (no
// file name, zero modification time, default level, so the bytes depend
// only on rs) around RFC 4180 CSV with the Columns header. Every record
// must pass Check and seq must be strictly increasing, so that whatever
// is written can be read back by ReadRecords.
func WriteRecords(w io.Writer, rs []Record) error {
	return writeRecords(w, rs, false)
}

// writeRecords is WriteRecords, with the ColumnsServerEnd header whatever
// the records hold when serverEnd.
func writeRecords(w io.Writer, rs []Record, serverEnd bool) error {
	zw := gzip.NewWriter(w) // Header is zero: no name, ModTime 0, OS unknown
	if err := writeCSVHeader(zw, rs, serverEnd); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write records: %w", err)
	}
	return nil
}

func writeCSV(w io.Writer, rs []Record) error {
	return writeCSVHeader(w, rs, false)
}

func writeCSVHeader(w io.Writer, rs []Record, serverEnd bool) error {
	cw := csv.NewWriter(w)
	// A run whose every record is Go's on loopback is written with the
	// ColumnsV1 header, as before the stack and path columns existed, so
	// that its bytes are those the records of such a run have always had
	// (a re-derivation from the capture must match the recorded file byte
	// for byte).
	header := ColumnsV1
	for i := range rs {
		if rs[i].StackName() != StackGo || rs[i].PathOrDefault() != DefaultPath {
			header = Columns
		}
		if rs[i].emulatedColumns() {
			header = ColumnsEmulated
		}
		if rs[i].serverEndColumns() {
			serverEnd = true
		}
	}
	if serverEnd {
		header = ColumnsServerEnd
	}
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("write records: %w", err)
	}
	row := make([]string, len(ColumnsServerEnd))
	for i := range rs {
		r := &rs[i]
		if err := r.Check(); err != nil {
			return fmt.Errorf("write records: record %d (seq %d): %w", i, r.Seq, err)
		}
		if i > 0 && r.Seq <= rs[i-1].Seq {
			return fmt.Errorf("write records: record %d: seq %d after %d, want strictly increasing", i, r.Seq, rs[i-1].Seq)
		}
		row = append(row[:0],
			strconv.Itoa(r.Seq), r.Config, r.CertKey, r.Group, strconv.FormatBool(r.Chain), strconv.FormatBool(r.Warmup),
			r.Client, r.Server, optInt(r.SynNs), optInt(r.ClientHelloNs), optInt(r.ServerHelloNs),
			optInt(r.ServerFlightEndNs), optInt(r.ClientFinishedNs), optInt(r.FinNs), strconv.FormatBool(r.HRR),
			r.NegotiatedGroup, strconv.Itoa(r.Retransmissions), strconv.Itoa(r.PacketsC2S), strconv.Itoa(r.PacketsS2C),
			strconv.FormatInt(r.FrameBytesC2S, 10), strconv.FormatInt(r.FrameBytesS2C, 10),
			strconv.FormatInt(r.TCPPayloadBytesC2S, 10), strconv.FormatInt(r.TCPPayloadBytesS2C, 10),
			optInt(r.ThsNs), strconv.FormatBool(r.Complete),
			optInt(r.InprocClientNs), optInt(r.InprocServerNs))
		if len(header) >= len(Columns) {
			row = append(row, r.StackName(), r.PathOrDefault())
		}
		if len(header) >= len(ColumnsEmulated) {
			row = append(row, r.ClientGroupsName(), optInt(r.RoundTrips), optInt(r.LinkRTTNs))
		}
		if len(header) == len(ColumnsServerEnd) {
			for _, p := range r.serverEndTimes() {
				row = append(row, optInt(*p))
			}
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write records: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write records: %w", err)
	}
	return nil
}

func optInt(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

// ParseError is a problem in a records file, located by file, 1-based line
// and column name.
//
// Line is 0 when it concerns the whole file, Column empty when it concerns the whole row.
type ParseError struct {
	File   string
	Line   int
	Column string
	Err    error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Column != "" {
		fmt.Fprintf(&b, ": column %s", e.Column)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// ErrNoRecords is returned (wrapped in a ParseError) for a file with a
// header but no rows.
var ErrNoRecords = errors.New("no records: the file has a header and no rows")

// ReadRecords reads records.csv.gz content from r; name (the file's path)
// is used in errors. Gzip is detected by its magic number, so a plain CSV
// with the same columns is read too. It checks the header, every cell
// (types, empty only where a value may be absent), every row's Check, and
// that seq increases strictly; the first problem is returned as a
// *ParseError naming the file and line.
func ReadRecords(r io.Reader, name string) ([]Record, error) {
	br := bufio.NewReader(r)
	var in io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &ParseError{File: name, Err: fmt.Errorf("gzip: %w", err)}
		}
		defer zr.Close()
		in = zr
	}
	cr := csv.NewReader(in)
	cr.FieldsPerRecord = 0 // the header's count, checked below
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &ParseError{File: name, Err: errors.New("empty file: want a header row " + strings.Join(Columns, ","))}
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	if len(header) != len(ColumnsServerEnd) && len(header) != len(ColumnsEmulated) && len(header) != len(Columns) && len(header) != len(ColumnsV1) {
		return nil, &ParseError{File: name, Line: 1, Err: csv.ErrFieldCount}
	}
	if !slices.Equal(header, ColumnsServerEnd[:len(header)]) {
		return nil, &ParseError{File: name, Line: 1, Err: headerError(header)}
	}
	v1 := len(header) == len(ColumnsV1)
	var out []Record
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		rec, col, err := parseRow(row, v1, len(header) >= len(ColumnsEmulated), len(header) == len(ColumnsServerEnd))
		if err != nil {
			return nil, &ParseError{File: name, Line: line, Column: col, Err: err}
		}
		if n := len(out); n > 0 && rec.Seq <= out[n-1].Seq {
			return nil, &ParseError{File: name, Line: line, Column: "seq", Err: fmt.Errorf("seq %d after %d: want strictly increasing (one row per connection, in run order)", rec.Seq, out[n-1].Seq)}
		}
		out = append(out, rec)
	}
	if len(out) == 0 {
		return nil, &ParseError{File: name, Err: ErrNoRecords}
	}
	return out, nil
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &ParseError{File: name, Line: pe.Line, Err: pe.Err}
	}
	return &ParseError{File: name, Err: err} // gzip or I/O errors have no line
}

func headerError(got []string) error {
	for i, c := range ColumnsServerEnd {
		if i >= len(got) && i >= len(Columns) {
			break
		}
		if i >= len(got) || got[i] != c {
			g := "(missing)"
			if i < len(got) {
				g = strconv.Quote(got[i])
			}
			return fmt.Errorf("header column %d is %s, want %q (the columns are, in order: %s)", i+1, g, c, strings.Join(Columns, ","))
		}
	}
	return fmt.Errorf("header has %d columns, want %d", len(got), len(Columns))
}

// parseRow parses one data row (of a ColumnsV1 file when v1, of a
// ColumnsEmulated or longer file when emu, of a ColumnsServerEnd file
// when srv). On error it returns the column at fault.
func parseRow(row []string, v1, emu, srv bool) (Record, string, error) {
	var r Record
	p := rowParser{row: row}
	r.Seq = int(p.int("seq", 0, 1<<31-1))
	r.Config = p.str("config", false)
	r.CertKey = p.str("cert_key", false)
	r.Group = p.str("group", false)
	r.Chain = p.bool("chain")
	r.Warmup = p.bool("warmup")
	r.Client = p.str("client", true)
	r.Server = p.str("server", true)
	r.SynNs = p.opt("syn_ns")
	r.ClientHelloNs = p.opt("client_hello_ns")
	r.ServerHelloNs = p.opt("server_hello_ns")
	r.ServerFlightEndNs = p.opt("server_flight_end_ns")
	r.ClientFinishedNs = p.opt("client_finished_ns")
	r.FinNs = p.opt("fin_ns")
	r.HRR = p.bool("hrr")
	r.NegotiatedGroup = p.str("negotiated_group", true)
	r.Retransmissions = int(p.int("retransmissions", 0, 1<<31-1))
	r.PacketsC2S = int(p.int("packets_c2s", 0, 1<<31-1))
	r.PacketsS2C = int(p.int("packets_s2c", 0, 1<<31-1))
	r.FrameBytesC2S = p.int("frame_bytes_c2s", 0, 1<<62)
	r.FrameBytesS2C = p.int("frame_bytes_s2c", 0, 1<<62)
	r.TCPPayloadBytesC2S = p.int("tcp_payload_bytes_c2s", 0, 1<<62)
	r.TCPPayloadBytesS2C = p.int("tcp_payload_bytes_s2c", 0, 1<<62)
	r.ThsNs = p.opt("ths_ns")
	r.Complete = p.bool("complete")
	r.InprocClientNs = p.opt("inproc_client_ns")
	r.InprocServerNs = p.opt("inproc_server_ns")
	r.Stack, r.Path = StackGo, DefaultPath
	if !v1 {
		r.Stack = p.str("stack", false)
		r.Path = p.str("path", false)
	}
	if emu {
		r.ClientGroups = p.str("client_groups", false)
		r.RoundTrips = p.opt("round_trips")
		r.LinkRTTNs = p.opt("link_rtt_ns")
	}
	if srv {
		for i, f := range r.serverEndTimes() {
			*f = p.opt(ColumnsServerEnd[len(ColumnsEmulated)+i])
		}
	}
	if p.err != nil {
		return Record{}, p.col, p.err
	}
	if err := r.Check(); err != nil {
		return Record{}, "", err
	}
	return r, "", nil
}

// rowParser reads the cells of one row in column order, keeping the first
// error and the column it happened in.
type rowParser struct {
	row []string
	i   int
	col string
	err error
}

func (p *rowParser) next(name string) (string, bool) {
	if ColumnsServerEnd[p.i] != name {
		panic("tlsdata: parseRow out of step with Columns at " + name)
	}
	v := p.row[p.i]
	p.i++
	return v, p.err == nil
}

func (p *rowParser) fail(name string, err error) {
	p.col, p.err = name, err
}

func (p *rowParser) str(name string, mayBeEmpty bool) string {
	v, ok := p.next(name)
	if ok && !mayBeEmpty && v == "" {
		p.fail(name, errors.New("empty, want a value"))
	}
	return v
}

func (p *rowParser) bool(name string) bool {
	v, ok := p.next(name)
	if !ok {
		return false
	}
	switch v {
	case "true":
		return true
	case "false":
		return false
	}
	p.fail(name, fmt.Errorf("%q, want true or false", v))
	return false
}

func (p *rowParser) int(name string, lo, hi int64) int64 {
	v, ok := p.next(name)
	if !ok {
		return 0
	}
	n, err := parseInt(v)
	if err != nil {
		p.fail(name, err)
		return 0
	}
	if n < lo || n > hi {
		p.fail(name, fmt.Errorf("%d out of range [%d, %d]", n, lo, hi))
		return 0
	}
	return n
}

func (p *rowParser) opt(name string) *int64 {
	v, ok := p.next(name)
	if !ok || v == "" {
		return nil
	}
	n, err := parseInt(v)
	if err != nil {
		p.fail(name, err)
		return nil
	}
	return &n
}

// parseInt accepts only the canonical decimal form the writer produces
// (no '+', no leading zeros, no spaces), so a file has one spelling.
func parseInt(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", v)
	}
	if strconv.FormatInt(n, 10) != v {
		return 0, fmt.Errorf("%q is not in canonical decimal form (want %d)", v, n)
	}
	return n, nil
}

// MarshalRecords returns the records.csv.gz bytes of rs (WriteRecords into
// memory), for callers that hash before writing.
func MarshalRecords(rs []Record) ([]byte, error) {
	return marshalRecords(rs, false)
}

// MarshalRecordsServerEnd is MarshalRecords with the ColumnsServerEnd
// header even when no record has a server-end time. A run with
// server-end captures needs it: its header must not depend on what they
// caught.
func MarshalRecordsServerEnd(rs []Record) ([]byte, error) {
	return marshalRecords(rs, true)
}

func marshalRecords(rs []Record, serverEnd bool) ([]byte, error) {
	var b bytes.Buffer
	if err := writeRecords(&b, rs, serverEnd); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
