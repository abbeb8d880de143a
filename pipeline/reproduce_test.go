package pipeline

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestCompareEffect(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name           string
		rd, rp, nd, np float64
		want           outcome
		why            string
	}{
		{"same direction, both significant", 0.8, 1e-9, 0.7, 1e-6, agrees, "same direction"},
		{"reversed, both significant", 0.8, 1e-9, -0.1, 1e-3, differs, "direction differs"},
		{"both not significant, signs differ", 0.009, 0.4, -0.038, 0.53, agrees, "not significant in either run"},
		// Issue 13: a new -0.038 ms at p = 0.53 against a significant
		// reference +0.009 ms is not a difference in direction.
		{"reference significant only, signs differ", 0.009, 1e-3, -0.038, 0.53, inconclusive, "significant in the reference run only"},
		{"reference significant only, same sign", 0.8, 1e-9, 0.1, 0.2, inconclusive, "reference run only"},
		{"new significant only", 0.01, 0.3, 0.5, 1e-4, inconclusive, "significant in the new run only"},
		{"at alpha is not significant", 0.8, 0.05, -0.8, 0.05, agrees, "not significant"},
		{"just below alpha", 0.8, 0.0499, -0.8, 0.0499, differs, "direction differs"},
		{"missing p counts as not significant", 0.8, 1e-9, -0.8, nan, inconclusive, "reference run only"},
		{"zero against a significant negative", 0, 1e-9, -0.2, 1e-9, differs, "direction differs"},
	} {
		got, why := compareEffect(tc.rd, tc.rp, tc.nd, tc.np)
		if got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%s: compareEffect(%v, %v, %v, %v) = %v (%s), want %v (%s)", tc.name, tc.rd, tc.rp, tc.nd, tc.np, got, why, tc.want, tc.why)
		}
	}
}

func TestCompareStudy(t *testing.T) {
	tlsJSON := func(diff, p, median float64) []byte {
		return []byte(strings.NewReplacer("DIFF", ftoa(diff), "P", ftoa(p), "MED", ftoa(median)).Replace(
			`{"families":{"matrix":{"comparisons":[{"target":"mldsa87/X25519","median_diff_ms":DIFF,"p_holm":P,"median_target_ms":MED}]}}}`))
	}
	netJSON := func(diff, p float64) []byte {
		return []byte(`{"comparisons":[{"scenario":"lan","round":1000,"diff_ms":` + ftoa(diff) + `,"mwu_p":0.000001,"mwu_p_bonferroni":` + ftoa(p) + `,"baseline_median_ms":1.77}]}`)
	}
	for _, tc := range []struct {
		name      string
		study     string
		ref, now  []byte
		bad, inc  int
		why, item string
	}{
		{"tls same", "tls", tlsJSON(0.8, 1e-9, 1.3), tlsJSON(0.8, 1e-9, 1.3), 0, 0, "", ""},
		{"tls reversed", "tls", tlsJSON(0.8, 1e-9, 1.3), tlsJSON(-0.1, 1e-9, 1.3), 1, 0, "direction differs", ""},
		{"tls not significant now", "tls", tlsJSON(0.8, 1e-9, 1.3), tlsJSON(0.8, 0.2, 1.3), 0, 1, "", "reference run only"},
		{"tls not significant now, reversed", "tls", tlsJSON(0.009, 1e-3, 1.3), tlsJSON(-0.038, 0.53, 1.3), 0, 1, "", "reference run only"},
		{"tls slower", "tls", tlsJSON(0.8, 1e-9, 1.3), tlsJSON(0.8, 1e-9, 2.0), 1, 0, "more than 20 %", ""},
		{"net same", "net", netJSON(0.16, 1e-100), netJSON(0.15, 1e-90), 0, 0, "", ""},
		{"net reversed, both significant", "net", netJSON(0.16, 1e-100), netJSON(-0.15, 1e-9), 1, 0, "direction differs", ""},
		// The Bonferroni-corrected p decides, not the uncorrected one.
		{"net reversed, not significant after correction", "net", netJSON(0.16, 1e-100), netJSON(-0.01, 0.6), 0, 1, "", "reference run only"},
	} {
		rows, err := compareStudy(registered(tc.study), tc.ref, tc.now)
		if err != nil {
			t.Fatal(err)
		}
		bad, inc := 0, 0
		for _, r := range rows {
			switch r.outcome {
			case differs:
				bad++
				if !strings.Contains(r.why, tc.why) {
					t.Errorf("%s: why = %q, want %q", tc.name, r.why, tc.why)
				}
			case inconclusive:
				inc++
				if !strings.Contains(r.why, tc.item) {
					t.Errorf("%s: why = %q, want %q", tc.name, r.why, tc.item)
				}
			}
		}
		if bad != tc.bad || inc != tc.inc {
			t.Errorf("%s: %d rows differ and %d are inconclusive, want %d and %d: %+v", tc.name, bad, inc, tc.bad, tc.inc, rows)
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
		name string
		now  []byte
		want []outcome // the cell row, then the factor row
		why  string
	}{
		{"gap same", gapJSON(1.3, 1e-9, 1.0), []outcome{agrees, agrees}, ""},
		{"gap cell not significant", gapJSON(1.3, 0.3, 1.0), []outcome{inconclusive, agrees}, "significant in the reference run only"},
		{"gap change reversed", gapJSON(1.3, 1e-9, -0.2), []outcome{agrees, differs}, "wholly on the other side of zero"},
		{"gap change unresolved", gapJSON(1.3, 1e-9, -0.05), []outcome{agrees, inconclusive}, "includes zero"},
		{"gap cell missing", []byte(`{"families":{"matrix":{"comparisons":[]}},"gap":{"cells":[],"factors":[]}}`), []outcome{differs, differs}, "not in the new run"},
	} {
		rows, err := compareStudy(registered("tls"), gapJSON(1.3, 1e-9, 1.0), tc.now)
		if err != nil {
			t.Fatal(err)
		}
		// 1 cell row + 1 factor row (the non-significant change is skipped).
		if len(rows) != 2 {
			t.Fatalf("%s: %d rows, want 2: %+v", tc.name, len(rows), rows)
		}
		for i, r := range rows {
			if r.outcome != tc.want[i] {
				t.Errorf("%s: row %q is %v (%s), want %v", tc.name, r.item, r.outcome, r.why, tc.want[i])
			}
			if r.outcome != agrees && !strings.Contains(r.why, tc.why) {
				t.Errorf("%s: why = %q, want %q", tc.name, r.why, tc.why)
			}
		}
	}
	pico := func(v float64) []byte {
		return []byte(`{"published":[{"key":"mlkem512_exchange_ms","ours":` + ftoa(v) + `}]}`)
	}
	rows, err := compareStudy(registered("pico"), pico(32.46), pico(32.47))
	if err != nil || len(rows) != 1 || rows[0].outcome != agrees {
		t.Errorf("pico same: %+v %v", rows, err)
	}
	rows, _ = compareStudy(registered("pico"), pico(32.46), pico(40))
	if rows[0].outcome != differs {
		t.Error("pico 23 % slower agrees")
	}
	if _, err := compareStudy(registered("tls"), []byte(`{}`), []byte(`{}`)); err == nil {
		t.Error("empty results compared without error")
	}
	if rows, err := compareStudy(registered("other"), []byte(`{}`), []byte(`{}`)); err != nil || rows != nil {
		t.Errorf("a study without item rules: %v, %v", rows, err)
	}
}

// TestCompareStudyMissingValues: a value null in either run, an item the
// new run lacks and a field renamed in the results are rows or errors of
// their own, never skipped.
func TestCompareStudyMissingValues(t *testing.T) {
	pico := func(ours string) []byte {
		return []byte(`{"published":[{"key":"mlkem512_exchange_ms","ours":` + ours + `}]}`)
	}
	for _, tc := range []struct {
		name, study string
		ref, now    []byte
		want        outcome
		why         string
	}{
		{"pico null in the new run", "pico", pico("32.46"), pico("null"), differs, "missing in the new run: ours is null"},
		{"pico null in the reference", "pico", pico("null"), pico("32.46"), inconclusive, "null in the reference run"},
		{"pico null in both", "pico", pico("null"), pico("null"), inconclusive, "null in both runs"},
		{"pico key absent", "pico", pico("32.46"), []byte(`{"published":[]}`), differs, "not in the new run"},
		{"tls p null now", "tls", []byte(`{"families":{"matrix":{"comparisons":[{"target":"a","median_diff_ms":1,"p_holm":0.001,"median_target_ms":2}]}}}`),
			[]byte(`{"families":{"matrix":{"comparisons":[{"target":"a","median_diff_ms":1,"p_holm":null,"median_target_ms":2}]}}}`), differs, "p_holm is null"},
		{"net comparison absent", "net", []byte(`{"comparisons":[{"scenario":"lan","round":1000,"diff_ms":0.1,"mwu_p_bonferroni":0.001,"baseline_median_ms":1}]}`),
			[]byte(`{"comparisons":[]}`), differs, "not in the new run"},
	} {
		rows, err := compareStudy(registered(tc.study), tc.ref, tc.now)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if rows[0].outcome != tc.want || !strings.Contains(rows[0].why, tc.why) {
			t.Errorf("%s: %v (%s), want %v (%s)", tc.name, rows[0].outcome, rows[0].why, tc.want, tc.why)
		}
	}
	if _, err := compareStudy(registered("pico"), []byte(`{"publishd":[]}`), pico("1")); err == nil || !strings.Contains(err.Error(), `unknown field "publishd"`) {
		t.Errorf("a renamed field: %v", err)
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// registered is the registered study of that name, or a study with only
// the name when there is none.
func registered(name string) Study {
	for _, s := range Studies() {
		if s.Name == name {
			return s
		}
	}
	return Study{Name: name}
}
