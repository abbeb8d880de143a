package netstudy

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pqrepro/datasets/netdata"
)

// TestFlagTouched: a late TCP packet of a handshake's flow touches it when
// it was held across the window (due <= end, written >= start), both ends
// inclusive; other flows, other series, UDP and port-less rows never.
func TestFlagTouched(t *testing.T) {
	const s = "wan-1000-X25519-go1.24.4"
	ws := []window{
		{series: s, port: 50000, start: 1000, end: 2000},
		{series: s, port: 50001, start: 3000, end: 4000},
		{series: s, port: 50002, start: 5000, end: 6000},
		{series: s, port: 50003, start: 7000, end: 8000},
		{series: s, port: 0, start: 0, end: 1 << 62}, // no client: never
		{series: s, port: 50005, start: 9000, end: 9500},
		{series: s + "-alone", port: 50000, start: 1000, end: 2000},
	}
	ev := func(series string, dir string, port uint16, due, written int64) netdata.LateEvent {
		e := netdata.LateEvent{Series: series, Scenario: "wan", Round: 1000, Dir: dir, Proto: 6, Bytes: 60, DueNs: due, WrittenNs: written}
		if dir == netdata.DirAtoB {
			e.SrcPort, e.DstPort = port, 4433
		} else {
			e.SrcPort, e.DstPort = 4433, port
		}
		return e
	}
	evs := []netdata.LateEvent{
		ev(s, netdata.DirBtoA, 50000, 2000, 2500),          // due exactly at the end: touched
		ev(s, netdata.DirAtoB, 50001, 2000, 3000),          // written exactly at the start: touched
		ev(s, netdata.DirAtoB, 50002, 6001, 7000),          // due just after the end: not
		ev(s, netdata.DirBtoA, 50002, 3000, 4999),          // written just before the start: not
		ev(s, netdata.DirAtoB, 50099, 7000, 7500),          // another flow: not
		ev("far-1000", netdata.DirAtoB, 50003, 7000, 7500), // another series: not
		ev(s, netdata.DirAtoB, 50005, 8000, 10000),         // held across the whole window: touched
	}
	udp := ev(s, netdata.DirAtoB, 50003, 7000, 7500)
	udp.Proto = 17 // a self-test probe on the same port: not
	evs = append(evs, udp)
	flags, touching := flagTouched(ws, evs)
	want := []bool{true, true, false, false, false, true, false}
	if !slices.Equal(flags, want) {
		t.Errorf("flags %v, want %v", flags, want)
	}
	if touching != 3 {
		t.Errorf("%d events touched a handshake, want 3", touching)
	}
	if f, n := flagTouched(ws, nil); slices.Contains(f, true) || n != 0 {
		t.Errorf("no events: flags %v, touching %d", f, n)
	}
	// One event can touch two handshakes of the flow (a reused port).
	two := []window{{series: s, port: 1, start: 0, end: 10}, {series: s, port: 1, start: 10, end: 20}}
	if f, n := flagTouched(two, []netdata.LateEvent{ev(s, netdata.DirAtoB, 1, 5, 15)}); !f[0] || !f[1] || n != 1 {
		t.Errorf("an event across two windows: flags %v, touching %d", f, n)
	}
}

func TestWindows(t *testing.T) {
	ws := windows([]inprocRef{{series: "a", port: 7, start: 100, clientNs: 50}, {series: "a", port: 8, start: 200}}, 1000)
	if ws[0].end != 150 || ws[1].end != 1200 {
		t.Errorf("windows %+v: want end = start + client_ns, or + the timeout without one", ws)
	}
}

func gzCSV(t testing.TB, rows [][]string) []byte {
	t.Helper()
	var c bytes.Buffer
	w := csv.NewWriter(&c)
	w.WriteAll(rows)
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(c.Bytes())
	zw.Close()
	return b.Bytes()
}

func TestReadInprocRefs(t *testing.T) {
	head := []string{"series", "scenario", "round", "group", "seq", "index", "start_unix_ns", "ok", "failure", "client", "server", "client_ns", "server_ns"}
	good := []string{"wan-10-X25519", "wan", "10", "X25519", "3", "3", "1700", "true", "", "10.77.0.1:50123", "10.77.0.2:4433", "900", "800"}
	refs, err := readInprocRefs(bytes.NewReader(gzCSV(t, [][]string{head, good})), "inproc.csv.gz")
	if err != nil || len(refs) != 1 || refs[0].port != 50123 || refs[0].start != 1700 || refs[0].clientNs != 900 || refs[0].seq != 3 {
		t.Fatalf("refs %+v, %v", refs, err)
	}
	failed := slices.Clone(good)
	failed[9], failed[11] = "", ""
	if refs, err := readInprocRefs(bytes.NewReader(gzCSV(t, [][]string{head, failed})), "x"); err != nil || refs[0].port != 0 || refs[0].clientNs != 0 {
		t.Errorf("a failed attempt without a client: %+v, %v", refs, err)
	}
	for name, rows := range map[string][][]string{
		"no series column": {head[1:], good[1:]},
		"bad client":       {head, append(slices.Clone(good[:9]), append([]string{"nowhere"}, good[10:]...)...)},
		"empty series":     {head, append([]string{""}, good[1:]...)},
		"negative start":   {head, append(slices.Clone(good[:6]), append([]string{"-5"}, good[7:]...)...)},
	} {
		if _, err := readInprocRefs(bytes.NewReader(gzCSV(t, rows)), "inproc.csv.gz"); err == nil || !strings.Contains(err.Error(), "inproc.csv.gz") {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

func TestMarkLateChecksAlignment(t *testing.T) {
	d := synthDesign()
	rows := []Row{{Scenario: "lan", Round: 40, Group: "X25519", Seq: 0}}
	if _, err := markLate(&d, rows, nil, nil); err == nil {
		t.Error("inproc with fewer rows accepted")
	}
	refs := []inprocRef{{series: "lan-40-X25519", scenario: "lan", round: 40, group: "X25519MLKEM768", seq: 0, port: 1, start: 10, clientNs: 10}}
	if _, err := markLate(&d, rows, refs, nil); err == nil || !strings.Contains(err.Error(), "not the same attempt") {
		t.Errorf("misaligned rows: %v", err)
	}
	refs[0].group = "X25519"
	ev := netdata.LateEvent{Series: "lan-40-X25519", Dir: netdata.DirAtoB, Proto: 6, SrcPort: 1, DueNs: 15, WrittenNs: 30}
	if n, err := markLate(&d, rows, refs, []netdata.LateEvent{ev}); err != nil || n != 1 || !rows[0].Late {
		t.Errorf("markLate: %d, %v, late %v", n, err, rows[0].Late)
	}
}

// TestControlShift: a control series whose alone run is the concurrent
// one minus 0.2 ms has a shift of +0.2 ms, which exceeds a smallest
// reported difference of 0.1 ms but not one of 0.3 ms.
func TestControlShift(t *testing.T) {
	mk := func(g string, base float64, n int) []Row {
		var rs []Row
		for i := range n {
			rs = append(rs, Row{Scenario: "wan", Round: 50, Group: g, Seq: i, OK: true, HasThs: true, HasBytes: true, ThsMs: base + float64(i%10)*0.01, Toolchain: "go1.24.4"})
		}
		return rs
	}
	conc := append(mk("X25519", 32, 50), mk("X25519MLKEM768", 33, 50)...)
	alone := append(mk("X25519", 31.8, 50), mk("X25519MLKEM768", 32.8, 50)...)
	for _, tc := range []struct {
		smallest float64
		exceeds  bool
	}{{0.1, true}, {0.3, false}} {
		res := &Results{Design: Design{Groups: []string{"X25519", "X25519MLKEM768"}, Scenarios: []Scenario{{Name: "wan"}}},
			Comparisons: []Comparison{{Scenario: "wan", Round: 50, DiffMs: Num(tc.smallest)}, {Scenario: "wan", Round: 100, DiffMs: 5}}}
		c, err := control(res, conc, hygieneInput{hasControls: true, control: alone}, Params{}.WithDefaults())
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Series) != 2 || math.Abs(float64(c.Series[0].ShiftMs)-0.2) > 1e-9 || math.Abs(float64(c.Series[0].HLMs)-0.2) > 1e-9 {
			t.Fatalf("control series %+v: want two with shift 0.2", c.Series)
		}
		if c.Exceeds != tc.exceeds || float64(c.SmallestDiffMs) != tc.smallest || c.SmallestAt != "wan/50" {
			t.Errorf("smallest %v: exceeds %v (want %v), smallest %v at %s", tc.smallest, c.Exceeds, tc.exceeds, c.SmallestDiffMs, c.SmallestAt)
		}
		if len(c.Diffs) != 1 || math.Abs(float64(c.Diffs[0].ShiftMs)) > 1e-9 {
			t.Errorf("diffs %+v: want one, unchanged", c.Diffs)
		}
	}
	// A control with no concurrent counterpart is an error.
	res := &Results{Design: Design{Groups: []string{"X25519", "X25519MLKEM768"}}}
	if _, err := control(res, nil, hygieneInput{hasControls: true, control: alone}, Params{}.WithDefaults()); err == nil {
		t.Error("a control without its concurrent series accepted")
	}
	// No controls: a note, no error.
	if c, err := control(res, conc, hygieneInput{}, Params{}.WithDefaults()); err != nil || c.Note == "" || len(c.Series) != 0 {
		t.Errorf("no controls: %+v, %v", c, err)
	}
}

// writeHygieneFiles adds the hygiene files of a run to the synthetic run
// folder dir, derived from its records' rows: inproc.csv.gz (series
// scenario-round-group, the rows' start, client and client_ns);
// late.csv.gz with, on every 9th attempt's flow, one server packet held
// 2 ms inside its window, and one self-test probe; and wan's round 40 of
// both groups as serial controls whose latencies are the concurrent ones
// minus 0.05 ms.
func writeHygieneFiles(t testing.TB, dir string, rows [][]string) {
	t.Helper()
	inHead := []string{"series", "scenario", "round", "group", "seq", "index", "start_unix_ns", "ok", "failure", "client", "server", "client_ns", "server_ns"}
	in := [][]string{inHead}
	ctl, ctlIn := [][]string{netdata.ColumnsV1}, [][]string{inHead}
	var evs []netdata.LateEvent
	for i, r := range rows {
		series := r[0] + "-" + r[1] + "-" + r[2]
		ir := []string{series, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], "10.77.0.2:4433", r[20], r[21]}
		in = append(in, ir)
		if i%9 == 0 && r[8] != "" && r[20] != "" {
			start, _ := strconv.ParseInt(r[5], 10, 64)
			_, p, _ := strings.Cut(r[8], ":")
			port, _ := strconv.Atoi(p)
			rd, _ := strconv.Atoi(r[1])
			evs = append(evs, netdata.LateEvent{Series: series, Scenario: r[0], Round: rd, Dir: netdata.DirBtoA, Proto: 6, SrcPort: 4433, DstPort: uint16(port), Bytes: 1200, DueNs: start + 100000, WrittenNs: start + 2100000})
		}
		if r[0] == "wan" && r[1] == "40" {
			c := slices.Clone(r)
			if c[9] != "" {
				v, _ := strconv.ParseInt(c[9], 10, 64)
				c[9] = strconv.FormatInt(v-50000, 10)
			}
			ctl = append(ctl, c)
			ci := slices.Clone(ir)
			ci[0] += "-alone"
			ctlIn = append(ctlIn, ci)
		}
	}
	evs = append(evs, netdata.LateEvent{Series: "lan-40-X25519", Scenario: "lan", Round: 40, Dir: netdata.DirAtoB, Proto: 17, SrcPort: 40001, DstPort: 9, Bytes: 92, DueNs: 1, WrittenNs: 2000000})
	late, err := netdata.EncodeLate(evs)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"inproc.csv.gz": gzCSV(t, in), netdata.LateFile: late, netdata.ControlFile: gzCSV(t, ctl), netdata.ControlInprocFile: gzCSV(t, ctlIn)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStagesWithoutHygieneFiles: a run recorded before the late-packet
// record and the controls still builds; the hygiene says so, flags
// nothing, and the paper's macros and tables are all there. A run whose
// meta.json names a bound but has no late.csv.gz is refused.
func TestStagesWithoutHygieneFiles(t *testing.T) {
	d := synthDesign()
	root := makeTree(t, d, synthRows(d))
	dir := filepath.Join(root, filepath.FromSlash(testRunDir))
	for _, name := range []string{"inproc.csv.gz", netdata.LateFile, netdata.ControlFile, netdata.ControlInprocFile} {
		os.Remove(filepath.Join(dir, name))
	}
	if err := build(t, root); err == nil || !strings.Contains(err.Error(), "names a late bound but the run has no late.csv.gz") {
		t.Fatalf("bound without the record: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "meta.json"))
	b = bytes.Replace(b, []byte(`"late":{"bound_ns":1000000},`), nil, 1)
	os.WriteFile(filepath.Join(dir, "meta.json"), b, 0o644)
	if err := build(t, root); err != nil {
		t.Fatal(err)
	}
	rb, _ := os.ReadFile(filepath.Join(root, ResultsFile))
	var res Results
	if err := json.Unmarshal(rb, &res); err != nil {
		t.Fatal(err)
	}
	h := res.Hygiene
	if h == nil || h.Note == "" || h.Flagged != 0 || h.Control == nil || len(h.Control.Series) != 0 || len(h.VerdictChanges) != 0 {
		t.Errorf("hygiene of a run without the records: %+v", h)
	}
	nums, _ := os.ReadFile(filepath.Join(root, NumbersFile))
	for _, m := range []string{`\NetLateRecorded}{0}`, `\NetControlRecorded}{0}`, `\NetFlagged}{0}`, `\NetParallelSeries}{6}`} {
		if !bytes.Contains(nums, []byte(m)) {
			t.Errorf("numbers lack %s", m)
		}
	}
	tex, _ := os.ReadFile(filepath.Join(root, TableHygiene))
	if !bytes.Contains(tex, []byte("tab:net-late")) || !bytes.Contains(tex, []byte("no serial controls")) {
		t.Errorf("hygiene tables of a run without the records:\n%s", tex)
	}
}
