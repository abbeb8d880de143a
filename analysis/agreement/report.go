package agreement

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Counts are a report's totals for the overall line.
type Counts struct {
	Items, Judged, Consistent, Inconsistent int
	// NotJudged counts the items not judged by reason.
	NotJudged map[string]int
}

// Counts totals the report.
func (r *Report) Counts() Counts {
	c := Counts{NotJudged: map[string]int{}}
	for _, j := range r.Items {
		c.Items++
		switch j.Status {
		case Consistent:
			c.Judged++
			c.Consistent++
		case Inconsistent:
			c.Judged++
			c.Inconsistent++
		default:
			c.NotJudged[j.Reason]++
		}
	}
	return c
}

// String is the counts as the overall line says them, e.g. "80 items: 62
// judged, 62 consistent, 0 inconsistent; 18 not judged (18 host
// differs)".
func (c Counts) String() string {
	nj := 0
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c.NotJudged)) {
		nj += c.NotJudged[k]
		parts = append(parts, fmt.Sprintf("%d %s", c.NotJudged[k], k))
	}
	s := fmt.Sprintf("%d items: %d judged, %d consistent, %d inconsistent; %d not judged", c.Items, c.Judged, c.Consistent, c.Inconsistent, nj)
	if nj > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// Inconsistent reports whether any judged item is inconsistent.
func (r *Report) Inconsistent() bool { return r.Counts().Inconsistent > 0 }

// Table is every item: both estimates with their standard errors, the
// interval, the verdict and why.
func (r *Report) Table() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "study\titem\tclass\treference (se)\tnew run (se)\t%.0f %% interval\tverdict\twhy\n", 100*r.Rule.Level)
	for _, j := range r.Items {
		verdict := j.Status.String()
		if j.Status == NotJudged {
			verdict += " (" + j.Reason + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.Study, j.Name, j.Class, value(j.Ref, j.Unit), value(j.New, j.Unit), interval(j.Lo, j.Hi), verdict, j.Why)
	}
	w.Flush()
	return b.String()
}

func value(v Value, unit string) string {
	switch {
	case v.Absent:
		return "absent"
	case math.IsNaN(v.Est):
		return "null"
	}
	s := fmt.Sprintf("%.5g", v.Est)
	if unit != "" {
		s += " " + unit
	}
	if !math.IsNaN(v.SE) && v.SE != 0 {
		s += fmt.Sprintf(" (%.2g)", v.SE)
	}
	return s
}

func interval(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "-"
	}
	f := func(x float64) string {
		if math.IsInf(x, 0) {
			if x > 0 {
				return "+inf"
			}
			return "-inf"
		}
		return fmt.Sprintf("%.5g", x)
	}
	return "[" + f(lo) + ", " + f(hi) + "]"
}
