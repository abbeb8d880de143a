package netstudy

import (
	"os"
	"testing"

	"pqrepro/analysis/agreement"
	"pqrepro/internal/jsonnum"
)

// TestCompareItemsSelf: the committed results compared with themselves
// judge every item consistent, and a comparison the new run lacks is
// listed as absent.
func TestCompareItemsSelf(t *testing.T) {
	b, err := os.ReadFile("../../results/net.json")
	if err != nil {
		t.Skip("no committed results/net.json")
	}
	r, err := jsonnum.Decode[Results]("results/net.json", b)
	if err != nil {
		t.Fatal(err)
	}
	items := CompareItems(r, r)
	if len(items) != 4*len(r.Comparisons)+2*len(r.Series) {
		t.Errorf("%d items for %d comparisons and %d series", len(items), len(r.Comparisons), len(r.Series))
	}
	rep := agreement.Judge(agreement.DefaultRule, agreement.Study{Name: "net", Items: items, HostsMatch: true})
	for _, j := range rep.Items {
		if j.Status == agreement.Inconsistent || j.Status == agreement.NotJudged && j.Reason != agreement.ReasonNoDirection {
			t.Errorf("%s: %v %s %s", j.Name, j.Status, j.Reason, j.Why)
		}
	}
	short := *r
	short.Comparisons = short.Comparisons[1:]
	absent := 0
	for _, it := range CompareItems(r, &short) {
		if it.New.Absent {
			absent++
		}
	}
	if absent != 4 {
		t.Errorf("%d absent items, want 4", absent)
	}
}
