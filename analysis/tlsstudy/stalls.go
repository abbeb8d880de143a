package tlsstudy

import (
	"math"
	"slices"

	"pqrepro/analysis/stats"
	"pqrepro/datasets/tlsdata"
)

// Nagle's algorithm and delayed ACKs (issue 24 item 6). s_server sets no
// TCP_NODELAY on the sockets it accepts (meta.json
// measured.socket_options), so when its server flight leaves in several
// writes, Nagle's algorithm (RFC 896; RFC 1122 4.2.3.4) holds a short
// last segment until the data already sent is acknowledged; if the
// client delays that ACK, the flight waits for the delayed-ACK timer. On
// Linux the timer is at least TCP_DELACK_MIN = HZ/25 = 40 ms (LinuxDelackMinMs)
// (include/net/tcp.h; the quick-ACK mode at a connection's start usually
// avoids it), on any path, loopback included, so a stall shows as a gap
// of about 40 ms inside a handshake whose work takes a few milliseconds
// here. We count a handshake as stalled when its server flight
// (ServerHello to the flight's last segment) or its client gap (the
// flight's last segment to the client's Finished) lasts at least
// StallThresholdMs: below the 40 ms timer, so that a stall is not missed
// by timestamp jitter, and far above the slowest handshake's compute
// (the hybrid with ML-DSA-87, a few ms), so that work is not counted as
// a stall. The 99th percentile of the server flight per cell shows a
// rarer or shorter stall the threshold would miss.

// StallThresholdMs is the gap counted as a timer stall (see above).
const StallThresholdMs = 30

// CellStalls is one cell's packet-timing summary over its measured
// connections (all configurations of the cell).
type CellStalls struct {
	Cell
	N int `json:"n"`
	// ServerFlight* are of server_flight_end_ns - server_hello_ns, ms;
	// ClientGap* of client_finished_ns - server_flight_end_ns, ms (type 7
	// quantiles).
	ServerFlightMedianMs Num `json:"server_flight_median_ms"`
	ServerFlightP99Ms    Num `json:"server_flight_p99_ms"`
	ServerFlightMaxMs    Num `json:"server_flight_max_ms"`
	ClientGapP99Ms       Num `json:"client_gap_p99_ms"`
	ClientGapMaxMs       Num `json:"client_gap_max_ms"`
	// Stalled counts the connections with a server flight or a client
	// gap of at least StallThresholdMs; StalledPct is its share.
	Stalled    int `json:"stalled"`
	StalledPct Num `json:"stalled_pct"`
	// ServerNoDelay and ClientNoDelay are the stack's socket options as
	// meta.json records them (null when it does not).
	ServerNoDelay *bool `json:"server_tcp_nodelay"`
	ClientNoDelay *bool `json:"client_tcp_nodelay"`
}

// Stalls is the stall account of every cell.
type Stalls struct {
	ThresholdMs float64      `json:"threshold_ms"`
	Cells       []CellStalls `json:"cells"`
}

// stalls summarises the packet timing of every cell's measured
// connections, in table order.
func stalls(cells cellSamples) *Stalls {
	out := &Stalls{ThresholdMs: StallThresholdMs, Cells: []CellStalls{}}
	keys := make([]Cell, 0, len(cells))
	for c := range cells {
		keys = append(keys, c)
	}
	slices.SortFunc(keys, tlsdata.CompareCells)
	nan := Num(math.NaN())
	for _, c := range keys {
		var flight, gap []float64
		stalled := 0
		for _, m := range cells[c] {
			for _, r := range m.recs {
				if r.ServerHelloNs == nil || r.ServerFlightEndNs == nil || r.ClientFinishedNs == nil {
					continue
				}
				f := float64(*r.ServerFlightEndNs-*r.ServerHelloNs) / 1e6
				g := float64(*r.ClientFinishedNs-*r.ServerFlightEndNs) / 1e6
				flight, gap = append(flight, f), append(gap, g)
				if f >= StallThresholdMs || g >= StallThresholdMs {
					stalled++
				}
			}
		}
		cs := CellStalls{Cell: c, N: len(flight), Stalled: stalled,
			ServerFlightMedianMs: nan, ServerFlightP99Ms: nan, ServerFlightMaxMs: nan, ClientGapP99Ms: nan, ClientGapMaxMs: nan, StalledPct: nan}
		if len(flight) > 0 {
			q := func(x []float64, p float64) Num { v, _ := stats.Quantile(x, p); return Num(v) }
			cs.ServerFlightMedianMs, cs.ServerFlightP99Ms, cs.ServerFlightMaxMs = q(flight, 0.5), q(flight, 0.99), Num(slices.Max(flight))
			cs.ClientGapP99Ms, cs.ClientGapMaxMs = q(gap, 0.99), Num(slices.Max(gap))
			cs.StalledPct = Num(100 * float64(stalled) / float64(len(flight)))
		}
		out.Cells = append(out.Cells, cs)
	}
	return out
}

// attachSocketOptions sets each cell's socket options from meta.json.
func (s *Stalls) attachSocketOptions(so map[string]SocketOptions) {
	for i := range s.Cells {
		if o, ok := so[s.Cells[i].Stack]; ok {
			srv, cli := o.ServerNoDelay, o.ClientNoDelay
			s.Cells[i].ServerNoDelay, s.Cells[i].ClientNoDelay = &srv, &cli
		}
	}
}
