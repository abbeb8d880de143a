package linkemu

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func ms_(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func good() Direction {
	return Direction{Delay: ms_(25), Jitter: ms_(2), Loss: 1, Rate: 10e6, Queue: 64000}
}

func TestValidate(t *testing.T) {
	mod := func(f func(d *Direction)) Scenario {
		d := good()
		f(&d)
		return Scenario{Name: "t", AtoB: d, BtoA: good(), Seed: 1}
	}
	cases := []struct {
		name string
		sc   Scenario
		want string // substring of the error; "" for valid
	}{
		{"valid", Symmetric("ok", good(), 1), ""},
		{"valid zero delay unlimited", Symmetric("ok", Direction{Rate: Unlimited}, 1), ""},
		{"valid mtu zero means default", Scenario{Name: "m", AtoB: good(), BtoA: good()}, ""},
		{"valid loss 100", mod(func(d *Direction) { d.Loss = 100 }), ""},
		{"zero value", Scenario{}, "rate 0 bit/s must be > 0"},
		{"negative delay", mod(func(d *Direction) { d.Delay = -1; d.Jitter = 0 }), "negative delay"},
		{"huge delay", mod(func(d *Direction) { d.Delay = time.Minute }), "unit mistake"},
		{"negative jitter", mod(func(d *Direction) { d.Jitter = -1 }), "negative jitter"},
		{"jitter above delay", mod(func(d *Direction) { d.Jitter = ms_(30) }), "larger than delay"},
		{"loss above 100", mod(func(d *Direction) { d.Loss = 100.5 }), "above 100 %"},
		{"negative loss", mod(func(d *Direction) { d.Loss = -0.1 }), "negative loss"},
		{"NaN loss", mod(func(d *Direction) { d.Loss = math.NaN() }), "not a number"},
		{"inf loss", mod(func(d *Direction) { d.Loss = math.Inf(1) }), "not a number"},
		{"zero rate", mod(func(d *Direction) { d.Rate = 0 }), "rate 0 bit/s must be > 0"},
		{"negative rate", mod(func(d *Direction) { d.Rate = -5 }), "must be > 0"},
		{"tiny rate", mod(func(d *Direction) { d.Rate = 100 }), "below 8000"},
		{"queue below mtu", mod(func(d *Direction) { d.Queue = 1000 }), "cannot hold one 1500-byte packet"},
		{"negative queue unlimited", mod(func(d *Direction) { d.Rate = Unlimited; d.Queue = -1 }), "queue -1 bytes outside"},
		{"small mtu", Scenario{Name: "m", AtoB: good(), BtoA: good(), MTU: 100}, "mtu 100 outside"},
		{"big mtu", Scenario{Name: "m", AtoB: good(), BtoA: good(), MTU: 70000}, "mtu 70000 outside"},
		{"b_to_a named", Scenario{Name: "m", AtoB: good(), BtoA: Direction{Delay: -ms_(1), Rate: Unlimited}}, "b_to_a: negative delay"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.sc.Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate accepted %v", c.sc)
			}
			if !errors.Is(err, ErrInvalidScenario) {
				t.Errorf("error %v does not wrap ErrInvalidScenario", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

func TestValidateReportsAll(t *testing.T) {
	sc := Scenario{Name: "x", AtoB: Direction{Delay: -1, Loss: 200, Rate: 0}, BtoA: Direction{Rate: Unlimited, Loss: -1}}
	err := sc.Validate()
	for _, want := range []string{"a_to_b: negative delay", "a_to_b: loss 200", "a_to_b: rate 0", "b_to_a: negative loss"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %q", err, want)
		}
	}
}

func TestParseRate(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  bool
	}{
		{"unlimited", Unlimited, false},
		{"Unlimited", Unlimited, false},
		{"10mbit", 10e6, false},
		{"10Mbit", 10e6, false},
		{"1.5mbit", 1.5e6, false},
		{"100kbit", 100e3, false},
		{"1gbit", 1e9, false},
		{"8000", 8000, false},
		{"8000bit", 8000, false},
		{" 2 mbit ", 2e6, false},
		{"0", 0, false}, // parses; Validate rejects
		{"", 0, true},
		{"mbit", 0, true},
		{"-1mbit", 0, true},
		{"10mbps", 0, true},
		{"10MB", 0, true},
		{"1e30gbit", 0, true},
		{"NaN", 0, true},
		{"inf", Unlimited, false},
		{"0x10", 0, true},
		{"1_000", 0, true},
	}
	for _, c := range cases {
		got, err := ParseRate(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d, err %v", c.in, got, err, c.want, c.err)
		}
	}
	for _, r := range []int64{Unlimited, 1, 999, 8000, 10e6, 2.5e6, 1e9, 123456789} {
		s := FormatRate(r)
		back, err := ParseRate(s)
		if err != nil || back != r {
			t.Errorf("ParseRate(FormatRate(%d) = %q) = %d, %v", r, s, back, err)
		}
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"unlimited", "10mbit", "1.5kbit", "0", "-3", "1e9bit", "gbit", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			return
		}
		if r < 0 {
			t.Fatalf("ParseRate(%q) = %d < 0", s, r)
		}
		back, err := ParseRate(FormatRate(r))
		if err != nil || back != r {
			t.Fatalf("round trip of %q: %d -> %q -> %d, %v", s, r, FormatRate(r), back, err)
		}
	})
}

func TestQuantile7(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {0.5, 2.5}, {1, 4}, {0.25, 1.75}, {0.99, 3.97}} {
		if got := Quantile7(xs, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile7(%v, %v) = %v, want %v", xs, c.p, got, c.want)
		}
	}
	if !math.IsNaN(Quantile7(nil, 0.5)) {
		t.Error("Quantile7 of nothing is not NaN")
	}
}

func TestOwnerPID(t *testing.T) {
	for _, c := range []struct {
		name string
		want int
	}{{"pqr-123-4-a", 123}, {"x99-1-b", 99}, {"pqr-x-1-a", 0}, {"pqr-", 0}, {"pqr--5", 0}, {"pqr-77", 0}, {"pqr-5-x-a", 0}, {"a-b-c-12-3-a", 12}} {
		if got := ownerPID(c.name); got != c.want {
			t.Errorf("ownerPID(%q) = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestOptionsInvalid(t *testing.T) {
	for _, o := range []Options{
		{Prefix: "Bad!"},
		{Prefix: "way-too-long-prefix-for-a-namespace-name"},
		{AddrA: mustPrefix("10.0.0.1/24"), AddrB: mustPrefix("10.0.1.2/24")},
		{AddrA: mustPrefix("10.0.0.1/24"), AddrB: mustPrefix("10.0.0.1/24")},
		{AddrA: mustPrefix("fd00::1/64"), AddrB: mustPrefix("fd00::2/64")},
		{TxQueueLen: -1},
		{InFlight: -1},
	} {
		if err := o.fill(); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}
