package picostudy

import (
	"fmt"
	"strings"

	"pqrepro/internal/render"
)

// factorWords names a factor in the table's notes.
var factorWords = map[string]string{
	"clock_mhz": "clock (MHz)", "runtime": "run-time routines", "message_bytes": "message bytes", "code_in": "code in",
}

// configurationsTable renders what each factor moved: per configuration
// and operation, its mean cycles and time over the primary's. A run with
// one configuration gets one row of dashes that says so.
func configurationsTable(r *Results) (string, error) {
	t := render.Table{Label: "tab:pico-configurations", Align: "lllrrrrrr",
		Caption: fmt.Sprintf("What each factor moved: every configuration of the run beside the primary, per operation (%s)", source(r)),
		Header: []string{"Configuration", "Scheme", "Operation", "Cycles, primary", "Cycles", "Ratio",
			"Time, primary (ms)", "Time (ms)", "Ratio"}}
	c := r.Configurations
	if c == nil || len(c.Others) == 0 {
		t.Rows = append(t.Rows, []string{"---", "---", "---", "---", "---", "---", "---", "---", "---"})
		t.Notes = fmt.Sprintf("--- : not measured in this run: it ran one configuration, the primary at %s\\,MHz, "+
			"on which every claim is judged. A profile's configurations (experiments/pico.toml) run each image again with other factors.",
			mhzText(r.ClockHz))
		return t.Latex()
	}
	p := c.Primary
	var notes []string
	for _, o := range c.Others {
		var ds []string
		for _, d := range o.Differs {
			ds = append(ds, fmt.Sprintf("%s %s $\\to$ %s", factorWords[d.Factor], render.Escape(d.Primary), render.Escape(d.Value)))
		}
		notes = append(notes, fmt.Sprintf("%s: %s", render.Escape(o.Factors.Name), strings.Join(ds, ", ")))
		prevScheme := ""
		for i, m := range o.Moved {
			name, scheme := "", ""
			if i == 0 {
				name = render.Escape(o.Factors.Name)
			}
			if m.Scheme != prevScheme {
				scheme = render.Escape(displayName(m.Scheme))
				prevScheme = m.Scheme
			}
			t.Rows = append(t.Rows, []string{name, scheme, render.Escape(m.Op), thousands(m.PrimaryCycles), thousands(m.Cycles),
				render.Fixed(m.CyclesRatio, 3), ms(ptr(m.PrimaryMs)), ms(ptr(m.Ms)), render.Fixed(m.TimeRatio, 3)})
		}
	}
	t.Notes = fmt.Sprintf("Primary ([build]'s, its times and claims as in the other tables): %s\\,MHz, run-time routines %s, "+
		"%d-byte messages, code in %s. Factors unlike the primary's: %s. Means; time = mean SysTick cycles / the configuration's own clock, "+
		"so a clock factor alone moves every time by the ratio of the clocks and no cycle count. ML-DSA signing: the same seed signs the same "+
		"messages, so its mean is of the same rejection paths unless the message length differs.",
		mhzText(p.ClockHz), render.Escape(p.Runtime), p.MessageBytes, render.Escape(p.CodeIn), strings.Join(notes, "; "))
	if r.Emulated {
		t.Notes += " Emulated."
	}
	return t.Latex()
}
