package netstudy

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"pqrepro/datasets/netdata"
)

// Design and Scenario are Study B's measured.design in meta.json
// (datasets/netdata); results/net.json repeats the design.
type (
	Design   = netdata.Design
	Scenario = netdata.Scenario
)

// primary returns the rows of the design's primary toolchain (all rows
// when the design lists none) and how many rows of other toolchains it
// left out. The study's comparisons are within one toolchain.
func primary(d *Design, rows []Row) (kept []Row, others int) {
	if len(d.Toolchains) == 0 {
		return rows, 0
	}
	for _, r := range rows {
		if r.Toolchain == d.Toolchains[0] {
			kept = append(kept, r)
		} else {
			others++
		}
	}
	return kept, others
}

// Row is one handshake attempt of records.csv.gz (a netdata.Row), as
// far as the analysis uses it: times in milliseconds, byte counts as
// float64.
type Row struct {
	Line     int // in records.csv.gz, for messages
	Scenario string
	Round    int
	Group    string
	Seq      int
	OK       bool
	Failure  string
	HasThs   bool
	ThsMs    float64
	HasBytes bool
	Frame    [2]float64 // client->server, server->client
	Payload  [2]float64
	Retrans  int
	// Toolchain is the Go release that ran the handshake
	// (netdata.LegacyToolchain for files without the column).
	Toolchain string
	// Late: a late packet touched the handshake (hygiene.go; set by the
	// stage from late.csv.gz, never read from the records).
	Late bool
}

// ReadRecords reads records.csv.gz with netdata.ReadRecords (name is
// used in errors) and returns the analysis' view of its rows.
func ReadRecords(r io.Reader, name string) ([]Row, error) {
	recs, err := netdata.ReadRecords(r, name)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, len(recs))
	for i, rec := range recs {
		rows[i] = fromRecord(rec, i+2)
	}
	return rows, nil
}

// fromRecord is the analysis' view of rec, found at line of records.csv.gz.
func fromRecord(rec netdata.Row, line int) Row {
	r := Row{Line: line, Scenario: rec.Scenario, Round: rec.Round, Group: rec.Group, Seq: rec.Seq,
		OK: rec.OK, Failure: rec.Failure, Toolchain: rec.ToolchainName()}
	if c := rec.Cap; c != nil {
		if c.ThsNs != nil {
			r.HasThs, r.ThsMs = true, float64(*c.ThsNs)/1e6
		}
		r.HasBytes = true
		r.Frame = [2]float64{float64(c.FrameBytesC2S), float64(c.FrameBytesS2C)}
		r.Payload = [2]float64{float64(c.PayloadBytesC2S), float64(c.PayloadBytesS2C)}
		r.Retrans = c.Retransmissions
	}
	return r
}

// checkRows validates the rows against the design: every row's scenario,
// round and group must be declared, and every (scenario, round, group)
// must have rows and successful handshakes with a latency.
func checkRows(d *Design, rows []Row) error {
	var errs []error
	scen := map[string]bool{}
	for _, s := range d.Scenarios {
		scen[s.Name] = true
	}
	type key struct {
		s, g string
		r    int
	}
	okN := map[key]int{}
	allN := map[key]int{}
	for _, r := range rows {
		var bad []string
		if !scen[r.Scenario] {
			bad = append(bad, fmt.Sprintf("scenario %q is not one of the run's scenarios", r.Scenario))
		}
		if !slices.Contains(d.Rounds, r.Round) {
			bad = append(bad, fmt.Sprintf("round %d is not one of the run's rounds %v", r.Round, d.Rounds))
		}
		if !slices.Contains(d.Groups, r.Group) {
			bad = append(bad, fmt.Sprintf("group %q is not one of the run's groups %v", r.Group, d.Groups))
		}
		if len(bad) > 0 {
			errs = append(errs, fmt.Errorf("line %d: %v", r.Line, bad))
			if len(errs) >= 10 {
				errs = append(errs, errors.New("(more lines not shown)"))
				return errors.Join(errs...)
			}
			continue
		}
		k := key{r.Scenario, r.Group, r.Round}
		allN[k]++
		if r.OK && r.HasThs && r.HasBytes {
			okN[k]++
		}
	}
	for _, s := range d.Scenarios {
		for _, rd := range d.Rounds {
			for _, g := range d.Groups {
				k := key{s.Name, g, rd}
				switch {
				case allN[k] == 0:
					errs = append(errs, fmt.Errorf("scenario %s round %d group %s: no rows (empty round)", s.Name, rd, g))
				case okN[k] < 2:
					errs = append(errs, fmt.Errorf("scenario %s round %d group %s: %d successful handshakes with a captured latency, need at least 2 to compare", s.Name, rd, g, okN[k]))
				}
			}
		}
	}
	return errors.Join(errs...)
}
