package netrun

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/internal/provenance"
)

// TestControlSeriesPlan: the serial controls are copies of the named
// series (same seed, offset and groups), marked Control and Exclusive,
// named <id>-alone, dispatched after every other series, and counted in
// the estimate.
func TestControlSeriesPlan(t *testing.T) {
	p := filepath.Join(t.TempDir(), "net.toml")
	text := strings.Replace(twoScenarioSpec(4, "[10, 20]"), "rounds = [10, 20]", "rounds = [10, 20]\nserial_control = [\"tiny2-20-X25519MLKEM768\", \"tiny-10-X25519\"]", 1)
	os.WriteFile(p, []byte(text), 0o644)
	s, err := LoadSpec(p)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := s.Plan("test")
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := plan.ControlSeries()
	if err != nil {
		t.Fatal(err)
	}
	all := plan.Series()
	if len(ctl) != 2 || ctl[0].ID != "tiny2-20-X25519MLKEM768-alone" || ctl[1].ID != "tiny-10-X25519-alone" {
		t.Fatalf("controls %+v", ctl)
	}
	for _, c := range ctl {
		k := slices.IndexFunc(all, func(s Series) bool { return s.ID == c.ControlOf })
		if k < 0 {
			t.Fatalf("%s: ControlOf %q is no series", c.ID, c.ControlOf)
		}
		o := all[k]
		if !c.Control || !c.Exclusive || c.Link != o.Link || c.Offset != o.Offset || c.Round != o.Round || !slices.Equal(c.Groups, o.Groups) || o.Control {
			t.Errorf("%s: %+v is not a control copy of %+v", c.ID, c, o)
		}
	}
	e, err := Estimate(s, "test")
	if err != nil {
		t.Fatal(err)
	}
	if want := plan.Handshakes() + 20 + 10; e.Handshakes != want || len(e.Series) != len(all)+2 {
		t.Errorf("estimate: %d handshakes in %d series, want %d in %d", e.Handshakes, len(e.Series), want, len(all)+2)
	}
	var order []string
	for _, i := range e.Order {
		order = append(order, e.Series[i].ID)
	}
	if got := order[len(order)-2:]; !slices.Equal(got, []string{"tiny2-20-X25519MLKEM768-alone", "tiny-10-X25519-alone"}) {
		t.Errorf("dispatch order ends %v: want the controls last, in the spec's order", got)
	}
	// Each control starts when everything before it has ended.
	for _, i := range e.Order[len(e.Order)-2:] {
		for j, o := range e.Series {
			if j != i && o.Start < e.Series[i].Start && o.End > e.Series[i].Start {
				t.Errorf("%s starts at %v while %s runs until %v", e.Series[i].ID, e.Series[i].Start, o.ID, o.End)
			}
		}
	}
	// No controls: none.
	plan.Controls = nil
	if c, err := plan.ControlSeries(); c != nil || err != nil {
		t.Errorf("no controls: %v, %v", c, err)
	}
}

// TestRunControlAndLate runs a tiny profile with one serial control and a
// 1 ns late bound (every packet is recorded): the control's rows go to
// control.csv.gz and not records.csv.gz; late.csv.gz holds events of
// every series, the control's marked, and every recorded handshake's flow
// appears in it.
func TestRunControlAndLate(t *testing.T) {
	needRoot(t)
	text := strings.Replace(tinySpec(0, "5000", "[10]"), "warmup = 1", "warmup = 1\nlate_bound_ms = 0.000001", 1)
	text = strings.Replace(text, "rounds = [10]", "rounds = [10]\nparallel_series = 2\nserial_control = [\"tiny-10-X25519\"]", 1)
	cfg, log := tree(t, text)
	cfg.LinkOptions.Prefix = "pqr-latehyg-"
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run: %v\n%s", err, log)
	}
	if l, _ := linkemu.ListNamespaces("", "pqr-latehyg-"+itoa(os.Getpid())+"-"); len(l) > 0 {
		t.Errorf("namespaces left behind: %v", l)
	}
	dirs := runDirs(t, cfg)
	dir := filepath.Join(cfg.Root, "data", Study, dirs[0])
	if rows := readRows(t, filepath.Join(dir, netdata.RecordsFile)); len(rows) != 1+20 {
		t.Errorf("records: %d lines, want header + 20 (no control rows)", len(rows))
	}
	ctl := readRows(t, filepath.Join(dir, netdata.ControlFile))
	if len(ctl) != 1+10 {
		t.Fatalf("control: %d lines, want header + 10", len(ctl))
	}
	col := map[string]int{}
	for i, c := range ctl[0] {
		col[c] = i
	}
	for _, r := range ctl[1:] {
		if r[col["ok"]] != "true" || r[col["ths_ns"]] == "" || r[col["group"]] != "X25519" || r[col["round"]] != "10" {
			t.Errorf("control row %v: want an ok X25519 handshake of round 10 with its capture", r)
		}
	}
	f, err := os.Open(filepath.Join(dir, netdata.LateFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := netdata.ReadLate(f, netdata.LateFile)
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]map[uint16]bool{} // series -> client ports seen late
	for _, e := range evs {
		if e.Control != strings.HasSuffix(e.Series, ControlSuffix) {
			t.Errorf("event %+v: control flag does not match the series", e)
		}
		if e.Proto == 6 {
			if ports[e.Series] == nil {
				ports[e.Series] = map[uint16]bool{}
			}
			ports[e.Series][e.ClientPort()] = true
		}
	}
	check := func(rows [][]string, series func(r []string) string) {
		c := map[string]int{}
		for i, h := range rows[0] {
			c[h] = i
		}
		for _, r := range rows[1:] {
			_, p, _ := strings.Cut(r[c["client"]], ":")
			n, _ := strconv.Atoi(p)
			if s := series(r); !ports[s][uint16(n)] {
				t.Errorf("handshake %s of %s has no late event with a 1 ns bound", r[c["client"]], s)
			}
		}
	}
	check(readRows(t, filepath.Join(dir, "inproc.csv.gz")), func(r []string) string { return r[0] })
	check(readRows(t, filepath.Join(dir, netdata.ControlInprocFile)), func(r []string) string { return r[0] })
	m, err := provenance.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	lm, _ := m.Measured["late"].(map[string]any)
	if lm["bound_ns"] != float64(1) || lm["events"] != float64(len(evs)) {
		t.Errorf("measured.late = %v: want bound 1 ns and %d events", lm, len(evs))
	}
	for _, name := range []string{netdata.LateFile, netdata.ControlFile, netdata.ControlInprocFile, "captures/tiny-10-X25519-alone.pcapng"} {
		if m.Files[name] == "" {
			t.Errorf("meta.json files has no %s", name)
		}
	}
	// The control ran alone, after the others.
	var ctlStart, othersEnd float64
	for _, x := range m.Measured["schedule"].(map[string]any)["series"].([]any) {
		s := x.(map[string]any)
		if s["id"] == "tiny-10-X25519-alone" {
			ctlStart = s["start_s"].(float64)
		} else {
			othersEnd = max(othersEnd, s["end_s"].(float64))
		}
	}
	if ctlStart < othersEnd {
		t.Errorf("control started at %.3f s, before the others ended (%.3f s)", ctlStart, othersEnd)
	}
	checkRederive(t, cfg.Root, dir, 3)
}
