package tlsstudy

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/tlshost"
	"pqrepro/internal/render"
)

// Renderings of the stall account (stalls.go) and the host's account
// (analysis/tlshost, Account): one table (tab:tls-host, in TableFactors'
// file) with a row per cell and their \newcommand numbers (hostNumbers,
// in NumbersFile).

func yesNo(b *bool) string {
	switch {
	case b == nil:
		return "---"
	case *b:
		return "yes"
	}
	return "no"
}

// hostTable: per cell, the hybrid's increase minus ML-KEM-1024's beside
// the P-384 prediction, and the server flight's timing with the stack's
// TCP_NODELAY.
func hostTable(r *Results) (string, error) {
	h, s := r.Host, r.Stalls
	t := render.Table{
		Label: "tab:tls-host",
		Caption: `Study~A, the host and the sockets per cell: the hybrid's increase minus ML-KEM-1024's (median over rounds, ms, 95\,\% cluster-bootstrap interval) beside the P-384 work the hybrid adds by this host's \texttt{openssl speed} ` +
			`(predicted $= 3 \times$ one P-384 ECDH operation with a direct key share: the server's key generation and both derivations, the client's first key generation preceding the ClientHello; $4 \times$ after a HelloRetryRequest, which adds the client's second key generation), and the server flight (ServerHello to its last segment) with the share of handshakes holding a gap of at least ` +
			render.Fixed(StallThresholdMs, 0) + `\,ms (a Nagle or delayed-ACK stall; Linux's delayed-ACK timer is at least ` + render.Fixed(LinuxDelackMinMs, 0) + `\,ms) and whether the server sets TCP\_NODELAY. $\star$: the primary cell.`,
		Align:  "lrrrrrc",
		Header: []string{"Cell", "Hybrid $-$ KEM (ms)", "Predicted", "Ratio", "Flight p99 (ms)", "Stalled", "Server NODELAY"},
	}
	type row struct {
		host  *tlshost.AccountCell
		stall *CellStalls
	}
	rows := map[Cell]*row{}
	var order []Cell
	get := func(c Cell) *row {
		if rows[c] == nil {
			rows[c] = &row{}
			order = append(order, c)
		}
		return rows[c]
	}
	if s != nil {
		for i := range s.Cells {
			get(s.Cells[i].Cell).stall = &s.Cells[i]
		}
	}
	if h != nil {
		for i := range h.Cells {
			get(h.Cells[i].Cell).host = &h.Cells[i]
		}
	}
	for _, c := range order {
		rw := rows[c]
		label := render.Escape(cellLabel(c))
		if r.Primary.Judgeable() && c == r.Primary.Judged {
			label = `$\star$ ` + label
		}
		cells := []string{label, "---", "---", "---", "---", "---", "---"}
		if e := rw.host; e != nil {
			cells[1] = signed(float64(e.ObservedMs), 3) + " " + ciCell(e.Lower, e.Upper, 3)
			if e.Applies {
				cells[2], cells[3] = signed(float64(e.PredictedMs), 3), render.Fixed(float64(e.Ratio), 2)
			}
		}
		if st := rw.stall; st != nil {
			cells[4] = render.Fixed(float64(st.ServerFlightP99Ms), 3)
			cells[5] = share(st.StalledPct)
			cells[6] = yesNo(st.ServerNoDelay)
		}
		t.Rows = append(t.Rows, cells)
	}
	var notes []string
	if h != nil && h.Note != "" {
		notes = append(notes, render.Escape(h.Note)+".")
	} else if h != nil {
		notes = append(notes, fmt.Sprintf(`P-384 ECDH %s\,ms an operation (mean of before and after the handshakes; drift %s); ML-KEM-1024 predicted %s\,ms over X25519 with a direct key share, %s\,ms after an HRR. Go's cells use Go's P-384: no prediction. OpenSSL's CPU view: \texttt{%s}.`,
			render.Fixed(float64(h.P384Ms), 3), pctOrDash(h.P384DriftPct), signed(float64(h.KemPredictedMs), 3), signed(float64(h.KemPredictedHRRMs), 3), strings.ReplaceAll(render.Escape(h.CPUSettings), ":", `:\allowbreak{}`)))
	}
	if len(order) == 0 {
		notes = append(notes, "No cell has packet timing.")
	}
	t.Notes = strings.Join(notes, " ")
	return t.Latex()
}

// share is a percentage without a sign, e.g. "0.0\,\%", or "---".
func share(x Num) string {
	if s := render.Fixed(float64(x), 1); s != "---" {
		return s + `\,\%`
	}
	return "---"
}

func pctOrDash(x Num) string {
	if s := render.Fixed(float64(x), 1); s != "---" {
		return signed(float64(x), 1) + `\,\%`
	}
	return "---"
}

// hostNumbers sets the host's and the sockets' macros: the P-384 speed
// and its drift, the predictions (direct and HRR), the judged cell's
// observed hybrid minus ML-KEM-1024 with its interval and ratio, the
// range of the ratio over the OpenSSL cells of each key-share mode, the
// published hybrid minus ML-KEM-1024 and its ratio to this host's
// direct-share P-384 work, the stall threshold, the
// judged cell's flight p99 and stalled share, the largest stalled share
// of any cell and the cell it is in.
func hostNumbers(r *Results, setOnce func(name, v string)) {
	vals := map[string]string{}
	set := func(name, v string) { vals[name] = v }
	defer func() {
		for _, k := range slices.Sorted(maps.Keys(vals)) {
			setOnce(k, vals[k])
		}
	}()
	h := r.Host
	for _, k := range []string{"HostEcdhMs", "HostEcdhDriftPct", "HostHybridPredictedMs", "HostHybridPredictedHRRMs", "HostKemPredictedMs", "HostKemPredictedHRRMs",
		"HostHybridObservedMs", "HostHybridLowMs", "HostHybridHighMs", "HostHybridRatio", "HostKemObservedMs",
		"HostRatioDirectMin", "HostRatioDirectMax", "HostRatioHRRMin", "HostRatioHRRMax", "HostPubHybridMinusKemRatio"} {
		set(k, "---")
	}
	set("HostPubPThreeEightFourReading", "---")
	set("HostOpsDirect", fmt.Sprint(tlshost.P384Ops(false)))
	set("HostOpsHRR", fmt.Sprint(tlshost.P384Ops(true)))
	pubHyb, pubKem := Published.Increases["hybrid"].IncreaseMs, Published.Increases["pq-kem"].IncreaseMs
	set("PubHybridMs", render.Fixed(pubHyb, 3))
	set("PubKemMs", render.Fixed(pubKem, 3))
	set("PubHybridMinusKemMs", render.Fixed(pubHyb-pubKem, 3))
	set("HostNote", "measured")
	if h == nil {
		set("HostNote", "no host account in these results")
	} else if h.Note != "" {
		set("HostNote", render.Escape(h.Note))
	} else {
		set("HostEcdhMs", render.Fixed(float64(h.P384Ms), 3))
		set("HostEcdhDriftPct", pctOrDash(h.P384DriftPct))
		set("HostHybridPredictedMs", signed(float64(h.HybridPredictedMs), 3))
		set("HostHybridPredictedHRRMs", signed(float64(h.HybridPredictedHRRMs), 3))
		set("HostKemPredictedMs", signed(float64(h.KemPredictedMs), 3))
		set("HostKemPredictedHRRMs", signed(float64(h.KemPredictedHRRMs), 3))
		if h.HybridPredictedMs > 0 {
			ratio := (pubHyb - pubKem) / float64(h.HybridPredictedMs)
			set("HostPubHybridMinusKemRatio", render.Fixed(ratio, 2))
			set("HostPubPThreeEightFourReading", pubP384Reading(ratio))
		}
		for mode, names := range map[string][2]string{KeyShareDirect: {"HostRatioDirectMin", "HostRatioDirectMax"}, KeyShareHRR: {"HostRatioHRRMin", "HostRatioHRRMax"}} {
			var rs []float64
			for _, c := range h.Cells {
				if c.Applies && c.KeyShare == mode && !math.IsNaN(float64(c.Ratio)) {
					rs = append(rs, float64(c.Ratio))
				}
			}
			if len(rs) > 0 {
				set(names[0], render.Fixed(slices.Min(rs), 2))
				set(names[1], render.Fixed(slices.Max(rs), 2))
			}
		}
		for _, c := range h.Cells {
			if c.Cell == r.Primary.Judged {
				set("HostHybridObservedMs", signed(float64(c.ObservedMs), 3))
				set("HostHybridLowMs", signed(float64(c.Lower), 3))
				set("HostHybridHighMs", signed(float64(c.Upper), 3))
				set("HostHybridRatio", render.Fixed(float64(c.Ratio), 2))
				set("HostKemObservedMs", signed(float64(c.KemIncreaseMs), 3))
			}
		}
	}
	set("StallThresholdMs", render.Fixed(StallThresholdMs, 0))
	set("StallTimerMs", render.Fixed(LinuxDelackMinMs, 0))
	for _, k := range []string{"StallPrimaryFlightPctlMs", "StallPrimaryPct", "StallPrimaryServerNoDelay", "StallMaxPct", "StallMaxCell"} {
		set(k, "---")
	}
	set("StallCellsWith", "0")
	if r.Stalls == nil {
		return
	}
	with, best := 0, -1
	for i, c := range r.Stalls.Cells {
		if c.Stalled > 0 {
			with++
		}
		if best < 0 || c.StalledPct > r.Stalls.Cells[best].StalledPct {
			best = i
		}
		if c.Cell == r.Primary.Judged {
			set("StallPrimaryFlightPctlMs", render.Fixed(float64(c.ServerFlightP99Ms), 3))
			set("StallPrimaryPct", share(c.StalledPct))
			set("StallPrimaryServerNoDelay", yesNo(c.ServerNoDelay))
		}
	}
	set("StallCellsWith", fmt.Sprint(with))
	if best >= 0 {
		set("StallMaxPct", share(r.Stalls.Cells[best].StalledPct))
		set("StallMaxCell", render.Escape(cellLabel(r.Stalls.Cells[best].Cell)))
	}
}

// sameOrder is the factor either way within which the original's P-384
// work counts as of the order of this host's.
const sameOrder = 1.5

// pubP384Reading is the paper's sentence on the published hybrid minus
// ML-KEM-1024 against this host's direct-share P-384 work (ratio): of the
// order of ours within a factor sameOrder either way, else what a CPU of
// the original's would have to be.
func pubP384Reading(ratio float64) string {
	if ratio >= 1/sameOrder && ratio <= sameOrder {
		return "The original's P-384 cost is thus of the order of ours, and the part of its hybrid increase that ours lacks is ML-KEM-1024's published increase carried along, not the CPU."
	}
	slower := "slower"
	if ratio < 1 {
		slower = "faster"
	}
	return fmt.Sprintf("The original's P-384 work would thus take %s times as long as this host's: a CPU that much %s than ours, which the original does not report, would account for it; the rest of the hybrid's increase is ML-KEM-1024's published increase carried along.", render.Fixed(ratio, 2), slower)
}
