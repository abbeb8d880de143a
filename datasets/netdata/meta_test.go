package netdata

import (
	"strings"
	"testing"
)

func TestParseMeta(t *testing.T) {
	good := `{"run_id":"r","profile":"quick","measured":{"design":{"order":"interleaved","groups":["X25519","X25519MLKEM768"],` +
		`"rounds":[20],"timeout_ms":5000,"scenarios":[{"name":"lan","rtt_ms":1,"seed":7,"link":"x"}]}}}`
	m, err := ParseMeta("meta.json", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Measured.Design; m.RunID != "r" || m.Profile != "quick" || d.TimeoutMs != 5000 || len(d.Scenarios) != 1 || d.Scenarios[0].RTTms != 1 {
		t.Errorf("ParseMeta = %+v", m)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", `{"run_id":`, "meta.json: unexpected end of JSON input"},
		{"wrong type", `{"measured":{"design":{"rounds":["20"]}}}`, "meta.json: json: cannot unmarshal string"},
		{"no design", `{"run_id":"r","measured":{}}`, "meta.json: no measured.design: not a Study B run"},
		{"one group", strings.Replace(good, `,"X25519MLKEM768"`, "", 1), "meta.json: design.groups = [X25519]: the study compares exactly two groups"},
		{"no rounds", strings.Replace(good, `[20]`, `[]`, 1), "meta.json: design.rounds: none"},
		{"unnamed scenario", strings.Replace(good, `"name":"lan",`, "", 1), "meta.json: design.scenarios: {Name: RTTms:1"},
	} {
		if _, err := ParseMeta("meta.json", []byte(tc.in)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q...", tc.name, err, tc.want)
		}
	}
}

func FuzzParseMeta(f *testing.F) {
	f.Add([]byte(`{"measured":{"design":{"groups":["a","b"],"rounds":[1],"scenarios":[{"name":"lan","rtt_ms":1}]}}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMeta("meta.json", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "meta.json: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if d := m.Measured.Design; d == nil || len(d.Groups) != 2 || len(d.Rounds) == 0 || len(d.Scenarios) == 0 {
			t.Fatalf("accepted an incomplete design %+v", d)
		}
	})
}
