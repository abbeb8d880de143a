package netdata

import (
	"os"
	"path/filepath"
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

// TestParseMetaTCPStack: measured.tcp_stack is read and checked; a run
// that started before tcpstack.Since has none (nil), a later one must.
func TestParseMetaTCPStack(t *testing.T) {
	design := `"design":{"groups":["X25519","X25519MLKEM768"],"rounds":[20],"scenarios":[{"name":"lan","rtt_ms":1}]}`
	stack := `{"congestion_control":"cubic","available_congestion_control":["reno","cubic"],"allowed_congestion_control":["reno","cubic"],` +
		`"initcwnd":10,"initcwnd_from":"kernel default (RFC 6928)","initcwnd_routes":{},"default_qdisc":"fq_codel",` +
		`"qdiscs":{"pqr-tun":"fq_codel"},"pacing":"none","pacing_ss_ratio":200,"pacing_ca_ratio":120,"slow_start_after_idle":1,"ecn":2}`
	m, err := ParseMeta("meta.json", []byte(`{"start":"2026-12-10T00:00:00Z","measured":{`+design+`,"tcp_stack":{"a":`+stack+`,"b":`+stack+`}}}`))
	if err != nil || len(m.TCPStack) != 2 || m.TCPStack["a"].CongestionControl != "cubic" {
		t.Fatalf("ParseMeta with tcp_stack = %+v, %v", m.TCPStack, err)
	}
	if _, err := ParseMeta("meta.json", []byte(`{"start":"2026-12-10T00:00:00Z","measured":{`+design+`}}`)); err == nil || !strings.Contains(err.Error(), "no measured.tcp_stack") {
		t.Errorf("a new run without tcp_stack: %v, want an error", err)
	}
	bad := strings.Replace(stack, `"pacing":"none"`, `"pacing":"fq"`, 1)
	if _, err := ParseMeta("meta.json", []byte(`{"start":"2026-12-10T00:00:00Z","measured":{`+design+`,"tcp_stack":{"a":`+bad+`}}}`)); err == nil || !strings.Contains(err.Error(), "pacing") {
		t.Errorf("a tcp_stack that contradicts itself: %v, want an error", err)
	}
	if m, err := ParseMeta("meta.json", []byte(`{"start":"2026-11-30T00:00:00Z","measured":{`+design+`}}`)); err != nil || m.TCPStack != nil {
		t.Errorf("an old run without tcp_stack: %+v, %v; want nil, nil", m.TCPStack, err)
	}
}

// TestCommittedRunsDecode: every committed Study B run, recorded before
// measured.tcp_stack existed, still decodes (they are evidence and do
// not change).
func TestCommittedRunsDecode(t *testing.T) {
	metas, _ := filepath.Glob(filepath.Join("..", "..", "data", "net", "*", "meta.json"))
	if len(metas) == 0 {
		t.Skip("skipped: no committed run under data/net (not a full checkout)")
	}
	for _, p := range metas {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseMeta(p, b); err != nil {
			t.Errorf("committed run: %v", err)
		}
	}
}
