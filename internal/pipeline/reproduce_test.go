package pipeline

import (
	"strconv"
	"strings"
	"testing"
)

func TestCompareStudy(t *testing.T) {
	tlsJSON := func(diff, p, median float64) []byte {
		return []byte(strings.NewReplacer("DIFF", ftoa(diff), "P", ftoa(p), "MED", ftoa(median)).Replace(
			`{"families":{"matrix":{"comparisons":[{"target":"mldsa87/X25519","median_diff_ms":DIFF,"p_holm":P,"median_target_ms":MED}]}}}`))
	}
	for _, tc := range []struct {
		name     string
		now      []byte
		disagree int
		why      string
	}{
		{"same", tlsJSON(0.8, 1e-9, 1.3), 0, ""},
		{"reversed", tlsJSON(-0.1, 1e-9, 1.3), 1, "direction differs"},
		{"not significant", tlsJSON(0.8, 0.2, 1.3), 1, "significance differs"},
		{"slower", tlsJSON(0.8, 1e-9, 2.0), 1, "more than 20 %"},
	} {
		rows, err := compareStudy("tls", tlsJSON(0.8, 1e-9, 1.3), tc.now)
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for _, r := range rows {
			if !r.agrees {
				bad++
				if !strings.Contains(r.why, tc.why) {
					t.Errorf("%s: why = %q, want %q", tc.name, r.why, tc.why)
				}
			}
		}
		if bad != tc.disagree {
			t.Errorf("%s: %d rows disagree, want %d: %+v", tc.name, bad, tc.disagree, rows)
		}
	}
	// The gap analysis: each cell's increases, and each factor change the
	// reference finds significant.
	gapJSON := func(inc, p, change float64) []byte {
		return []byte(strings.NewReplacer("INC", ftoa(inc), "PH", ftoa(p), "CH", ftoa(change), "LO", ftoa(change-0.1), "HI", ftoa(change+0.1)).Replace(
			`{"families":{"matrix":{"comparisons":[]}},"gap":{` +
				`"cells":[{"stack":"go","path":"loopback","keyshare":"direct","comparisons":[{"role":"hybrid","median_diff_ms":INC,"p_holm":PH}]}],` +
				`"factors":[{"factor":"stack","effects":[{"role":"hybrid","from_cell":{"stack":"go","path":"bridge","keyshare":"direct"},"to_cell":{"stack":"openssl","path":"bridge","keyshare":"direct"},"change_ms":CH,"lower":LO,"upper":HI,"p_holm":0.001},` +
				`{"role":"pq-kem","from_cell":{"stack":"go","path":"bridge","keyshare":"direct"},"to_cell":{"stack":"openssl","path":"bridge","keyshare":"direct"},"change_ms":-0.01,"p_holm":0.5}]}]}}`))
	}
	for _, tc := range []struct {
		name     string
		now      []byte
		disagree int
		why      string
	}{
		{"gap same", gapJSON(1.3, 1e-9, 1.0), 0, ""},
		{"gap cell not significant", gapJSON(1.3, 0.3, 1.0), 1, "significance differs"},
		{"gap change reversed", gapJSON(1.3, 1e-9, -0.2), 1, "excludes the reference's direction"},
		{"gap change unresolved", gapJSON(1.3, 1e-9, -0.05), 0, ""},
		{"gap cell missing", []byte(`{"families":{"matrix":{"comparisons":[]}},"gap":{"cells":[],"factors":[]}}`), 2, "not in the new run"},
	} {
		rows, err := compareStudy("tls", gapJSON(1.3, 1e-9, 1.0), tc.now)
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for _, r := range rows {
			if !r.agrees || r.why != "" {
				bad++
				if !strings.Contains(r.why, tc.why) {
					t.Errorf("%s: why = %q, want %q", tc.name, r.why, tc.why)
				}
			}
		}
		// 1 cell row + 1 factor row (the non-significant change is skipped).
		if bad != tc.disagree || len(rows) != 2 {
			t.Errorf("%s: %d of %d rows disagree, want %d of 2: %+v", tc.name, bad, len(rows), tc.disagree, rows)
		}
	}
	pico := func(v float64) []byte {
		return []byte(`{"published":[{"key":"mlkem512_exchange_ms","ours":` + ftoa(v) + `}]}`)
	}
	rows, err := compareStudy("pico", pico(32.46), pico(32.47))
	if err != nil || len(rows) != 1 || !rows[0].agrees {
		t.Errorf("pico same: %+v %v", rows, err)
	}
	rows, _ = compareStudy("pico", pico(32.46), pico(40))
	if rows[0].agrees {
		t.Error("pico 23 % slower agrees")
	}
	if _, err := compareStudy("tls", []byte(`{}`), []byte(`{}`)); err == nil {
		t.Error("empty results compared without error")
	}
}

func ftoa(f float64) string { return strings.TrimRight(strings.TrimRight(fmtG(f), "0"), ".") }

func fmtG(f float64) string { return strconv.FormatFloat(f, 'f', 6, 64) }
