package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestLinkemuBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-loss", "120"}, "above 100 %"},
		{[]string{"-delay", "-5ms"}, "negative delay"},
		{[]string{"-rate", "0"}, "rate 0 bit/s must be > 0"},
		{[]string{"-rate", "fast"}, "parse rate"},
		{[]string{"-rate", "1mbit", "-queue", "100"}, "cannot hold one"},
		{[]string{"-ba-loss", "101"}, "b_to_a: loss 101"},
		{[]string{"-jitter", "30ms"}, "larger than delay"},
		{[]string{"-every", "0"}, "-every must be positive"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-nosuchflag"}, "flag provided but not defined"},
		{[]string{"selftest", "-loss", "-1"}, "negative loss"},
		{[]string{"clean", "-prefix", "Bad Prefix"}, "prefix"},
		{[]string{"clean", "extra"}, "unexpected arguments"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := dispatch(append([]string{"linkemu"}, c.args...), &out, &errb)
		wantCode := 2
		if c.args[0] == "clean" && strings.HasPrefix(c.args[1], "-prefix") {
			wantCode = 1 // a valid flag with a value Clean rejects
		}
		if code != wantCode || !strings.Contains(errb.String(), c.want) {
			t.Errorf("linkemu %q: exit %d (want %d), stderr %q (want %q)", c.args, code, wantCode, errb.String(), c.want)
		}
	}
}

func TestLinkemuSelfTestAndClean(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces and TUN devices")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("no TUN device: %v", err)
	}
	var out, errb bytes.Buffer
	// The command's wiring is under test, not this machine's timing: a
	// CI run measured p50 13.1 ms for the 10.0 ms RTT while other tests
	// had just run, beyond the default 1 ms tolerance (linkemu's own tests
	// check the tolerance), so the tolerance here is wide; p50 >= 9 ms
	// below still shows the delay was applied.
	code := dispatch([]string{"linkemu", "selftest", "-delay", "5ms", "-jitter", "1ms", "-rate", "50mbit", "-probes", "50", "-tolerance", "20ms"}, &out, &errb)
	if code != 0 {
		t.Fatalf("selftest exit %d: %s", code, errb.String())
	}
	var rep struct {
		Probes   int     `json:"probes"`
		Received int     `json:"received"`
		P50      float64 `json:"p50_ms"`
		OK       bool    `json:"ok"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || !rep.OK || rep.Probes != 50 || rep.Received != 50 || rep.P50 < 9 {
		t.Errorf("selftest report %+v (%v):\n%s", rep, err, out.String())
	}
	out.Reset()
	// A link whose probes all die: the self-test must fail with exit 1 and
	// still print its report.
	code = dispatch([]string{"linkemu", "selftest", "-delay", "1ms", "-loss", "100", "-probes", "10"}, &out, &errb)
	if code != 1 || !strings.Contains(out.String(), `"ok": false`) {
		t.Errorf("dead link selftest: exit %d, stdout %s", code, out.String())
	}
	out.Reset()
	if code := dispatch([]string{"linkemu", "clean", "-prefix", "pqr-0-"}, &out, &errb); code != 0 {
		t.Errorf("clean exit %d: %s", code, errb.String())
	}
}
