package tlsjoin

import (
	"errors"
	"fmt"
	"strings"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/rederive"
)

// ServerCaptureFor is the name of an emulated path's server-end capture in
// meta.json's files, capture-<path>-server.pcapng. The runner takes it on
// the server's TUN device inside the server's namespace (issue 42).
func ServerCaptureFor(path string) string {
	return "capture-" + pathOf(path) + "-server" + rederive.CaptureExt
}

// ErrNoCapture is wrapped by a DeriveRecords opener when the run has no
// capture of that name. Only a server-end capture may be absent.
var ErrNoCapture = errors.New("no such capture")

// ServerEndStats counts what the join of one path's server-end capture
// found. Misses say, for the first maxMisses connections it lacks, why.
type ServerEndStats struct {
	Path    string `json:"path"`
	Capture string `json:"capture"`
	// Joined connections have the server end's times; NoSyn of them
	// lack its SYN (srv_syn_ns empty). Missing connections are not in
	// the capture: their server-end columns are empty.
	Joined  int      `json:"joined"`
	NoSyn   int      `json:"joined_without_syn"`
	Missing int      `json:"missing"`
	Misses  []string `json:"misses,omitempty"`
	// Unjoined counts the capture's records to the path's servers that
	// carry no ClientHello and matched no connection (a stream the
	// capture saw only in part); one with a ClientHello is an error.
	Unjoined int `json:"unjoined_partial_records"`
}

// maxMisses bounds ServerEndStats.Misses.
const maxMisses = 10

// joinServerEnd adds the server end of one path to its records. That is,
// rs are the path's records in run order and cli the client-end capture
// records Join matched them with (same index); srv is the path's
// server-end capture and servers its server addresses.
//
// The link emulator forwards IP packets unchanged, so a connection has
// the same 4-tuple at both ends. Among the server-end records of its
// 4-tuple, the match is the one whose first time (its SYN, else its
// ClientHello) lies in [the client end's SYN, the client end's Finished]:
// a packet arrives after it left, and the client sends its Finished only
// after the server has its SYN and ClientHello, so at most one
// connection of a reused 4-tuple fits. A connection with no match keeps
// empty server-end columns and is counted, with the reason, in the
// returned statistics; two matches, a match whose HelloRetryRequest
// disagrees with the client end's, or a server-end handshake that matches
// no connection is an error.
func joinServerEnd(rs []tlsdata.Record, cli []capture.Record, servers []string, srv []capture.Record) (ServerEndStats, error) {
	type tuple struct{ client, server string }
	isServer := map[string]bool{}
	for _, s := range servers {
		isServer[s] = true
	}
	byTuple := map[tuple][]int{}
	for i, s := range srv {
		if isServer[s.Server] {
			byTuple[tuple{s.Client, s.Server}] = append(byTuple[tuple{s.Client, s.Server}], i)
		}
	}
	used := make([]bool, len(srv))
	var st ServerEndStats
	var errs []error
	for i := range rs {
		r, c := &rs[i], cli[i]
		r.ClientHello2Ns = c.ClientHello2Ns
		what := fmt.Sprintf("connection seq %d (%s, %s -> %s)", r.Seq, r.Config, r.Client, r.Server)
		cands := byTuple[tuple{r.Client, r.Server}]
		var in []int
		for _, j := range cands {
			if !used[j] && serverEndFits(c, srv[j]) {
				in = append(in, j)
			}
		}
		switch {
		case len(in) > 1:
			errs = append(errs, fmt.Errorf("%s: %d server-end capture records match its 4-tuple and time window; cannot tell them apart", what, len(in)))
			continue
		case len(in) == 0:
			st.Missing++
			if len(st.Misses) < maxMisses {
				st.Misses = append(st.Misses, fmt.Sprintf("%s: not in the server-end capture (%d records with this 4-tuple, none with its SYN or ClientHello between the client end's SYN and Finished)", what, len(cands)))
			}
			continue
		}
		used[in[0]] = true
		s := srv[in[0]]
		if s.ServerHelloNs != nil && s.HRR != c.HRR {
			errs = append(errs, fmt.Errorf("%s: the server-end capture shows hrr=%v, the client end hrr=%v", what, s.HRR, c.HRR))
			continue
		}
		st.Joined++
		if s.SynNs == nil {
			st.NoSyn++
		}
		r.SrvSynNs, r.SrvClientHelloNs, r.SrvClientHello2Ns = s.SynNs, s.ClientHelloNs, s.ClientHello2Ns
		r.SrvServerFlightEndNs, r.SrvClientFinishedNs = s.ServerFlightEndNs, s.ClientFinishedNs
	}
	var stray []string
	for j, s := range srv {
		switch {
		case !isServer[s.Server] || used[j]:
		case s.ClientHelloNs == nil:
			st.Unjoined++
		default:
			stray = append(stray, s.Client+" -> "+s.Server)
		}
	}
	if len(stray) > 0 {
		errs = append(errs, fmt.Errorf("the server-end capture holds %d handshakes to the run's servers that match no connection of the run (first: %s)", len(stray), stray[0]))
	}
	if len(errs) > 0 {
		return st, joinError(errs)
	}
	return st, nil
}

// serverEndFits says whether server-end record s can be client-end record
// c's connection. It can when s's SYN (else its ClientHello) lies between
// c's SYN (else ClientHello) and c's Finished.
func serverEndFits(c, s capture.Record) bool {
	first, lo := s.SynNs, c.SynNs
	if first == nil {
		first = s.ClientHelloNs
	}
	if lo == nil {
		lo = c.ClientHelloNs
	}
	return first != nil && lo != nil && c.ClientFinishedNs != nil && *lo <= *first && *first <= *c.ClientFinishedNs
}

// Misses are the first reason of each path's server-end misses, for the
// run's log. They are empty when every connection was joined at both ends.
func (s Stats) Misses() []string {
	var out []string
	for _, p := range s.ServerEnd {
		if p.Missing > 0 {
			out = append(out, fmt.Sprintf("path %s: %d of %d connections not in %s; first: %s", p.Path, p.Missing, p.Missing+p.Joined, p.Capture, strings.Join(p.Misses[:min(len(p.Misses), 1)], "")))
		}
	}
	return out
}

// MarshalRecords renders the records DeriveRecords joined as
// records.csv.gz. The header is ColumnsServerEnd when the run has
// server-end captures (js.ServerEnd), whatever they caught.
func MarshalRecords(recs []tlsdata.Record, js Stats) ([]byte, error) {
	if len(js.ServerEnd) > 0 {
		return tlsdata.MarshalRecordsServerEnd(recs)
	}
	return tlsdata.MarshalRecords(recs)
}
