package netdata

import (
	"math"
	"strings"
	"testing"
)

const goodProbe = `{"measured":{"host_probe":{"command":"endpoint probe","n":1000,"warmup":20,` +
	`"before":{"go1.24.4":{"X25519":{"median_ms":0.45,"p25_ms":0.43,"p75_ms":0.5},"X25519MLKEM768":{"median_ms":0.68,"p25_ms":0.65,"p75_ms":0.76}}},` +
	`"after":{"go1.24.4":{"X25519":{"median_ms":0.46,"p25_ms":0.43,"p75_ms":0.5},"X25519MLKEM768":{"median_ms":0.69,"p25_ms":0.65,"p75_ms":0.76}}}},` +
	`"selftest":{"lan-20-X25519":{"scenario":"lan","ok":true}}}}`

func TestParseProbeMeta(t *testing.T) {
	m, err := ParseProbeMeta("meta.json", []byte(goodProbe))
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Probe; p == nil || p.N != 1000 || p.Before["go1.24.4"]["X25519MLKEM768"].MedianMs != 0.68 || m.Remote || !m.SelfTests["lan-20-X25519"].OK {
		t.Errorf("ParseProbeMeta = %+v", m)
	}
	old, err := ParseProbeMeta("meta.json", []byte(`{"measured":{"design":{}}}`))
	if err != nil || old.Probe != nil || old.Remote {
		t.Errorf("a run without a probe: %+v, %v; want no probe and no error", old, err)
	}
	remote, err := ParseProbeMeta("meta.json", []byte(`{"measured":{"remote_host":{"kernel":"x"}}}`))
	if err != nil || !remote.Remote {
		t.Errorf("remote_host not seen: %+v, %v", remote, err)
	}
	failed, err := ParseProbeMeta("meta.json", []byte(`{"measured":{"host_probe":{"n":1000,"before":null,"after":null,"errors":{"before":"boom"}}}}`))
	if err != nil || failed.Probe.Before != nil || failed.Probe.Errors["before"] != "boom" {
		t.Errorf("a failed probe: %+v, %v", failed, err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", `{"measured":`, "meta.json: unexpected end of JSON input"},
		{"zero median", strings.Replace(goodProbe, `"median_ms":0.45`, `"median_ms":0`, 1), "meta.json: measured.host_probe.before"},
		{"negative quantile", strings.Replace(goodProbe, `"p25_ms":0.43`, `"p25_ms":-1`, 1), "meta.json: measured.host_probe.before"},
		{"quantiles out of order", strings.Replace(goodProbe, `"p75_ms":0.5}`, `"p75_ms":0.44}`, 1), "meta.json: measured.host_probe.before"},
		{"string time", strings.Replace(goodProbe, `"median_ms":0.45`, `"median_ms":"0.45"`, 1), "meta.json: json: cannot unmarshal string"},
	} {
		if _, err := ParseProbeMeta("meta.json", []byte(tc.in)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q...", tc.name, err, tc.want)
		}
	}
}

func FuzzParseProbeMeta(f *testing.F) {
	f.Add([]byte(goodProbe))
	f.Add([]byte(`{"measured":{"host_probe":{"before":{"a":{"b":{"median_ms":1e309}}}}}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseProbeMeta("meta.json", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "meta.json: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if m.Probe == nil {
			return
		}
		for _, tcs := range []map[string]map[string]ProbeSpan{m.Probe.Before, m.Probe.After} {
			for _, gs := range tcs {
				for _, s := range gs {
					if !(s.P25Ms > 0 && s.P25Ms <= s.MedianMs && s.MedianMs <= s.P75Ms && !math.IsInf(s.P75Ms, 0)) {
						t.Fatalf("accepted the span %+v", s)
					}
				}
			}
		}
	})
}
