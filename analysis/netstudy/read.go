package netstudy

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// Design is measured.design of the run's meta.json (written by
// experiments/netstudy): what was run, in which order.
type Design struct {
	Order     string     `json:"order"`
	Groups    []string   `json:"groups"`
	Rounds    []int      `json:"rounds"`
	CertKey   string     `json:"cert_key"`
	CertChain bool       `json:"cert_chain"`
	Warmup    int        `json:"warmup"`
	TimeoutMs float64    `json:"timeout_ms"`
	Scenarios []Scenario `json:"scenarios"`
	// Toolchains are the Go releases of the run's endpoint builds, the
	// primary first; absent for runs made in process (one toolchain).
	Toolchains []string `json:"toolchains,omitempty"`
}

// LegacyToolchain is the toolchain of rows without a toolchain column:
// runs of before the column ran in process with Go 1.27.3.
const LegacyToolchain = "go1.27.3"

// Primary returns the rows of the design's primary toolchain (all rows
// when the design lists none) and how many rows of other toolchains it
// left out. The study's comparisons are within one toolchain.
func (d *Design) Primary(rows []Row) (kept []Row, others int) {
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

// Scenario is one emulated network as the run recorded it.
type Scenario struct {
	Name       string  `json:"name"`
	RTTms      float64 `json:"rtt_ms"`
	JitterMs   float64 `json:"jitter_ms"`
	LossPct    float64 `json:"loss_pct"`
	RateBps    int64   `json:"rate_bps"`
	QueueBytes int     `json:"queue_bytes"`
}

// meta is the part of meta.json the analysis reads.
type meta struct {
	RunID    string `json:"run_id"`
	Profile  string `json:"profile"`
	Measured struct {
		Design *Design `json:"design"`
	} `json:"measured"`
}

func parseMeta(name string, b []byte) (meta, error) {
	var m meta
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", name, err)
	}
	d := m.Measured.Design
	if d == nil {
		return m, fmt.Errorf("%s: no measured.design: not a Study B run (written by experiments/netstudy)", name)
	}
	var errs []error
	if len(d.Groups) != 2 {
		errs = append(errs, fmt.Errorf("design.groups = %v: the study compares exactly two groups (baseline first)", d.Groups))
	}
	if len(d.Rounds) == 0 {
		errs = append(errs, errors.New("design.rounds: none"))
	}
	if len(d.Scenarios) == 0 {
		errs = append(errs, errors.New("design.scenarios: none"))
	}
	for _, s := range d.Scenarios {
		if s.Name == "" || !(s.RTTms >= 0) {
			errs = append(errs, fmt.Errorf("design.scenarios: %+v is incomplete", s))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return m, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// Row is one handshake attempt of records.csv.gz, as far as the analysis
// uses it.
type Row struct {
	Line     int
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
	// Toolchain is the Go release that ran the handshake (LegacyToolchain
	// for files without the column).
	Toolchain string
	// Late: a late packet touched the handshake (hygiene.go; set by the
	// stage from late.csv.gz, never read from the records).
	Late bool
}

var requiredColumns = []string{"scenario", "round", "group", "seq", "ok", "failure", "ths_ns",
	"frame_bytes_c2s", "frame_bytes_s2c", "payload_bytes_c2s", "payload_bytes_s2c", "retransmissions"}

// ReadRecords parses records.csv.gz (gzip'd CSV with a header; extra
// columns are ignored). name is used in errors.
func ReadRecords(r io.Reader, name string) ([]Row, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return parseCSV(body, name)
}

func parseCSV(body []byte, name string) ([]Row, error) {
	cr := csv.NewReader(bytes.NewReader(body))
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, c := range requiredColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s: header has no column %q", name, c)
		}
	}
	var rows []Row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		row, err := parseRow(rec, col)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		row.Line = line
		rows = append(rows, row)
	}
	return rows, nil
}

func parseRow(rec []string, col map[string]int) (Row, error) {
	get := func(c string) string { return rec[col[c]] }
	r := Row{Scenario: get("scenario"), Group: get("group"), Failure: get("failure"), Toolchain: LegacyToolchain}
	if i, ok := col["toolchain"]; ok {
		if r.Toolchain = rec[i]; r.Toolchain == "" {
			return r, errors.New("empty toolchain")
		}
	}
	var err error
	if r.Round, err = strconv.Atoi(get("round")); err != nil || r.Round < 1 {
		return r, fmt.Errorf("round %q: want a positive integer", get("round"))
	}
	if r.Seq, err = strconv.Atoi(get("seq")); err != nil || r.Seq < 0 {
		return r, fmt.Errorf("seq %q: want a non-negative integer", get("seq"))
	}
	if r.OK, err = strconv.ParseBool(get("ok")); err != nil {
		return r, fmt.Errorf("ok %q: want true or false", get("ok"))
	}
	if r.Scenario == "" || r.Group == "" {
		return r, errors.New("empty scenario or group")
	}
	if !r.OK && r.Failure == "" {
		return r, errors.New("failed attempt without a failure reason")
	}
	num := func(c string) (float64, bool, error) {
		s := get(c)
		if s == "" {
			return 0, false, nil
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return 0, false, fmt.Errorf("%s %q: want a non-negative integer", c, s)
		}
		return float64(v), true, nil
	}
	ths, ok, err := num("ths_ns")
	if err != nil {
		return r, err
	}
	r.HasThs, r.ThsMs = ok, ths/1e6
	if ok && ths == 0 {
		return r, errors.New("ths_ns is 0")
	}
	vals := make([]float64, 4)
	have := 0
	for i, c := range []string{"frame_bytes_c2s", "frame_bytes_s2c", "payload_bytes_c2s", "payload_bytes_s2c"} {
		v, ok, err := num(c)
		if err != nil {
			return r, err
		}
		vals[i] = v
		if ok {
			have++
		}
	}
	if have != 0 && have != 4 {
		return r, errors.New("byte counts partly missing")
	}
	r.HasBytes = have == 4
	r.Frame = [2]float64{vals[0], vals[1]}
	r.Payload = [2]float64{vals[2], vals[3]}
	if s := get("retransmissions"); s != "" {
		if r.Retrans, err = strconv.Atoi(s); err != nil || r.Retrans < 0 {
			return r, fmt.Errorf("retransmissions %q: want a non-negative integer", s)
		}
	}
	if math.IsInf(r.ThsMs, 0) {
		return r, errors.New("ths_ns overflows")
	}
	return r, nil
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
