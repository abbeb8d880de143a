package picostudy

import (
	"fmt"
	"slices"
	"strings"

	"pqrepro/internal/render"
)

// factorWords names a factor in the table's notes.
var factorWords = map[string]string{
	"clock_mhz": "clock (MHz)", "runtime": "run-time routines", "message_bytes": "message bytes", "code_in": "code in",
	"usb_irq_us": "USB interrupt period (us)",
}

// configurationsTable renders what each factor moved: per operation, the
// primary's mean and each configuration's ratios to it. A run with one
// configuration gets one row of dashes that says so.
func configurationsTable(r *Results) (string, error) {
	t := render.Table{Label: "tab:pico-configurations", Align: "llrr",
		Caption: fmt.Sprintf("What each factor moved: each configuration's mean cycles and time over the primary's, per operation (%s)", source(r)),
		Header:  []string{"Scheme", "Operation", "Cycles, primary", "Time, primary (ms)"}}
	c := r.Configurations
	if c == nil || len(c.Others) == 0 {
		t.Align += "rr"
		t.Header = append(t.Header, "Cycles ratio", "Time ratio")
		t.Rows = append(t.Rows, []string{"---", "---", "---", "---", "---", "---"})
		t.Notes = fmt.Sprintf("--- : not measured in this run: it ran one configuration, the primary at %s\\,MHz, "+
			"on which every claim is judged. A profile's configurations (experiments/pico.toml) run each image again with other factors.",
			mhzText(r.ClockHz))
		return t.Latex()
	}
	type key struct{ scheme, op string }
	moved := map[key][]*Moved{} // one per configuration, nil where it lacks the operation
	var notes []string
	// A configuration at the primary's clock moves time as it moves
	// cycles: one column; at another clock, cycles and time.
	timed := make([]bool, len(c.Others))
	for i, o := range c.Others {
		name := render.Escape(o.Factors.Name)
		timed[i] = o.Factors.ClockHz != c.Primary.ClockHz
		if timed[i] {
			t.Align += "rr"
			t.Header = append(t.Header, name+": cycles", name+": time")
		} else {
			t.Align += "r"
			t.Header = append(t.Header, name)
		}
		var ds []string
		for _, d := range o.Differs {
			ds = append(ds, fmt.Sprintf("%s %s $\\to$ %s", factorWords[d.Factor], render.Escape(d.Primary), render.Escape(d.Value)))
		}
		note := name + ": " + strings.Join(ds, ", ")
		if o.Factors.ClockHz != c.Primary.ClockHz && len(o.Moved) > 0 {
			note += fmt.Sprintf(" (the clock alone: time $\\times$ %s)", render.Fixed(o.Moved[0].ClockRatio, 3))
		}
		notes = append(notes, note)
		for j := range o.Moved {
			m := &o.Moved[j]
			k := key{m.Scheme, m.Op}
			if moved[k] == nil {
				moved[k] = make([]*Moved, len(c.Others))
			}
			moved[k][i] = m
		}
	}
	dash := false
	for _, s := range schemeOrder(r) {
		name := render.Escape(displayName(s))
		for _, op := range opOrder(r.Schemes[s]) {
			ms0 := moved[key{s, op}]
			i := slices.IndexFunc(ms0, func(m *Moved) bool { return m != nil })
			if i < 0 {
				continue // no configuration shares it with the primary
			}
			row := []string{name, render.Escape(op), thousands(ms0[i].PrimaryCycles), ms(ptr(ms0[i].PrimaryMs))}
			name = ""
			for i, m := range ms0 {
				switch {
				case m == nil && timed[i]:
					row, dash = append(row, "---", "---"), true
				case m == nil:
					row, dash = append(row, "---"), true
				case timed[i]:
					row = append(row, render.Fixed(m.CyclesRatio, 3), render.Fixed(m.TimeRatio, 3))
				default:
					row = append(row, render.Fixed(m.CyclesRatio, 3))
				}
			}
			t.Rows = append(t.Rows, row)
		}
	}
	p := c.Primary
	t.Notes = fmt.Sprintf("Primary ([build]'s; its times and claims are those of the other tables): %s\\,MHz, run-time routines %s, "+
		"%d-byte messages, code in %s. Each configuration's columns: its mean / the primary's, of cycles, and of time where its clock differs "+
		"(time = mean SysTick cycles / the configuration's own clock; at the primary's clock the two ratios are one). Factors unlike the primary's: %s. "+
		"ML-DSA signing: the same seed signs the same messages, so its means are over the same rejection paths unless the message length differs.",
		mhzText(p.ClockHz), render.Escape(p.Runtime), p.MessageBytes, render.Escape(p.CodeIn), strings.Join(notes, "; "))
	if dash {
		t.Notes = "--- : the configuration did not run the operation. " + t.Notes
	}
	if r.Emulated {
		t.Notes += " Emulated."
	}
	return t.Latex()
}
