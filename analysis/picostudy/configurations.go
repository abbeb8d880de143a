package picostudy

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"pqrepro/datasets/picodata"
)

// The factor levels the analysis can name: experiments/pico.toml's
// [build] and [configurations.<name>] keys, as the runner records them in
// image.json (top-level keys, else its provenance map). A run made before
// a factor was recorded ran at its default.
const (
	defaultRuntime      = "libgcc"
	defaultCodeIn       = "ram"
	defaultMessageBytes = 32
	maxMessageBytes     = 4096 // the firmware's message buffer
	// configSep joins an image and its configuration in a run folder's
	// name: <image>+<configuration>[@<board>].
	configSep = "+"
)

var (
	knownRuntimes = []string{defaultRuntime, "sdk-like"}
	knownCodeIns  = []string{defaultCodeIn, "flash", "flash-cold"}
	// configName is a configuration's name as the runner allows it.
	configName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
)

// Configurations compares the configurations of a run that ran each image
// under more than one (a profile's configurations in experiments/pico.toml).
// The primary is [build]'s: the one Results.Schemes holds and the claims
// are judged on.
type Configurations struct {
	Primary Factors `json:"primary"`
	// Others are the named configurations, by name.
	Others []*Configuration `json:"others"`
	// TimeMethod says how the times of Others and Moved are made.
	TimeMethod string `json:"time_method"`
}

// Factors are one configuration's build factors.
type Factors struct {
	// Name is "" for the primary, else the [configurations.<name>] table's.
	Name         string `json:"name"`
	ClockHz      uint32 `json:"clock_hz" range:"1,"`
	Runtime      string `json:"runtime"`
	MessageBytes int    `json:"message_bytes" range:"1,"`
	CodeIn       string `json:"code_in"`
	// USBIRQMicros is the USB stdio interrupt's period (0: none, every
	// run's before the factor existed).
	USBIRQMicros int `json:"usb_irq_us,omitempty" range:"0,"`
}

// Configuration is one named configuration: its factors, those unlike the
// primary's, its per-operation summaries and what it moved.
type Configuration struct {
	Factors Factors `json:"factors"`
	// Differs are the factors unlike the primary's, in a fixed order.
	Differs []FactorChange `json:"differs"`
	// Folders are the run folders of its images.
	Folders []string `json:"folders"`
	// Schemes are its summaries, as Results.Schemes but with times from
	// cycles at its own clock (TimeMethod).
	Schemes map[string]*Scheme `json:"schemes"`
	// Moved is, per operation it shares with the primary, its mean
	// beside the primary's.
	Moved []Moved `json:"moved"`
	// Published are the original's figures beside this configuration's,
	// as Results.Published; a figure of a scheme it did not run has none.
	Published []PublishedValue `json:"published"`
}

// FactorChange is one factor unlike the primary's.
type FactorChange struct {
	Factor  string `json:"factor"`
	Primary string `json:"primary"`
	Value   string `json:"value"`
}

// Moved is one operation's mean in a configuration beside the primary's.
// Times are mean cycles / clock; TimeRatio = CyclesRatio x ClockRatio.
type Moved struct {
	Scheme        string  `json:"scheme"`
	Op            string  `json:"op"`
	PrimaryCycles float64 `json:"primary_cycles" range:"0,"`
	Cycles        float64 `json:"cycles" range:"0,"`
	CyclesRatio   float64 `json:"cycles_ratio" range:"0,"`
	PrimaryMs     float64 `json:"primary_ms" range:"0,"`
	Ms            float64 `json:"ms" range:"0,"`
	// ClockRatio = primary clock / configuration clock: what the clock
	// alone moves every time by.
	ClockRatio float64 `json:"clock_ratio" range:"0,"`
	TimeRatio  float64 `json:"time_ratio" range:"0,"`
}

// ConfigTimeMethod is Configurations.TimeMethod.
const ConfigTimeMethod = "mean SysTick cycles / the configuration's own clk_sys (the firmware's clock_hz); the primary's summaries in schemes stay the 1 MHz timer's"

// imageRecord is what the analysis reads of image.json.
type imageRecord struct {
	Board         string            `json:"board"`
	Configuration string            `json:"configuration"`
	Runtime       string            `json:"runtime"`
	ClockMHz      float64           `json:"clock_mhz"`
	MessageBytes  int               `json:"message_bytes"`
	Provenance    map[string]string `json:"provenance"`
}

// readFactors sets img's configuration factors from its image.json (rec,
// nil when the folder has none) and its folder name. A configuration named
// by both must agree; a level the analysis does not know is an error.
func readFactors(img *imageData, rec *imageRecord, rel string) error {
	base, suffix, named := strings.Cut(img.image, configSep)
	if named && suffix == "" {
		return fmt.Errorf("%w: image %s: the folder names an empty configuration", ErrInput, img.name)
	}
	f := Factors{Name: suffix, ClockHz: img.header.ClockHz, Runtime: defaultRuntime, MessageBytes: defaultMessageBytes, CodeIn: defaultCodeIn}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrInput, rel}, a...)...)
	}
	if rec == nil {
		if named {
			return fmt.Errorf("%w: image %s: %s is missing (a configuration's factors are read from it)", ErrInput, img.name, rel)
		}
	} else {
		if rec.Configuration != suffix {
			return bad("configuration %q, but its folder %s names %q", rec.Configuration, img.name, suffix)
		}
		prov := rec.Provenance
		f.Runtime = firstOf(rec.Runtime, prov["runtime"], defaultRuntime)
		f.CodeIn = firstOf(prov["code_in"], defaultCodeIn)
		if v, ok := prov["usb_irq_us"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return bad("provenance usb_irq_us %q is not a period in microseconds", v)
			}
			f.USBIRQMicros = n
		}
		f.MessageBytes = rec.MessageBytes
		if f.MessageBytes == 0 {
			f.MessageBytes = defaultMessageBytes
			if v, ok := prov["message_bytes"]; ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					return bad("provenance message_bytes %q is not a number", v)
				}
				f.MessageBytes = n
			}
		}
		mhz := rec.ClockMHz
		if v, ok := prov["clock_mhz"]; ok && mhz == 0 {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return bad("provenance clock_mhz %q is not a number", v)
			}
			mhz = x
		}
		if mhz != 0 && math.Abs(mhz*1e6-float64(f.ClockHz)) >= 1 {
			return bad("clock_mhz %v, but the firmware reported clock_hz %d", mhz, f.ClockHz)
		}
	}
	switch {
	case f.Name != "" && !configName.MatchString(f.Name):
		return bad("configuration %q is not a configuration name (lower-case letters, digits and dashes)", f.Name)
	case !slices.Contains(knownRuntimes, f.Runtime):
		return bad("runtime %q is not one of %s", f.Runtime, strings.Join(knownRuntimes, ", "))
	case !slices.Contains(knownCodeIns, f.CodeIn):
		return bad("code_in %q is not one of %s", f.CodeIn, strings.Join(knownCodeIns, ", "))
	case f.MessageBytes < 1 || f.MessageBytes > maxMessageBytes:
		return bad("message_bytes %d is not in 1..%d", f.MessageBytes, maxMessageBytes)
	case f.ClockHz == 0:
		return fmt.Errorf("%w: image %s: the firmware reported no clock", ErrInput, img.name)
	}
	img.image, img.factors = base, f
	return nil
}

// parseImageRecord reads image.json's board and factors.
func parseImageRecord(b []byte) (*imageRecord, error) {
	var rec imageRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// groupConfigurations splits the images by configuration: the primary's
// and each named one's, by name. Every image of one configuration must
// have its factors; the primary must be there.
func groupConfigurations(images []imageData) ([]imageData, map[string][]imageData, error) {
	groups := map[string][]imageData{}
	for _, img := range images {
		g := groups[img.factors.Name]
		if len(g) > 0 && g[0].factors != img.factors {
			a, b := g[0].factors, img.factors
			return nil, nil, fmt.Errorf("%w: configuration %s: image %s ran at %d Hz (runtime %s, %d-byte messages, code in %s), image %s at %d Hz (runtime %s, %d-byte messages, code in %s): one configuration must use one clock and one level of each factor",
				ErrInput, displayConfig(a.Name), g[0].name, a.ClockHz, a.Runtime, a.MessageBytes, a.CodeIn, img.name, b.ClockHz, b.Runtime, b.MessageBytes, b.CodeIn)
		}
		groups[img.factors.Name] = append(g, img)
	}
	primary := groups[""]
	if len(primary) == 0 {
		return nil, nil, fmt.Errorf("%w: the run has no image of the primary configuration ([build]'s; folders without %s<name>), only %s",
			ErrInput, configSep, strings.Join(slices.Sorted(maps.Keys(groups)), ", "))
	}
	delete(groups, "")
	return primary, groups, nil
}

func displayConfig(name string) string {
	if name == "" {
		return "primary"
	}
	return name
}

// differs lists the factors of f unlike the primary's p.
func differs(p, f Factors) []FactorChange {
	var out []FactorChange
	add := func(factor, a, b string) {
		if a != b {
			out = append(out, FactorChange{Factor: factor, Primary: a, Value: b})
		}
	}
	add("clock_mhz", mhzText(p.ClockHz), mhzText(f.ClockHz))
	add("runtime", p.Runtime, f.Runtime)
	add("message_bytes", strconv.Itoa(p.MessageBytes), strconv.Itoa(f.MessageBytes))
	add("code_in", p.CodeIn, f.CodeIn)
	add("usb_irq_us", strconv.Itoa(p.USBIRQMicros), strconv.Itoa(f.USBIRQMicros))
	return out
}

// cyclesMs is the time of a measurement at clockHz, in ms.
func cyclesMs(clockHz uint32) func(picodata.Measurement) float64 {
	return func(m picodata.Measurement) float64 { return float64(m.Cycles) / float64(clockHz) * 1000 }
}

// timerMs is the time of a measurement by the 1 MHz timer, in ms.
func timerMs(m picodata.Measurement) float64 { return float64(m.Micros) / 1000 }

// addConfigurations summarises each named configuration with times at its
// own clock and sets its means beside the primary's (res.Schemes). It
// fails on a configuration that differs from the primary in no factor; a
// configuration may run some of the images only (its images key). The board factor (boards.go) is the primary's
// only.
func addConfigurations(res *Results, primary Factors, groups map[string][]imageData, power float64) error {
	if len(groups) == 0 {
		return nil
	}
	cs := &Configurations{Primary: primary, TimeMethod: ConfigTimeMethod}
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		imgs := groups[name]
		f := imgs[0].factors
		c := &Configuration{Factors: f, Differs: differs(primary, f)}
		if len(c.Differs) == 0 {
			return fmt.Errorf("%w: configuration %s has the primary's factors (clock %s MHz, runtime %s, %d-byte messages, code in %s): it measures the primary again",
				ErrInput, name, mhzText(f.ClockHz), f.Runtime, f.MessageBytes, f.CodeIn)
		}
		for _, img := range imgs {
			c.Folders = append(c.Folders, img.name)
		}
		tmp := newResults()
		if err := addImages(tmp, imgs, power, cyclesMs(f.ClockHz)); err != nil {
			return fmt.Errorf("configuration %s: %w", name, err)
		}
		c.Schemes = tmp.Schemes
		clockRatio := float64(primary.ClockHz) / float64(f.ClockHz)
		for _, s := range schemeOrder(res) {
			sc, oc := res.Schemes[s], c.Schemes[s]
			if oc == nil {
				continue
			}
			for _, op := range opOrder(sc) {
				p, o := sc.Ops[op], oc.Ops[op]
				if o == nil || p.MeanCycles == nil || o.MeanCycles == nil || *p.MeanCycles == 0 {
					continue
				}
				pms := *p.MeanCycles / float64(primary.ClockHz) * 1000
				cms := *o.MeanCycles / float64(f.ClockHz) * 1000
				c.Moved = append(c.Moved, Moved{Scheme: s, Op: op, PrimaryCycles: *p.MeanCycles, Cycles: *o.MeanCycles,
					CyclesRatio: round(*o.MeanCycles / *p.MeanCycles), PrimaryMs: round(pms), Ms: round(cms),
					ClockRatio: round(clockRatio), TimeRatio: round(cms / pms)})
			}
		}
		if len(c.Moved) == 0 {
			return fmt.Errorf("%w: configuration %s shares no operation with the primary", ErrInput, name)
		}
		cs.Others = append(cs.Others, c)
	}
	res.Configurations = cs
	return nil
}
