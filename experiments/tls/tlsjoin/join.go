// Package tlsjoin derives Study A's records (datasets/tlsdata) from what a run
// measured. That is, its packet captures (one per network path the run used),
// read by experiments/instruments/capture, joined with the connections the
// process made (inproc.csv.gz). The runner (experiments/tls/tlsrun) calls
// Derive when it records a run and the build's tls:records stage
// (experiments/instruments/rederive) calls the same Derive on the committed
// run, so the capture reader and this join are under that stage's code hash
// like any analysis code.
package tlsjoin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/internal/gzcsv"
)

// Files of a run folder this package reads.
const (
	InprocFile  = rederive.InprocFile
	ConfigsFile = "configs.json"
	// CaptureName is the loopback path's capture in meta.json's files
	// (the only capture of runs before the path factor).
	CaptureName = "capture.pcapng"
	// BridgeCaptureName is the bridge path's capture (CaptureFor).
	BridgeCaptureName = "capture-bridge.pcapng"
)

// CaptureFor is the name of path's capture in meta.json's files:
// CaptureName for loopback (and ""), capture-<path>.pcapng for any other.
func CaptureFor(path string) string {
	if p := pathOf(path); p != tlsdata.DefaultPath {
		return "capture-" + p + rederive.CaptureExt
	}
	return CaptureName
}

// pathOf is path with "" (runs before the path factor) read as
// tlsdata.DefaultPath.
func pathOf(path string) string {
	if path == "" {
		return tlsdata.DefaultPath
	}
	return path
}

// Config is one configuration of configs.json, as the join needs it.
type Config struct {
	Name    string `json:"config"`
	CertKey string `json:"cert_key"`
	Group   string `json:"group"`
	Chain   bool   `json:"chain"`
	// Stack is the TLS implementation ("" or "go": crypto/tls; "openssl");
	// KeyShare is "hrr" when every connection must take the
	// HelloRetryRequest path, "" or "direct" when none may. Runs recorded
	// before these factors have neither in configs.json.
	Stack    string `json:"stack,omitempty"`
	KeyShare string `json:"keyshare,omitempty"`
	// Path is the network path (tlsdata.KnownPaths) the configuration
	// ran on; a run on several paths lists every configuration once per
	// path. "" (runs before the path factor) is loopback.
	Path string `json:"path,omitempty"`
	// ClientGroups is the client group-list mode on an emulated path
	// (tlsdata.ClientGroupModes); "" is per-config. LinkRTTNs is the
	// path's self-tested RTT, copied into every record of the path.
	ClientGroups string `json:"client_groups,omitempty"`
	LinkRTTNs    int64  `json:"link_rtt_ns,omitempty"`
}

// wantHRR reports whether the configuration's connections must show a
// HelloRetryRequest. They must under the hrr key-share mode, or with a client
// group list whose first group is not the configuration's (tlsdata.ExpectHRR).
func (c Config) wantHRR() bool {
	return c.KeyShare == "hrr" || tlsdata.ExpectHRR(c.ClientGroups, c.Group)
}

// hrrWhy names what predicts a configuration's HelloRetryRequest.
func (c Config) hrrWhy() string {
	if c.ClientGroups != "" && c.ClientGroups != tlsdata.ClientGroupsPerConfig {
		return "the client group list " + c.ClientGroups
	}
	return "the " + cmp.Or(c.KeyShare, "direct") + " key-share mode"
}

// stack is the records' stack column value.
func (c Config) stack() string {
	if c.Stack == "" {
		return tlsdata.StackGo
	}
	return c.Stack
}

// Conn is one connection as the process saw it: one row of inproc.csv.gz.
type Conn struct {
	Seq      int    // position in the run, warm-ups included
	Config   string // Config.Name
	Warmup   bool
	Client   string // the client's ip:port
	Server   string // the server's ip:port
	StartNs  int64  // dial start, Unix nanoseconds (wall clock)
	ClientNs int64  // dial start to client handshake complete
	ServerNs int64  // accept to server handshake complete; -1 when the server reports none (openssl-cli)
	// Path is the network path of the connection (Config.Path): which
	// capture holds it. "" is loopback.
	Path string
}

// InprocColumns is the header of inproc.csv.gz of a run whose every
// connection is on loopback (every run before the path factor).
var InprocColumns = []string{"seq", "config", "warmup", "client", "server", "start_unix_ns", "client_ns", "server_ns"}

// InprocColumnsPath is the header of inproc.csv.gz of a run with
// connections on another path: InprocColumns and the path.
var InprocColumnsPath = append(slices.Clip(InprocColumns), "path")

// MarshalInproc renders the connections as inproc.csv.gz. That is, gzip'd
// CSV with no name and no time stamp in the header, so the bytes depend
// only on the rows. The path column is written only when a connection is
// not on loopback, so a loopback run's file is the one it has always been.
func MarshalInproc(conns []Conn) ([]byte, error) {
	header := InprocColumns
	if slices.ContainsFunc(conns, func(c Conn) bool { return pathOf(c.Path) != tlsdata.DefaultPath }) {
		header = InprocColumnsPath
	}
	rows := make([][]string, len(conns))
	for i, c := range conns {
		rows[i] = []string{strconv.Itoa(c.Seq), c.Config, strconv.FormatBool(c.Warmup), c.Client, c.Server,
			strconv.FormatInt(c.StartNs, 10), strconv.FormatInt(c.ClientNs, 10), strconv.FormatInt(c.ServerNs, 10)}
		if len(header) == len(InprocColumnsPath) {
			rows[i] = append(rows[i], pathOf(c.Path))
		}
	}
	return gzcsv.Marshal(header, rows)
}

// ReadInproc parses inproc.csv.gz (either header); name is for messages.
// Connections of a file without the path column are on loopback.
func ReadInproc(b []byte, name string) ([]Conn, error) {
	_, rows, err := gzcsv.Unmarshal(b, name, InprocColumns, InprocColumnsPath)
	if err != nil {
		return nil, err
	}
	out := make([]Conn, 0, len(rows))
	for i, r := range rows {
		var c Conn
		var errs []error
		num := func(s string) int64 {
			v, err := strconv.ParseInt(s, 10, 64)
			errs = append(errs, err)
			return v
		}
		c.Seq = int(num(r[0]))
		c.Config = r[1]
		w, err := strconv.ParseBool(r[2])
		errs = append(errs, err)
		c.Warmup, c.Client, c.Server = w, r[3], r[4]
		c.StartNs, c.ClientNs, c.ServerNs = num(r[5]), num(r[6]), num(r[7])
		c.Path = tlsdata.DefaultPath
		if len(r) == len(InprocColumnsPath) {
			c.Path = r[8]
			if !tlsdata.ValidPath(c.Path) {
				errs = append(errs, fmt.Errorf("path %q: want one of %s or %s<delay>ms", c.Path, strings.Join(tlsdata.KnownPaths, ", "), tlsdata.EmulatedPathPrefix))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, i+2, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// Stats counts what Join matched.
type Stats struct {
	Measured, Retrans, Verified int
	CaptureConnections          int // connections the captures hold, all of them
	// ServerEnd has one entry per path with a server-end capture, in the
	// paths' order; none for a run without such captures.
	ServerEnd []ServerEndStats
}

func (s *Stats) add(o Stats) {
	s.Measured += o.Measured
	s.Retrans += o.Retrans
	s.Verified += o.Verified
	s.CaptureConnections += o.CaptureConnections
	s.ServerEnd = append(s.ServerEnd, o.ServerEnd...)
}

// joinSlack widens a connection's time window when no capture record's SYN
// lies strictly inside it, for a wall clock stepped by NTP during the run.
const joinSlack = 5 * time.Millisecond

// Join matches the connections of one network path with their records
// in its capture.
//
// It returns the dataset's rows in run order (JoinPaths joins a run of
// several paths).
//
// The key is the TCP 4-tuple (client ip:port, server ip:port), but on lo
// the kernel reuses a 4-tuple within milliseconds (tcp_tw_reuse), so a
// 4-tuple can occur several times in one capture: among the capture
// records of the tuple, the match is the one whose client SYN lies in the
// connection's in-process interval [dial start, dial start + client timer]
// (both on the wall clock; connections are sequential, so at most one SYN
// of a tuple can lie there). If none does, the interval is widened by
// joinSlack on both sides, and it must then hold exactly one. A capture
// record is used at most once.
//
// It fails loudly, naming the connection, when a connection has no match
// or an ambiguous one; when its capture record is not complete, shows a
// HelloRetryRequest or another group than configured; and when the
// capture holds a connection to one of the run's servers (servers) that no
// client of the run made.
func Join(configs []Config, servers []string, conns []Conn, caps []capture.Record) ([]tlsdata.Record, Stats, error) {
	out, _, js, err := join(configs, servers, conns, caps)
	return out, js, err
}

// join is Join; it also returns the capture record of each row.
func join(configs []Config, servers []string, conns []Conn, caps []capture.Record) ([]tlsdata.Record, []capture.Record, Stats, error) {
	type tuple struct{ client, server string }
	type unit struct{ name, path string }
	byName := map[unit]Config{}
	for _, c := range configs {
		byName[unit{c.Name, pathOf(c.Path)}] = c
	}
	byTuple := map[tuple][]int{}
	isServer := map[string]bool{}
	for _, s := range servers {
		isServer[s] = true
	}
	for i, c := range caps {
		if isServer[c.Server] {
			byTuple[tuple{c.Client, c.Server}] = append(byTuple[tuple{c.Client, c.Server}], i)
		}
	}
	used := make([]bool, len(caps))
	js := Stats{CaptureConnections: len(caps)}
	var errs []error
	out := make([]tlsdata.Record, 0, len(conns))
	matched := make([]capture.Record, 0, len(conns))
	for _, cn := range conns {
		cfg, ok := byName[unit{cn.Config, pathOf(cn.Path)}]
		what := fmt.Sprintf("connection seq %d (%s, %s -> %s)", cn.Seq, cn.Config, cn.Client, cn.Server)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: configuration not in %s for path %s", what, ConfigsFile, pathOf(cn.Path)))
			continue
		}
		lo := cn.StartNs
		hi := lo + cn.ClientNs
		cands := byTuple[tuple{cn.Client, cn.Server}]
		pick := func(lo, hi int64) []int {
			var in []int
			for _, i := range cands {
				if !used[i] && caps[i].SynNs != nil && *caps[i].SynNs >= lo && *caps[i].SynNs <= hi {
					in = append(in, i)
				}
			}
			return in
		}
		in := pick(lo, hi)
		if len(in) == 0 {
			in = pick(lo-int64(joinSlack), hi+int64(joinSlack))
		}
		switch {
		case len(in) == 0:
			errs = append(errs, fmt.Errorf("%s: not in the capture (%d capture records with this 4-tuple, none with its SYN in the connection's time window)", what, len(cands)))
			continue
		case len(in) > 1:
			errs = append(errs, fmt.Errorf("%s: %d capture records match its 4-tuple and time window; cannot tell them apart", what, len(in)))
			continue
		}
		used[in[0]] = true
		c := caps[in[0]]
		switch {
		case !c.Complete:
			errs = append(errs, fmt.Errorf("%s: the capture's record is incomplete (SYN, ClientHello, ServerHello or client Finished missing, or a hole in the stream)", what))
		case c.HRR && !cfg.wantHRR():
			errs = append(errs, fmt.Errorf("%s: the capture shows a HelloRetryRequest; none was expected (%s)", what, cfg.hrrWhy()))
		case !c.HRR && cfg.wantHRR():
			errs = append(errs, fmt.Errorf("%s: the capture shows no HelloRetryRequest; %s expects one", what, cfg.hrrWhy()))
		case c.Group != cfg.Group:
			errs = append(errs, fmt.Errorf("%s: the capture's ServerHello negotiated %q, configured %s", what, c.Group, cfg.Group))
		case c.ThsNs == nil || *c.ThsNs <= 0:
			errs = append(errs, fmt.Errorf("%s: Ths from the capture is not positive", what))
		}
		if !cn.Warmup {
			js.Measured++
		}
		js.Retrans += c.Retransmissions
		if c.ClientFinishedVerified {
			js.Verified++
		}
		cl, sv := cn.ClientNs, cn.ServerNs
		svp := &sv
		if sv < 0 { // not measured: openssl s_server reports no timer
			svp = nil
		}
		rec := tlsdata.Record{
			Seq: cn.Seq, Config: cfg.Name, CertKey: cfg.CertKey, Group: cfg.Group, Chain: cfg.Chain, Warmup: cn.Warmup,
			Client: c.Client, Server: c.Server,
			SynNs: c.SynNs, ClientHelloNs: c.ClientHelloNs, ServerHelloNs: c.ServerHelloNs, ServerFlightEndNs: c.ServerFlightEndNs,
			ClientFinishedNs: c.ClientFinishedNs, FinNs: c.FinNs, HRR: c.HRR, NegotiatedGroup: c.Group,
			Retransmissions: c.Retransmissions, PacketsC2S: c.PacketsC2S, PacketsS2C: c.PacketsS2C,
			FrameBytesC2S: c.FrameBytesC2S, FrameBytesS2C: c.FrameBytesS2C,
			TCPPayloadBytesC2S: c.TCPPayloadBytesC2S, TCPPayloadBytesS2C: c.TCPPayloadBytesS2C,
			ThsNs: c.ThsNs, Complete: c.Complete,
			InprocClientNs: &cl, InprocServerNs: svp, Stack: cfg.stack(), Path: pathOf(cn.Path),
		}
		if _, emu := tlsdata.ParseEmulatedPath(rec.Path); emu {
			// Only here, so that every other run's records keep their
			// columns and bytes (tlsdata.ColumnsEmulated).
			rec.ClientGroups = cmp.Or(cfg.ClientGroups, tlsdata.ClientGroupsPerConfig)
			if n, ok := c.RoundTrips(); ok {
				rt := int64(n)
				rec.RoundTrips = &rt
			}
			if cfg.LinkRTTNs > 0 {
				rtt := cfg.LinkRTTNs
				rec.LinkRTTNs = &rtt
			}
		}
		out = append(out, rec)
		matched = append(matched, c)
	}
	var stray []string
	for i, c := range caps {
		if isServer[c.Server] && !used[i] {
			stray = append(stray, c.Client+" -> "+c.Server)
		}
	}
	if len(stray) > 0 {
		errs = append(errs, fmt.Errorf("the capture holds %d connections to the run's servers that the run did not make (first: %s)", len(stray), stray[0]))
	}
	if len(errs) > 0 {
		return nil, nil, js, joinError(errs)
	}
	return out, matched, js, nil
}

// joinError keeps the first problems readable: a run with thousands of
// failed matches reports the first ten and a count.
func joinError(errs []error) error {
	const show = 10
	if len(errs) <= show {
		return fmt.Errorf("capture and run disagree: %w", errors.Join(errs...))
	}
	var b strings.Builder
	for _, e := range errs[:show] {
		b.WriteString("\n" + e.Error())
	}
	return fmt.Errorf("capture and run disagree on %d connections:%s\n... and %d more", len(errs), b.String(), len(errs)-show)
}

// Servers are the distinct server addresses of the connections, sorted:
// the run's servers, each of which every configuration connects to.
func Servers(conns []Conn) []string {
	var s []string
	for _, c := range conns {
		s = append(s, c.Server)
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// Paths are the distinct network paths of the connections, sorted.
func Paths(conns []Conn) []string {
	var p []string
	for _, c := range conns {
		p = append(p, pathOf(c.Path))
	}
	slices.Sort(p)
	return slices.Compact(p)
}

// JoinPaths joins a run's connections path by path. That is, the
// connections of each path with the records of its own capture (caps, by
// path), by Join with that path's servers; on loopback and on the bridge
// the 4-tuples differ anyway, but a connection can only be in its path's
// capture. It returns the rows of every path in run order (seq) and the
// statistics summed over the paths. A path with connections but no
// capture is an error. A path with a server-end capture (srv, by path;
// emulated paths) also gets the server end's times (joinServerEnd).
func JoinPaths(configs []Config, conns []Conn, caps, srv map[string][]capture.Record) ([]tlsdata.Record, Stats, error) {
	var out []tlsdata.Record
	var js Stats
	var errs []error
	paths := Paths(conns)
	for _, p := range paths {
		var sub []Conn
		for _, c := range conns {
			if pathOf(c.Path) == p {
				sub = append(sub, c)
			}
		}
		recs, ok := caps[p]
		if !ok {
			errs = append(errs, fmt.Errorf("path %s: %d connections, but no capture (%s)", p, len(sub), CaptureFor(p)))
			continue
		}
		rs, cli, st, err := join(configs, Servers(sub), sub, recs)
		if srvRecs, ok := srv[p]; ok && err == nil {
			var se ServerEndStats
			se, err = joinServerEnd(rs, cli, Servers(sub), srvRecs)
			se.Path, se.Capture = p, ServerCaptureFor(p)
			st.ServerEnd = append(st.ServerEnd, se)
		}
		js.add(st)
		if err != nil {
			if len(paths) > 1 {
				err = fmt.Errorf("path %s: %w", p, err)
			}
			errs = append(errs, err)
			continue
		}
		out = append(out, rs...)
	}
	if len(errs) > 0 {
		return nil, js, errors.Join(errs...)
	}
	slices.SortStableFunc(out, func(a, b tlsdata.Record) int { return a.Seq - b.Seq })
	return out, js, nil
}

// DeriveRecords joins a run's connections with the captures of the paths
// they used.
//
// It reads the capture of every path the run's connections used (open
// returns the capture named CaptureFor(path), its uncompressed bytes),
// and on an emulated path the server-end capture ServerCaptureFor(path)
// when open has one (an error wrapping ErrNoCapture means it has none:
// runs before issue 42), and joins them with the connections by
// JoinPaths; it returns the records and the join's statistics
// (MarshalRecords writes them).
func DeriveRecords(configsJSON, inproc []byte, open func(name string) (io.ReadCloser, error)) ([]tlsdata.Record, Stats, error) {
	var configs []Config
	if err := json.Unmarshal(configsJSON, &configs); err != nil {
		return nil, Stats{}, fmt.Errorf("%s: %w", ConfigsFile, err)
	}
	conns, err := ReadInproc(inproc, InprocFile)
	if err != nil {
		return nil, Stats{}, err
	}
	caps, srv := map[string][]capture.Record{}, map[string][]capture.Record{}
	for _, p := range Paths(conns) {
		recs, err := openCapture(open, CaptureFor(p))
		if err != nil {
			return nil, Stats{}, err
		}
		caps[p] = recs
		if _, emu := tlsdata.ParseEmulatedPath(p); !emu {
			continue
		}
		recs, err = openCapture(open, ServerCaptureFor(p))
		switch {
		case errors.Is(err, ErrNoCapture):
		case err != nil:
			return nil, Stats{}, err
		default:
			srv[p] = recs
		}
	}
	return JoinPaths(configs, conns, caps, srv)
}

// openCapture opens capture name and reads its records.
func openCapture(open func(name string) (io.ReadCloser, error), name string) ([]capture.Record, error) {
	rc, err := open(name)
	if err != nil {
		return nil, err
	}
	res, err := capture.Read(rc, capture.ReadOptions{})
	if cerr := rc.Close(); cerr != nil {
		return nil, cerr // a corrupt capture explains any other error
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return res.Records, nil
}

// Derive is Study A's rederive.Derive. It reads configs.json,
// inproc.csv.gz and the captures, one per path of the run
// (capture.pcapng for loopback, capture-bridge.pcapng for the bridge) and
// a second one at the server's end of each emulated path where meta.json
// names it -> records.csv.gz bytes. Every capture meta.json names must be
// one a path of the run's connections needs.
func Derive(ctx context.Context, runDir string, read func(string) ([]byte, error), open func(rederive.Capture) (io.ReadCloser, error), caps []rederive.Capture) ([]byte, error) {
	byName := map[string]rederive.Capture{}
	for _, c := range caps {
		byName[c.Name] = c
	}
	cj, err := read(ConfigsFile)
	if err != nil {
		return nil, err
	}
	in, err := read(InprocFile)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	recs, js, err := DeriveRecords(cj, in, func(name string) (io.ReadCloser, error) {
		c, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("%s has connections whose capture is %s, but meta.json names no such capture: %w", InprocFile, name, ErrNoCapture)
		}
		used[name] = true
		return open(c)
	})
	if err != nil {
		return nil, err
	}
	for _, c := range caps {
		if !used[c.Name] {
			return nil, fmt.Errorf("meta.json names capture %s, but no connection of %s is on its path", c.Name, InprocFile)
		}
	}
	return MarshalRecords(recs, js)
}
