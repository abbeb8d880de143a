package tlsstudy

import (
	"os"
	"slices"
	"strings"
	"testing"

	"pqrepro/analysis/agreement"
)

func committedResults(t *testing.T) *Results {
	t.Helper()
	b, err := os.ReadFile("../../results/tls.json")
	if err != nil {
		t.Skip("no committed results/tls.json")
	}
	r, err := DecodeResults("results/tls.json", b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCompareItemsSelf: a run compared with itself has every item
// consistent or not judged for a stated reason, reads the round-level
// increase and its cluster-bootstrap standard error, and lists an item the new run lacks.
func TestCompareItemsSelf(t *testing.T) {
	r := committedResults(t)
	items := CompareItems(r, r)
	if len(items) < 20 {
		t.Fatalf("%d items", len(items))
	}
	rep := agreement.Judge(agreement.DefaultRule, agreement.Study{Name: "tls", Items: items, HostsMatch: true, RefProfile: r.Profile, NewProfile: r.Profile})
	for _, j := range rep.Items {
		if j.Status == agreement.Inconsistent || j.Status == agreement.NotJudged && j.Reason != agreement.ReasonNoDirection {
			t.Errorf("%s: %v %s %s", j.Name, j.Status, j.Reason, j.Why)
		}
	}
	c := r.Families["matrix"].Comparisons[0]
	if got := items[len(r.Families["paper"].Comparisons)*2].Ref; got.Est != float64(c.Rounds.IncreaseMs) || got.SE != float64(c.Rounds.SE) {
		t.Errorf("the first matrix item is %+v, want the round-level increase %g and its se %g", got, c.Rounds.IncreaseMs, c.Rounds.SE)
	}
	short := *r
	short.Configs = short.Configs[1:]
	missing := 0
	for _, it := range CompareItems(r, &short) {
		if it.New.Absent {
			missing++
			if !strings.Contains(it.Name, r.Configs[0].Config) {
				t.Errorf("absent %s", it.Name)
			}
		}
	}
	if missing != 1 {
		t.Errorf("%d absent items, want 1", missing)
	}
}

func TestCalibrationChanges(t *testing.T) {
	r := committedResults(t)
	for _, ch := range CalibrationChanges(r) {
		items := CompareItems(r, r)
		if !ch.Apply("tls", items, ch.Size) {
			t.Errorf("%s touched no item", ch.Name)
		}
		if ch.Apply("net", items, ch.Size) {
			t.Errorf("%s touched another study", ch.Name)
		}
	}
	// Each reversal turns one claim's effect around, fully at its size,
	// and leaves the others alone.
	for role, name := range map[string]string{"pq-sig": "ML-DSA-87's increase reversed", "hybrid": "the hybrid's increase reversed"} {
		i := slices.IndexFunc(CalibrationChanges(r), func(c agreement.Change) bool { return strings.HasPrefix(c.Name, name) })
		if i < 0 {
			t.Fatalf("no change %q", name)
		}
		ch := CalibrationChanges(r)[i]
		items := CompareItems(r, r)
		ch.Apply("tls", items, ch.Size)
		for j, it := range items {
			want := it.Ref.Est
			if it.Name == "paper "+role+" vs baseline difference" || (j > 0 && it.Kind == agreement.Direction && items[j-1].Name == "paper "+role+" vs baseline difference") {
				want = -it.Ref.Est
				if want >= 0 {
					t.Errorf("%s: the reference effect %s = %v is not positive, so reversing it tests nothing", name, it.Name, it.Ref.Est)
				}
			}
			if it.New.Est != want {
				t.Errorf("%s: %s = %v, want %v", name, it.Name, it.New.Est, want)
			}
		}
	}
}
