package tcpstack

import (
	"strings"
	"testing"
)

// good is a stack as a Study B namespace on this kind of host shows it.
func good() Stack {
	return Stack{CongestionControl: "bbr", Available: []string{"reno", "bbr", "cubic"},
		Allowed: []string{"reno", "bbr"}, InitCwnd: 10, InitCwndFrom: InitCwndDefault, InitCwndRoutes: map[string]int{},
		DefaultQdisc: "pfifo_fast", Qdiscs: map[string]string{"pqr-a": "pfifo_fast"}, Pacing: PacingInternal,
		PacingSSRatio: 200, PacingCARatio: 120, SlowStartAfterIdle: 1, ECN: 2}
}

func TestValidate(t *testing.T) {
	if err := good().Validate(); err != nil {
		t.Fatalf("good stack: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*Stack)
		want string
	}{
		{"unknown cc", func(s *Stack) { s.CongestionControl = "vegas" }, `"vegas" is not among the available`},
		{"bad cc name", func(s *Stack) { s.CongestionControl = "BBR" }, "lowercase"},
		{"bad allowed", func(s *Stack) { s.Allowed = []string{"a b"} }, "allowed_congestion_control"},
		{"no available", func(s *Stack) { s.Available = nil }, "available_congestion_control: empty"},
		{"initcwnd 0", func(s *Stack) { s.InitCwnd = 0 }, "initcwnd 0"},
		{"default but 20", func(s *Stack) { s.InitCwnd = 20 }, "the default is 10"},
		{"route without routes", func(s *Stack) { s.InitCwndFrom = InitCwndRoute }, "no route in initcwnd_routes"},
		{"unknown source", func(s *Stack) { s.InitCwndFrom = "guess" }, `initcwnd_from "guess"`},
		{"no qdiscs", func(s *Stack) { s.Qdiscs = nil }, "qdiscs: no interface"},
		{"pacing wrong", func(s *Stack) { s.Pacing = PacingNone }, `make it "internal"`},
		{"ecn 9", func(s *Stack) { s.ECN = 9 }, "ecn 9"},
		{"ssai 2", func(s *Stack) { s.SlowStartAfterIdle = 2 }, "slow_start_after_idle 2"},
		{"ratio", func(s *Stack) { s.PacingSSRatio = -1 }, "pacing_ss_ratio -1"},
		{"default qdisc", func(s *Stack) { s.DefaultQdisc = "" }, "default_qdisc"},
	} {
		s := good()
		c.edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v, want an error with %q", c.name, err, c.want)
		}
	}
	s := good()
	s.InitCwnd, s.InitCwndFrom, s.InitCwndRoutes = 20, InitCwndRoute, map[string]int{"10.0.0.0/24 dev pqr-a": 20}
	if err := s.Validate(); err != nil {
		t.Errorf("stack with a route's initcwnd: %v", err)
	}
}

func TestPacingOf(t *testing.T) {
	for _, c := range []struct {
		cc     string
		qdiscs map[string]string
		want   string
	}{
		{"cubic", map[string]string{"eth0": "fq"}, PacingFQ},
		{"cubic", map[string]string{"eth0": "mq(fq)"}, PacingFQ},
		{"cubic", map[string]string{"eth0": "mq(fq_codel)"}, PacingNone},
		{"bbr", map[string]string{"eth0": "mq(fq_codel)"}, PacingInternal},
		{"bbr", map[string]string{"eth0": "noqueue"}, PacingInternal},
		{"bbr", map[string]string{"a": "noqueue", "b": "fq"}, PacingFQ},
		{"cubic", map[string]string{"lo": "noqueue"}, PacingNone},
		{"reno", nil, PacingNone},
	} {
		if got := PacingOf(c.cc, c.qdiscs); got != c.want {
			t.Errorf("PacingOf(%q, %v) = %q, want %q", c.cc, c.qdiscs, got, c.want)
		}
	}
}

func TestCheckAvailable(t *testing.T) {
	avail := []string{"reno", "bbr", "cubic"}
	if err := CheckAvailable("cubic", avail); err != nil {
		t.Fatal(err)
	}
	err := CheckAvailable("vegas", avail)
	if err == nil || !strings.Contains(err.Error(), `"reno bbr cubic"`) || !strings.Contains(err.Error(), `"vegas" is not available`) {
		t.Fatalf("CheckAvailable(vegas) = %v, want an error naming the available ones", err)
	}
	for _, bad := range []string{"", "Cubic", "bbr v2", "abcdefghijklmnop", "../x"} {
		if err := CheckAvailable(bad, append(avail, bad)); err == nil {
			t.Errorf("CheckAvailable(%q) = nil, want a name error", bad)
		}
	}
}

func TestParseSysctls(t *testing.T) {
	if n, err := ParseName([]byte("bbr\n")); err != nil || n != "bbr" {
		t.Errorf("ParseName = %q, %v", n, err)
	}
	for _, bad := range []string{"", "\n", "bbr cubic\n", "BBR\n"} {
		if _, err := ParseName([]byte(bad)); err == nil {
			t.Errorf("ParseName(%q) = nil error", bad)
		}
	}
	if l, err := ParseNames([]byte("reno bbr cubic\n")); err != nil || strings.Join(l, ",") != "reno,bbr,cubic" {
		t.Errorf("ParseNames = %v, %v", l, err)
	}
	for _, bad := range []string{"", " \n", "reno reno", "reno Bbr"} {
		if _, err := ParseNames([]byte(bad)); err == nil {
			t.Errorf("ParseNames(%q) = nil error", bad)
		}
	}
	if n, err := ParseInt([]byte("200\n"), 0, 1000); err != nil || n != 200 {
		t.Errorf("ParseInt = %d, %v", n, err)
	}
	for _, bad := range []string{"", "x", "1001", "-1", "1 2"} {
		if _, err := ParseInt([]byte(bad), 0, 1000); err == nil {
			t.Errorf("ParseInt(%q) = nil error", bad)
		}
	}
	if w, err := ParseWord([]byte("fq_codel\n")); err != nil || w != "fq_codel" {
		t.Errorf("ParseWord = %q, %v", w, err)
	}
	for _, bad := range []string{"", "fq codel", "a/b"} {
		if _, err := ParseWord([]byte(bad)); err == nil {
			t.Errorf("ParseWord(%q) = nil error", bad)
		}
	}
}

func TestParseRoutes(t *testing.T) {
	out := `default via 10.0.0.1 dev eth0 proto static initcwnd 30
10.0.0.0/24 dev pqr-a proto kernel scope link src 10.0.0.1 initcwnd 20
10.9.0.0/24 dev pqr-b proto kernel scope link src 10.9.0.1
local 10.0.0.1 dev pqr-a table local proto kernel scope host src 10.0.0.1
`
	r, err := ParseRoutes([]byte(out), []string{"pqr-a", "pqr-b"})
	if err != nil || len(r) != 1 || r["10.0.0.0/24 dev pqr-a"] != 20 {
		t.Fatalf("ParseRoutes = %v, %v; want only pqr-a's route with 20", r, err)
	}
	if n, from, err := InitCwndOf(r); err != nil || n != 20 || from != InitCwndRoute {
		t.Errorf("InitCwndOf = %d %q %v", n, from, err)
	}
	if n, from, err := InitCwndOf(nil); err != nil || n != DefaultInitCwnd || from != InitCwndDefault {
		t.Errorf("InitCwndOf(none) = %d %q %v", n, from, err)
	}
	if _, _, err := InitCwndOf(map[string]int{"a dev x": 10, "b dev x": 20}); err == nil {
		t.Error("InitCwndOf of disagreeing routes = nil error")
	}
	for _, bad := range []string{"x dev pqr-a initcwnd", "x dev pqr-a initcwnd 0", "x dev pqr-a initcwnd many", "dev pqr-a initcwnd 4", "x dev"} {
		if _, err := ParseRoutes([]byte(bad), []string{"pqr-a"}); err == nil {
			t.Errorf("ParseRoutes(%q) = nil error", bad)
		}
	}
}

func TestParseQdisc(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"qdisc noqueue 0: root refcnt 2 \n", "noqueue"},
		{"qdisc fq 8001: root refcnt 2 limit 10000p flow_limit 100p\n", "fq"},
		{"qdisc mq 0: root \nqdisc fq 0: parent :2 limit 10000p\nqdisc fq 0: parent :1 limit 10000p\n", "mq(fq)"},
		{"qdisc mq 0: root \nqdisc fq_codel 0: parent :1\nqdisc fq 0: parent :2\n", "mq(fq,fq_codel)"},
		{"qdisc pfifo_fast 0: root refcnt 2 bands 3\nqdisc ingress ffff: parent ffff:fff1 ----------------\n", "pfifo_fast"},
	} {
		if got, err := ParseQdisc([]byte(c.out)); err != nil || got != c.want {
			t.Errorf("ParseQdisc(%q) = %q, %v; want %q", c.out, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "qdisc fq 0: parent :1\n", "qdisc fq 1: root\nqdisc fq 2: root\n", "garbage\n", "qdisc\n"} {
		if _, err := ParseQdisc([]byte(bad)); err == nil {
			t.Errorf("ParseQdisc(%q) = nil error", bad)
		}
	}
}

func FuzzParseNames(f *testing.F) {
	f.Add([]byte("reno bbr cubic\n"))
	f.Add([]byte("bbr"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseNames(b)
		if err != nil {
			return
		}
		for _, n := range l {
			if CheckAvailable(n, l) != nil {
				t.Fatalf("ParseNames(%q) took %q, which CheckAvailable refuses", b, n)
			}
		}
		if n, err := ParseName(b); err == nil && (len(l) != 1 || l[0] != n) {
			t.Fatalf("ParseName(%q) = %q but ParseNames = %v", b, n, l)
		}
	})
}

func FuzzParseInt(f *testing.F) {
	f.Add([]byte("200\n"), 0, 1000)
	f.Add([]byte("-3"), -5, 5)
	f.Fuzz(func(t *testing.T, b []byte, lo, hi int) {
		n, err := ParseInt(b, lo, hi)
		if err == nil && (n < lo || n > hi) {
			t.Fatalf("ParseInt(%q, %d, %d) = %d, out of range", b, lo, hi, n)
		}
		if w, err := ParseWord(b); err == nil && !isWord(w) {
			t.Fatalf("ParseWord(%q) = %q, not a word", b, w)
		}
	})
}

func FuzzParseRoutes(f *testing.F) {
	f.Add([]byte("10.0.0.0/24 dev pqr-a proto kernel initcwnd 20\n"), "pqr-a")
	f.Add([]byte("default via 1.2.3.4 dev eth0\n"), "eth0")
	f.Fuzz(func(t *testing.T, b []byte, iface string) {
		r, err := ParseRoutes(b, []string{iface})
		if err != nil {
			return
		}
		for k, n := range r {
			if n < 1 || n > MaxInitCwnd || !strings.HasSuffix(k, " dev "+iface) {
				t.Fatalf("ParseRoutes(%q) gave %q = %d", b, k, n)
			}
		}
		if n, from, err := InitCwndOf(r); err == nil && (n < 1 || from == "") {
			t.Fatalf("InitCwndOf(%v) = %d %q", r, n, from)
		}
	})
}

func FuzzParseQdisc(f *testing.F) {
	f.Add([]byte("qdisc mq 0: root \nqdisc fq 0: parent :1\n"))
	f.Add([]byte("qdisc noqueue 0: root refcnt 2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ParseQdisc(b)
		if err != nil {
			return
		}
		root, _, _ := strings.Cut(q, "(")
		if !isWord(root) {
			t.Fatalf("ParseQdisc(%q) = %q: root is not a name", b, q)
		}
		PacingOf("cubic", map[string]string{"x": q})
	})
}
