package picostudy

import (
	"os"
	"testing"

	"pqrepro/analysis/agreement"
	"pqrepro/internal/jsonnum"
)

// TestCompareItems: the committed results agree with themselves (an
// operation timed once has no standard error; 36 operations of the 12
// schemes, SPHINCS+ included, three items each); 20 % slower ML-DSA
// signing is inconsistent (the emulator's cycles are exact); a scheme the new run lacks is listed as absent.
func TestCompareItems(t *testing.T) {
	b, err := os.ReadFile("../../results/pico.json")
	if err != nil {
		t.Skip("no committed results/pico.json")
	}
	r, err := jsonnum.Decode[Results]("results/pico.json", b)
	if err != nil {
		t.Fatal(err)
	}
	study := func(items []agreement.Item) *agreement.Report {
		return agreement.Judge(agreement.DefaultRule, agreement.Study{Name: "pico", Items: items})
	}
	ops := 0 // three items each: mean cycles, mean time, peak stack
	for _, sc := range r.Schemes {
		ops += len(sc.Ops)
	}
	if c := study(CompareItems(r, r)).Counts(); c.Inconsistent != 0 || c.Judged+c.NotJudged[agreement.ReasonNoSE] != c.Items || c.Items != 3*ops {
		t.Errorf("self: %s", c)
	}
	items := CompareItems(r, r)
	ch := CalibrationChanges()[0]
	if !ch.Apply("pico", items, ch.Size) {
		t.Fatal("the change touched nothing")
	}
	if c := study(items).Counts(); c.Inconsistent < 3 {
		t.Errorf("ML-DSA signing 20 %% slower: %s, want at least the 3 schemes' signing cycles inconsistent", c)
	}
	short := *r
	short.Schemes = map[string]*Scheme{}
	for k, v := range r.Schemes {
		if k != "rsa-2048" {
			short.Schemes[k] = v
		}
	}
	if c := study(CompareItems(r, &short)).Counts(); c.NotJudged[agreement.ReasonNotInNew] != 3*len(r.Schemes["rsa-2048"].Ops) || c.NotJudged[agreement.ReasonNotInNew] == 0 {
		t.Errorf("without rsa-2048: %s", c)
	}
}
