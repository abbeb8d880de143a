package netrun

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/experiments/net/netjoin"
	"pqrepro/internal/atomicfile"
	"pqrepro/internal/repro"
)

// Measurement hygiene (issue #13, section 2): two records that say how far
// the machine, rather than the emulated network, shaped the handshakes.
//
//   - The late-packet record (netdata.LateFile): every packet a link's
//     forwarder wrote more than the spec's late_bound_ms after its due
//     time, with its flow and times, so that the analysis flags the
//     handshakes it touched.
//   - The serial controls (profiles.*.serial_control): series run a second
//     time, alone, after all the others; their rows (netdata.ControlFile,
//     derived like records.csv.gz from netdata.ControlInprocFile and their
//     captures) against the same series' concurrent rows measure what
//     running series concurrently moved.

// linkOptions are the run's link options with the plan's late bound.
func (r *runner) linkOptions() linkemu.Options {
	o := r.cfg.LinkOptions
	o.LateBound = r.plan.LateBound
	return o
}

// lateMeta is measured.late in meta.json.
type lateMeta struct {
	BoundNs  int64          `json:"bound_ns"`
	File     string         `json:"file"`
	Events   int            `json:"events"`
	Dropped  uint64         `json:"dropped"` // beyond linkemu.MaxLateEvents: counted, not kept (should be 0)
	BySeries map[string]int `json:"by_series"`
	Note     string         `json:"note"`
}

// controlMetaItem is one entry of measured.serial_control.
type controlMetaItem struct {
	ID         string `json:"id"`
	Of         string `json:"of"`
	Handshakes int    `json:"handshakes"`
	OK         int    `json:"ok"`
}

// lateEvents converts one series' late writes to rows of the record.
func lateEvents(se Series, scenario, toolchain string, evs []linkemu.LateEvent) []netdata.LateEvent {
	out := make([]netdata.LateEvent, 0, len(evs))
	for _, e := range evs {
		dir := netdata.DirAtoB
		if e.Dir == linkemu.B {
			dir = netdata.DirBtoA
		}
		out = append(out, netdata.LateEvent{Series: se.ID, Scenario: scenario, Round: se.Round, Toolchain: toolchain, Control: se.Control,
			Dir: dir, Proto: e.Proto, SrcPort: e.SrcPort, DstPort: e.DstPort, Bytes: e.Bytes, DueNs: e.Due, WrittenNs: e.Written})
	}
	return out
}

// writeHygiene writes the late-packet record and the serial controls' files
// into the run folder. The record is written when the plan has a bound, the
// files when it has controls; it adds them to files and their summaries to
// measured, and returns the controls' capture joins by series.
func (r *runner) writeHygiene(ctx context.Context, results []seriesResult, ctlRows []netdata.Row, capPaths, files map[string]string, measured map[string]any) (map[string]netjoin.JoinInfo, error) {
	if r.plan.LateBound > 0 {
		var evs []netdata.LateEvent
		lm := lateMeta{BoundNs: int64(r.plan.LateBound), File: netdata.LateFile, BySeries: map[string]int{},
			Note: "packets the link emulator wrote more than bound_ns after their due time, one row each in " + netdata.LateFile + " (datasets/netdata); by_series counts them per series (self-test probes included)"}
		for i, se := range r.est.Series {
			if se.Block {
				// The transfer block (our extension) is not the rounds'
				// hygiene: its bulk packets would swell the record the
				// rounds' flags and counts are read from.
				continue
			}
			res := results[i]
			e := lateEvents(se.Series, r.plan.Scenarios[se.Scenario].Name, res.toolchain, res.late)
			evs = append(evs, e...)
			lm.BySeries[se.ID] = len(e)
			lm.Dropped += res.linkStats.AtoB.LateDropped + res.linkStats.BtoA.LateDropped
		}
		lm.Events = len(evs)
		b, err := netdata.EncodeLate(evs)
		if err != nil {
			return nil, err
		}
		if err := atomicfile.WriteFile(filepath.Join(r.dir, netdata.LateFile), b, 0o644); err != nil {
			return nil, err
		}
		files[netdata.LateFile] = repro.HashBytes(b)
		measured["late"] = lm
	}
	if len(ctlRows) == 0 {
		return nil, nil
	}
	inproc, err := netdata.EncodeInproc(ctlRows)
	if err != nil {
		return nil, err
	}
	recs, joins, err := netjoin.DeriveRows(ctx, inproc, r.plan.Timeout, func(series string) (io.ReadCloser, error) {
		return rederive.OpenFile(capPaths[series], files[netdata.CaptureName(series)])
	})
	if err != nil {
		return nil, fmt.Errorf("serial controls: %w", err)
	}
	for name, b := range map[string][]byte{netdata.ControlInprocFile: inproc, netdata.ControlFile: recs} {
		if err := atomicfile.WriteFile(filepath.Join(r.dir, name), b, 0o644); err != nil {
			return nil, err
		}
		files[name] = repro.HashBytes(b)
	}
	var items []controlMetaItem
	for i, se := range r.est.Series {
		if !se.Control {
			continue
		}
		it := controlMetaItem{ID: se.ID, Of: se.ControlOf, Handshakes: len(results[i].rows)}
		for _, row := range results[i].rows {
			if row.OK {
				it.OK++
			}
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b controlMetaItem) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	measured["serial_control"] = map[string]any{
		"series": items,
		"file":   netdata.ControlFile,
		"note":   "each control is a copy of series <of> (same link seed) run again after every other series, with nothing else running; its rows are in " + netdata.ControlFile + ", not records.csv.gz",
	}
	return joins, nil
}
