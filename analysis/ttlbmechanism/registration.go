package ttlbmechanism

import (
	"fmt"
	"strconv"

	"pqrepro/analysis/gapmodel"
	"pqrepro/analysis/ttlb"
)

// The one model and fit the registration allows (analysis/ttlb/mechanism.txt).
const (
	// ModelStandardisedWindow is prediction 2's model: the difference the
	// groups would show if they differed only in their distribution of W.
	ModelStandardisedWindow = "standardised-window"
	// FitOtherToolchain takes each series' times per W from the other
	// toolchain's series of the same cell (held out).
	FitOtherToolchain = "other-toolchain"
)

// minResamples is the fewest bootstrap resamples the parser accepts: with
// fewer, the SD of the errors (SE_i) rests on too few draws to bound.
const minResamples = 100

// Registration is what analysis/ttlb/mechanism.txt fixes before the run:
// the model, its fit, the family-wise alpha, the bootstrap's resamples
// and seed.
type Registration struct {
	Model     string  // ModelStandardisedWindow
	Fit       string  // FitOtherToolchain
	Alpha     float64 // family-wise rate per congestion control, in (0, 1)
	Resamples int     // B, at least minResamples
	Seed      uint64  // the PCG's seed (its stream: FNV-1a 64 of "ttlb-mechanism")
}

// Registered is the registration committed in analysis/ttlb/mechanism.txt.
var Registered = gapmodel.Must(ParseRegistration(ttlb.MechanismText))

// ParseRegistration reads the key: value lines of mechanism.txt, strictly.
//
// A key line starts at the margin with one word and a colon; every other
// line is prose (gapmodel.KeyLines, strict). An unknown key, a key given
// twice or missing, a model or fit other than the registered one, an
// alpha outside (0, 1), fewer than 100 resamples or a seed that is not a
// whole number is an error naming its line.
func ParseRegistration(b []byte) (Registration, error) {
	var r Registration
	keys := []string{"model", "fit", "alpha", "resamples", "seed"}
	err := gapmodel.KeyLines(b, keys, true, func(key, val string) (err error) {
		switch key {
		case "model":
			r.Model = val
			if val != ModelStandardisedWindow {
				err = fmt.Errorf("model %q: the one model of this registration is %q", val, ModelStandardisedWindow)
			}
		case "fit":
			r.Fit = val
			if val != FitOtherToolchain {
				err = fmt.Errorf("fit %q: the one fit of this registration is %q", val, FitOtherToolchain)
			}
		case "alpha":
			r.Alpha, err = gapmodel.Fraction(val)
		case "resamples":
			r.Resamples, err = strconv.Atoi(val)
			if err == nil && r.Resamples < minResamples {
				err = fmt.Errorf("resamples %d: want at least %d", r.Resamples, minResamples)
			}
		case "seed":
			r.Seed, err = strconv.ParseUint(val, 10, 64)
		}
		return err
	})
	if err != nil {
		return Registration{}, fmt.Errorf("%s: %w", ttlb.MechanismFile, err)
	}
	return r, nil
}
