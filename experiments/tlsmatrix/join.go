package tlsmatrix

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"pqrepro/experiments/capture"
)

// joinSlack widens a connection's time window when no capture record's SYN
// lies strictly inside it, for a wall clock stepped by NTP during the run.
const joinSlack = 5 * time.Millisecond

type joinStats struct {
	measured, retrans, verified int
}

// join matches every connection the process made with its record in the
// capture and returns the dataset's rows in run order.
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
// capture holds a connection to one of the run's servers that no client of
// the run made.
func (r *runner) join(conns []conn, caps []capture.Record) ([]Record, joinStats, error) {
	type tuple struct{ client, server string }
	byTuple := map[tuple][]int{}
	servers := map[string]bool{}
	for _, s := range r.servers {
		servers[s.addr] = true
	}
	for i, c := range caps {
		if servers[c.Server] {
			byTuple[tuple{c.Client, c.Server}] = append(byTuple[tuple{c.Client, c.Server}], i)
		}
	}
	used := make([]bool, len(caps))
	var js joinStats
	var errs []error
	out := make([]Record, 0, len(conns))
	for _, cn := range conns {
		cfg := r.configs[cn.step.Config]
		cr := cn.client
		what := fmt.Sprintf("connection seq %d (%s, %s -> %s)", cn.seq, cfg.Name, cr.Local, cr.Server)
		lo := cr.Start.UnixNano()
		hi := lo + cr.DurationNs
		cands := byTuple[tuple{cr.Local, cr.Server}]
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
		case c.HRR:
			errs = append(errs, fmt.Errorf("%s: the capture shows a HelloRetryRequest; none was expected", what))
		case c.Group != cfg.GroupName:
			errs = append(errs, fmt.Errorf("%s: the capture's ServerHello negotiated %q, configured %s", what, c.Group, cfg.GroupName))
		case c.ThsNs == nil || *c.ThsNs <= 0:
			errs = append(errs, fmt.Errorf("%s: Ths from the capture is not positive", what))
		}
		if !cn.step.Warmup {
			js.measured++
		}
		js.retrans += c.Retransmissions
		if c.ClientFinishedVerified {
			js.verified++
		}
		cl, sv := cr.DurationNs, cn.server.DurationNs
		out = append(out, Record{
			Seq: cn.seq, Config: cfg.Name, CertKey: string(cfg.Key), Group: cfg.GroupName, Chain: cfg.Chain, Warmup: cn.step.Warmup,
			Client: c.Client, Server: c.Server,
			SynNs: c.SynNs, ClientHelloNs: c.ClientHelloNs, ServerHelloNs: c.ServerHelloNs, ServerFlightEndNs: c.ServerFlightEndNs,
			ClientFinishedNs: c.ClientFinishedNs, FinNs: c.FinNs, HRR: c.HRR, NegotiatedGroup: c.Group,
			Retransmissions: c.Retransmissions, PacketsC2S: c.PacketsC2S, PacketsS2C: c.PacketsS2C,
			FrameBytesC2S: c.FrameBytesC2S, FrameBytesS2C: c.FrameBytesS2C,
			TCPPayloadBytesC2S: c.TCPPayloadBytesC2S, TCPPayloadBytesS2C: c.TCPPayloadBytesS2C,
			ThsNs: c.ThsNs, Complete: c.Complete,
			InprocClientNs: &cl, InprocServerNs: &sv, Path: cfg.Path,
		})
	}
	var stray []string
	for i, c := range caps {
		if servers[c.Server] && !used[i] {
			stray = append(stray, c.Client+" -> "+c.Server)
		}
	}
	if len(stray) > 0 {
		errs = append(errs, fmt.Errorf("the capture holds %d connections to the run's servers that the run did not make (first: %s)", len(stray), stray[0]))
	}
	if len(errs) > 0 {
		return nil, js, joinError(errs)
	}
	return out, js, nil
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
