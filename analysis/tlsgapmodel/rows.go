package tlsgapmodel

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"pqrepro/analysis/gapmodel"
	"pqrepro/analysis/stats"
	"pqrepro/analysis/tlshost"
	"pqrepro/analysis/tlsstudy"
	"pqrepro/datasets/tlsdata"
)

// Attach turns the run's emulated-path cells into the gap model's rows.
//
// Its rows (tlsstudy.Results.GapModelRows) are one per delay level, client group list,
// chain and paper configuration. A row's Ths is the cell's per-round
// median Ths; its round trips the median of the measured connections'
// (counted from the capture); its RTT the link's self-tested median RTT;
// its CPU the host's predicted cryptographic time (tlshost.ConfigCPUMs: 3 P-384
// operations with a direct key share, 4 after a HelloRetryRequest, one
// more verification with a CA in the chain) from meta.json's
// host_crypto. A run without emulated-path cells gets no rows, and the
// gap model's outputs say "not measured in this run". emulated are the
// cells' samples from tlsstudy.AnalyzeRun, passed here rather than kept
// in res: results decoded from JSON have none.
func Attach(res *tlsstudy.Results, emulated []tlsstudy.EmulatedSample, p tlsstudy.Params, m tlsstudy.RunMeta) error {
	rows, gaps, err := rowsOf(emulated, p, tlshost.MsPerOp(m.HostCrypto))
	if err != nil {
		return fmt.Errorf("gap model: %w", err)
	}
	var missing map[string]string
	if len(rows) > 0 {
		_, missing = givenDefinitions(gaps)
		if len(missing) == 0 {
			missing = nil
		}
	}
	if _, err := fitAll(rows, missing); err != nil {
		return err // before results.json: a bad fit fails the analysis
	}
	res.GapModelRows, res.GapModelMissing = rows, missing
	return nil
}

// rowsOf builds the rows of emulated, sorted, and what each sample's
// records lack of the Ths definitions (in emulated's order); msPerOp is
// tlshost.MsPerOp's.
func rowsOf(emulated []tlsstudy.EmulatedSample, p tlsstudy.Params, msPerOp map[string]float64) ([]gapmodel.Row, []rowWithGaps, error) {
	if len(emulated) == 0 {
		return nil, nil, nil
	}
	if msPerOp == nil {
		return nil, nil, fmt.Errorf("the run has emulated-path cells but its meta.json has no measured.host_crypto: the model's CPU term needs the host's `openssl speed`; record the run with the OpenSSL build")
	}
	var rows []gapmodel.Row
	var gaps []rowWithGaps
	for _, m := range emulated {
		c, id := m.Cell, m.Config
		delay, _ := tlsdata.ParseEmulatedPath(c.Path)
		if len(m.Records) == 0 {
			continue
		}
		base := tlsdata.ConfigID{CertKey: m.ID.CertKey, Group: m.ID.Group}.ID()
		k := slices.Index(p.Paper, base)
		if k < 0 {
			return nil, nil, fmt.Errorf("emulated cell %s on %s is none of the paper's configurations %v", id, c.Path, p.Paper)
		}
		row := gapmodel.Row{OneWayDelayMs: delay, Groups: m.ID.GroupsName(), Chain: "leaf", Role: tlsstudy.Roles[k]}
		chainVerifies := 0
		if m.ID.Chain {
			row.Chain, chainVerifies = "leaf+ca", 1
		}
		var rts, rtts, bytes []float64
		hrr := 0
		for _, r := range m.Records {
			bytes = append(bytes, float64(r.TCPPayloadBytesS2C))
			if r.RoundTrips == nil || r.LinkRTTNs == nil {
				return nil, nil, fmt.Errorf("%s on %s seq %d: round_trips or link_rtt_ns missing: the capture could not count its round trips; record a new run", id, c.Path, r.Seq)
			}
			rts, rtts = append(rts, float64(*r.RoundTrips)), append(rtts, float64(*r.LinkRTTNs)/1e6)
			if r.HRR {
				hrr++
			}
		}
		row.RoundTrips, _ = stats.Median(rts)
		row.ServerBytes, _ = stats.Median(bytes)
		row.RTTMs, _ = stats.Median(rtts)
		row.HRRShare = float64(hrr) / float64(len(m.Records))
		cpu, err := tlshost.ConfigCPUMs(msPerOp, m.ID.CertKey, m.ID.Group, hrr > 0, chainVerifies)
		if err != nil {
			return nil, nil, fmt.Errorf("%s on %s: %w", id, c.Path, err)
		}
		row.CPUMs = cpu
		if row.SignMs, err = tlshost.SignMs(msPerOp, m.ID.CertKey); err != nil {
			return nil, nil, fmt.Errorf("%s on %s: %w", id, c.Path, err)
		}
		row.RoundThsMs = slices.Clone(m.RoundThsMs) // padded below: not the sample's
		g := rowWithGaps{label: row.Label(), serverless: !slices.ContainsFunc(m.Records, func(r *tlsdata.Record) bool { return r.SrvClientHelloNs != nil })}
		row.ThsByDefMs, g.missing = thsByDefinition(m.Records, m.Rounds)
		rows = append(rows, row)
		gaps = append(gaps, g)
	}
	n := 0
	for _, r := range rows {
		n = max(n, len(r.RoundThsMs))
	}
	for i := range rows {
		// A cell with no block in the last rounds has fewer; the model
		// refuses rows whose rounds differ, and a NaN round (no block).
		for len(rows[i].RoundThsMs) < n {
			rows[i].RoundThsMs = append(rows[i].RoundThsMs, math.NaN())
		}
	}
	slices.SortFunc(rows, func(a, b gapmodel.Row) int {
		return cmp.Or(cmp.Compare(a.OneWayDelayMs, b.OneWayDelayMs), cmp.Compare(a.Groups, b.Groups), cmp.Compare(a.Chain, b.Chain),
			cmp.Compare(slices.Index(tlsstudy.Roles, a.Role), slices.Index(tlsstudy.Roles, b.Role)))
	})
	return rows, gaps, nil
}
