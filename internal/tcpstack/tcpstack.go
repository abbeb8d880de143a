// Package tcpstack is the TCP stack's settings as meta.json records them and
// the pure parsers of the kernel's text they are read from.
//
// Why: a transfer's time depends on the sender's congestion control, its
// initial window, pacing, slow start after idle and ECN; Study A and Study
// B record them per network namespace (measured.tcp_stack) so that a
// result can be traced to the stack that made it. Reading them inside a
// namespace and setting congestion control is the instrument
// experiments/instruments/tcpns; this package does no I/O.
package tcpstack

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// DefaultInitCwnd is Linux's initial congestion window in segments when no
// route sets initcwnd (RFC 6928; TCP_INIT_CWND).
const DefaultInitCwnd = 10

// Where the initial window comes from (Stack.InitCwndFrom).
const (
	InitCwndRoute   = "route"                     // a route on an interface used sets initcwnd
	InitCwndDefault = "kernel default (RFC 6928)" // no route sets it: DefaultInitCwnd
)

// Pacing values of Stack.Pacing.
const (
	PacingFQ       = "fq"       // an fq qdisc on an interface used paces every flow
	PacingInternal = "internal" // no fq, but the congestion control (BBR) asks TCP to pace itself
	PacingNone     = "none"     // neither: segments leave as the window allows
)

// Stack is one network namespace's TCP stack, meta.json's
// measured.tcp_stack[<side>].
type Stack struct {
	// CongestionControl is net.ipv4.tcp_congestion_control, the
	// namespace's default for new sockets.
	CongestionControl string `json:"congestion_control"`
	// Available is net.ipv4.tcp_available_congestion_control (the
	// kernel's, the same in every namespace).
	Available []string `json:"available_congestion_control"`
	// Allowed is net.ipv4.tcp_allowed_congestion_control: those an
	// unprivileged socket may choose, and the only ones a namespace other
	// than the initial one may make its default.
	Allowed []string `json:"allowed_congestion_control"`
	// InitCwnd is the initial congestion window in segments, and
	// InitCwndFrom where it comes from (InitCwndRoute or InitCwndDefault).
	InitCwnd     int    `json:"initcwnd"`
	InitCwndFrom string `json:"initcwnd_from"`
	// InitCwndRoutes lists the routes on the interfaces used that set
	// initcwnd ("<route> dev <iface>" -> segments); empty when none does.
	InitCwndRoutes map[string]int `json:"initcwnd_routes"`
	// DefaultQdisc is net.core.default_qdisc. It is global: Linux shows
	// it only in the initial namespace, where it is read.
	DefaultQdisc string `json:"default_qdisc"`
	// Qdiscs is the root qdisc of each interface used, as ParseQdisc
	// describes it ("noqueue", "fq", "mq(fq)").
	Qdiscs map[string]string `json:"qdiscs"`
	// Pacing says what paces a flow: PacingFQ, PacingInternal or
	// PacingNone (see PacingOf).
	Pacing string `json:"pacing"`
	// PacingSSRatio and PacingCARatio are net.ipv4.tcp_pacing_ss_ratio and
	// tcp_pacing_ca_ratio: the pacing rate in percent of cwnd/RTT in slow
	// start and in congestion avoidance.
	PacingSSRatio int `json:"pacing_ss_ratio"`
	PacingCARatio int `json:"pacing_ca_ratio"`
	// SlowStartAfterIdle is net.ipv4.tcp_slow_start_after_idle (0 or 1).
	SlowStartAfterIdle int `json:"slow_start_after_idle"`
	// ECN is net.ipv4.tcp_ecn: 0 off, 1 requested and accepted, 2
	// accepted only (Linux's default); newer kernels add 3-5 (AccECN).
	ECN int `json:"ecn"`
}

// PacingOf says what paces a flow. It is an fq qdisc on any interface
// used, else BBR's own pacing (TCP paces internally when the congestion
// control asks and no fq does), else none.
func PacingOf(cc string, qdiscs map[string]string) string {
	for _, q := range qdiscs {
		root, kids, _ := strings.Cut(strings.TrimSuffix(q, ")"), "(")
		if root == "fq" || slices.Contains(strings.Split(kids, ","), "fq") {
			return PacingFQ
		}
	}
	if strings.HasPrefix(cc, "bbr") {
		return PacingInternal
	}
	return PacingNone
}

// Validate reports every field out of its range, joined.
func (s Stack) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := CheckName(s.CongestionControl); err != nil {
		bad("congestion_control: %v", err)
	}
	if len(s.Available) == 0 {
		bad("available_congestion_control: empty")
	}
	for _, a := range s.Available {
		if err := CheckName(a); err != nil {
			bad("available_congestion_control: %v", err)
		}
	}
	for _, a := range s.Allowed {
		if err := CheckName(a); err != nil {
			bad("allowed_congestion_control: %v", err)
		}
	}
	if len(s.Available) > 0 && !slices.Contains(s.Available, s.CongestionControl) {
		bad("congestion_control %q is not among the available %v", s.CongestionControl, s.Available)
	}
	if s.InitCwnd < 1 || s.InitCwnd > MaxInitCwnd {
		bad("initcwnd %d: want 1..%d", s.InitCwnd, MaxInitCwnd)
	}
	switch s.InitCwndFrom {
	case InitCwndDefault:
		if s.InitCwnd != DefaultInitCwnd || len(s.InitCwndRoutes) > 0 {
			bad("initcwnd %d from %q with routes %v: the default is %d and no route sets it", s.InitCwnd, s.InitCwndFrom, s.InitCwndRoutes, DefaultInitCwnd)
		}
	case InitCwndRoute:
		if len(s.InitCwndRoutes) == 0 {
			bad("initcwnd_from %q but no route in initcwnd_routes", s.InitCwndFrom)
		}
	default:
		bad("initcwnd_from %q: want %q or %q", s.InitCwndFrom, InitCwndRoute, InitCwndDefault)
	}
	for r, n := range s.InitCwndRoutes {
		if n < 1 || n > MaxInitCwnd {
			bad("initcwnd_routes[%q] = %d: want 1..%d", r, n, MaxInitCwnd)
		}
	}
	if !isWord(s.DefaultQdisc) {
		bad("default_qdisc %q: want a qdisc name", s.DefaultQdisc)
	}
	if len(s.Qdiscs) == 0 {
		bad("qdiscs: no interface")
	}
	for _, i := range slices.Sorted(maps.Keys(s.Qdiscs)) {
		if i == "" || s.Qdiscs[i] == "" {
			bad("qdiscs[%q] = %q: want an interface and its root qdisc", i, s.Qdiscs[i])
		}
	}
	if want := PacingOf(s.CongestionControl, s.Qdiscs); s.Pacing != want {
		bad("pacing %q: the qdiscs %v and congestion control %q make it %q", s.Pacing, s.Qdiscs, s.CongestionControl, want)
	}
	for _, r := range []struct {
		name   string
		v, max int
	}{{"pacing_ss_ratio", s.PacingSSRatio, 1000}, {"pacing_ca_ratio", s.PacingCARatio, 1000}, {"slow_start_after_idle", s.SlowStartAfterIdle, 1}, {"ecn", s.ECN, 5}} {
		if r.v < 0 || r.v > r.max {
			bad("%s %d: want 0..%d", r.name, r.v, r.max)
		}
	}
	return errors.Join(errs...)
}

// MaxInitCwnd bounds an initial window in segments (a route's initcwnd is
// a u32; anything near this is a typo, not a setting).
const MaxInitCwnd = 1000

// MaxNameLen is the longest congestion-control name Linux takes
// (TCP_CA_NAME_MAX is 16 bytes with the terminating zero).
const MaxNameLen = 15

// CheckName reports whether name can be a congestion control's name: 1 to
// MaxNameLen lowercase letters, digits or underscores.
func CheckName(name string) error {
	if name == "" {
		return errors.New("empty congestion-control name")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("congestion control %q: longer than Linux's %d characters", name, MaxNameLen)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return fmt.Errorf("congestion control %q: want lowercase letters, digits and underscores", name)
		}
	}
	return nil
}

// CheckAvailable reports whether the kernel offers name: an error names
// the available ones. Nothing loads a module (tcp_<name>) here; a kernel
// without the name is a setup to change, not something to work around.
func CheckAvailable(name string, available []string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if !slices.Contains(available, name) {
		return fmt.Errorf("congestion control %q is not available in this kernel: net.ipv4.tcp_available_congestion_control is %q (load its module, tcp_%s, before the run)", name, strings.Join(available, " "), name)
	}
	return nil
}

// ParseName reads a one-name sysctl such as tcp_congestion_control.
func ParseName(b []byte) (string, error) {
	f := strings.Fields(string(b))
	if len(f) != 1 {
		return "", fmt.Errorf("want one congestion-control name, got %q", b)
	}
	return f[0], CheckName(f[0])
}

// ParseNames reads a list sysctl such as tcp_available_congestion_control:
// names separated by spaces, at least one, none twice.
func ParseNames(b []byte) ([]string, error) {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return nil, errors.New("no congestion-control name")
	}
	for i, n := range f {
		if err := CheckName(n); err != nil {
			return nil, err
		}
		if slices.Contains(f[:i], n) {
			return nil, fmt.Errorf("congestion control %q listed twice", n)
		}
	}
	return f, nil
}

// ParseInt reads an integer sysctl and checks it is in lo..hi.
func ParseInt(b []byte, lo, hi int) (int, error) {
	s := strings.TrimSpace(string(b))
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("want an integer, got %q", s)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d: want %d..%d", n, lo, hi)
	}
	return n, nil
}

// ParseWord reads a one-word sysctl such as net.core.default_qdisc.
func ParseWord(b []byte) (string, error) {
	s := strings.TrimSpace(string(b))
	if !isWord(s) {
		return "", fmt.Errorf("want one name, got %q", s)
	}
	return s, nil
}

func isWord(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// ParseRoutes reads `ip -o route show table all` for the routes through
// ifaces that set initcwnd.
//
// They map "<route> dev <iface>" to segments; <route> is the line's words
// before "dev".
func ParseRoutes(out []byte, ifaces []string) (map[string]int, error) {
	routes := map[string]int{}
	for ln := range strings.Lines(string(out)) {
		f := strings.Fields(ln)
		if len(f) == 0 {
			continue
		}
		dev, cwnd, at := "", -1, -1
		for i := 0; i < len(f); i++ {
			switch f[i] {
			case "dev":
				if i+1 >= len(f) {
					return nil, fmt.Errorf("route %q: dev without a name", strings.TrimSpace(ln))
				}
				if at < 0 {
					at = i
				}
				dev = f[i+1]
				i++
			case "initcwnd":
				if i+1 >= len(f) {
					return nil, fmt.Errorf("route %q: initcwnd without a value", strings.TrimSpace(ln))
				}
				n, err := ParseInt([]byte(f[i+1]), 1, MaxInitCwnd)
				if err != nil {
					return nil, fmt.Errorf("route %q: initcwnd %w", strings.TrimSpace(ln), err)
				}
				cwnd = n
				i++
			}
		}
		if cwnd < 0 || !slices.Contains(ifaces, dev) {
			continue
		}
		if at <= 0 {
			return nil, fmt.Errorf("route %q: no destination before dev", strings.TrimSpace(ln))
		}
		routes[strings.Join(f[:at], " ")+" dev "+dev] = cwnd
	}
	return routes, nil
}

// InitCwndOf is the initial window the routes give (ParseRoutes' result)
// and where it comes from. No route: DefaultInitCwnd from
// InitCwndDefault. Routes that disagree are an error: one number would
// misstate some connections.
func InitCwndOf(routes map[string]int) (int, string, error) {
	if len(routes) == 0 {
		return DefaultInitCwnd, InitCwndDefault, nil
	}
	vals := slices.Sorted(maps.Values(routes))
	if vals[0] != vals[len(vals)-1] {
		return 0, "", fmt.Errorf("the routes on the interfaces used set different initcwnd values: %v", routes)
	}
	return vals[0], InitCwndRoute, nil
}

// ParseQdisc reads `tc qdisc show dev <iface>` and describes the root qdisc.
//
// The description is its kind, with the distinct kinds of its children in
// parentheses when it has any ("mq(fq)"), so that fq under mq counts as fq.
func ParseQdisc(out []byte) (string, error) {
	root := ""
	var kids []string
	for ln := range strings.Lines(string(out)) {
		f := strings.Fields(ln)
		if len(f) == 0 {
			continue
		}
		if len(f) < 3 || f[0] != "qdisc" || !isWord(f[1]) {
			return "", fmt.Errorf("qdisc line %q: want \"qdisc <kind> <handle> ...\"", strings.TrimSpace(ln))
		}
		switch {
		case slices.Contains(f[3:], "root"):
			if root != "" {
				return "", fmt.Errorf("two root qdiscs: %s and %s", root, f[1])
			}
			root = f[1]
		case f[1] == "ingress" || f[1] == "clsact":
			// Receive-side hooks: they pace nothing.
		case slices.Contains(f[3:], "parent"):
			if !slices.Contains(kids, f[1]) {
				kids = append(kids, f[1])
			}
		}
	}
	if root == "" {
		return "", fmt.Errorf("no root qdisc in %q", out)
	}
	if len(kids) > 0 {
		slices.Sort(kids)
		root += "(" + strings.Join(kids, ",") + ")"
	}
	return root, nil
}
