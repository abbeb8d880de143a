package tlsdata

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/internal/tcpstack"
)

func TestTCPStack(t *testing.T) {
	s := tcpstack.Stack{CongestionControl: "bbr", Available: []string{"reno", "bbr"}, Allowed: []string{"reno", "bbr"},
		InitCwnd: 10, InitCwndFrom: tcpstack.InitCwndDefault, InitCwndRoutes: map[string]int{}, DefaultQdisc: "fq_codel",
		Qdiscs: map[string]string{"lo": "noqueue"}, Pacing: tcpstack.PacingInternal, PacingSSRatio: 200, PacingCARatio: 120, SlowStartAfterIdle: 1, ECN: 2}
	meta := func(start string, st map[string]tcpstack.Stack) []byte {
		m := map[string]any{"start": start, "measured": map[string]any{}}
		if st != nil {
			m["measured"].(map[string]any)["tcp_stack"] = st
		}
		b, _ := json.Marshal(m)
		return b
	}
	got, err := TCPStack("meta.json", meta("2026-12-10T00:00:00Z", map[string]tcpstack.Stack{"loopback/client": s, "bridge/client": s, "bridge/server": s}))
	if err != nil || len(got) != 3 {
		t.Fatalf("TCPStack = %v, %v", got, err)
	}
	if _, err := TCPStack("meta.json", meta("2026-12-10T00:00:00Z", map[string]tcpstack.Stack{"loopback": s})); err == nil || !strings.Contains(err.Error(), `"loopback"`) {
		t.Errorf("a key without its side: %v", err)
	}
	if _, err := TCPStack("meta.json", meta("2026-12-10T00:00:00Z", nil)); err == nil {
		t.Error("a new run without tcp_stack: nil error")
	}
	if got, err := TCPStack("meta.json", meta("2026-11-30T12:47:52Z", nil)); err != nil || got != nil {
		t.Errorf("an old run: %v, %v; want nil, nil", got, err)
	}
}

// TestCommittedRunsDecode: every committed Study A run still reads (they
// are evidence and do not change): those recorded before
// measured.tcp_stack existed without a stack, later ones with one for
// every side they list.
func TestCommittedRunsDecode(t *testing.T) {
	metas, _ := filepath.Glob(filepath.Join("..", "..", "data", "tls", "*", "meta.json"))
	if len(metas) == 0 {
		t.Skip("skipped: no committed run under data/tls (not a full checkout)")
	}
	for _, p := range metas {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		st, err := TCPStack(p, b)
		if err != nil {
			t.Errorf("committed run %s: %v", p, err)
			continue
		}
		for side, s := range st {
			if s.CongestionControl == "" || !strings.Contains(side, "/") {
				t.Errorf("committed run %s: side %q has stack %+v", p, side, s)
			}
		}
		if strings.Contains(string(b), `"tcp_stack"`) != (st != nil) {
			t.Errorf("committed run %s: tcp_stack in meta.json but %d sides read", p, len(st))
		}
	}
}

func FuzzTCPStack(f *testing.F) {
	f.Add([]byte(`{"start":"2026-12-10T00:00:00Z","measured":{"tcp_stack":{"loopback/client":{}}}}`))
	f.Add([]byte(`{"start":"2026-11-30T00:00:00Z","measured":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := TCPStack("meta.json", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "meta.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for k, s := range st {
			if _, side, _ := strings.Cut(k, "/"); (side != "client" && side != "server") || s.Validate() != nil {
				t.Fatalf("TCPStack took %q: %+v", k, s)
			}
		}
	})
}
