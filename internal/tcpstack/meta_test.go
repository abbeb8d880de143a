package tcpstack

import (
	"encoding/json"
	"strings"
	"testing"
)

func metaJSON(t *testing.T, start string, stack any) []byte {
	t.Helper()
	m := map[string]any{"start": start, "measured": map[string]any{"design": map[string]any{}}}
	if stack != nil {
		m["measured"].(map[string]any)["tcp_stack"] = stack
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFromMeta(t *testing.T) {
	// A run recorded before Since (the committed runs) has no tcp_stack: it decodes, as nil.
	st, err := FromMeta("old/meta.json", metaJSON(t, "2026-11-30T12:47:52Z", nil))
	if err != nil || st != nil {
		t.Fatalf("old run: %v, %v; want nil, nil", st, err)
	}
	// A run after Since must have it.
	if _, err := FromMeta("new/meta.json", metaJSON(t, "2026-12-09T00:00:00Z", nil)); err == nil || !strings.Contains(err.Error(), "no measured.tcp_stack") {
		t.Fatalf("new run without tcp_stack: %v, want an error", err)
	}
	st, err = FromMeta("new/meta.json", metaJSON(t, "2026-12-09T00:00:00Z", map[string]Stack{"a": good(), "b": good()}))
	if err != nil || len(st) != 2 || st["b"].CongestionControl != "bbr" {
		t.Fatalf("new run: %v, %v", st, err)
	}
	bad := good()
	bad.ECN = 7
	for name, b := range map[string][]byte{
		"invalid field": metaJSON(t, "2026-12-09T00:00:00Z", map[string]Stack{"a": bad}),
		"no side":       metaJSON(t, "2026-12-09T00:00:00Z", map[string]Stack{}),
		"unknown key":   metaJSON(t, "2026-11-01T00:00:00Z", map[string]any{"a": map[string]any{"congestion_control": "bbr", "cc": "x"}}),
		"wrong type":    metaJSON(t, "2026-11-01T00:00:00Z", map[string]any{"a": map[string]any{"ecn": "2"}}),
		"not an object": metaJSON(t, "2026-11-01T00:00:00Z", []int{1}),
		"not JSON":      []byte("{"),
		"unnamed side":  metaJSON(t, "2026-12-09T00:00:00Z", map[string]Stack{"": good()}),
	} {
		if _, err := FromMeta("x/meta.json", b); err == nil || !strings.HasPrefix(err.Error(), "x/meta.json") {
			t.Errorf("%s: FromMeta = %v, want an error naming the file", name, err)
		}
	}
}

func FuzzFromMeta(f *testing.F) {
	ok, _ := json.Marshal(map[string]any{"start": "2026-12-09T00:00:00Z", "measured": map[string]any{"tcp_stack": map[string]Stack{"a": good()}}})
	f.Add(ok)
	f.Add([]byte(`{"start":"2026-11-30T12:47:52Z","measured":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := FromMeta("f", b)
		if err != nil {
			return
		}
		for side, s := range st {
			if err := s.Validate(); err != nil || side == "" {
				t.Fatalf("FromMeta took side %q with %v", side, err)
			}
		}
	})
}
