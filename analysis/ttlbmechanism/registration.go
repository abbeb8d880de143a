package ttlbmechanism

import (
	"fmt"
	"strconv"

	"pqrepro/analysis/gapmodel"
	"pqrepro/analysis/ttlb"
)

// The model, arm and pad the second registration allows
// (analysis/ttlb/mechanism2.txt).
const (
	// ModelIntervention is prediction 2's model: an X25519 arm whose
	// server flight is padded to the hybrid's finishes as soon as the
	// hybrid.
	ModelIntervention = "intervention"
	// PaddedArm is the padded arm's group column (experiments/net/netrun
	// records it under this name; analysis/ttlb leaves its rows out).
	PaddedArm = ttlb.PaddedArm
	// PadBytes is the registered pad, the hybrid's server share less
	// X25519's and the staple's framing. The share is 1,088 + 32 (FIPS 203
	// table 3, draft-ietf-tls-ecdhe-mlkem), X25519's 32, the framing 8
	// bytes (RFC 8446 4.2, RFC 6066 8).
	PadBytes = 1088 + 32 - 32 - 8
)

// minResamples is the fewest bootstrap resamples the parser accepts: with
// fewer, the SD of the errors (SE_i) rests on too few draws to bound.
const minResamples = 100

// Registration is what analysis/ttlb/mechanism2.txt fixes before the
// run: the model, the arm and its pad, the family-wise alpha, the
// bootstrap's resamples and seed.
type Registration struct {
	Model     string  // ModelIntervention
	Arm       string  // PaddedArm
	PadBytes  int     // PadBytes
	Alpha     float64 // family-wise rate per congestion control, in (0, 1)
	Resamples int     // B, at least minResamples
	Seed      uint64  // the PCG's seed (its stream: FNV-1a 64 of "ttlb-mechanism-2")
}

// Registered is the registration committed in analysis/ttlb/mechanism2.txt.
var Registered = gapmodel.Must(ParseRegistration(ttlb.Mechanism2Text))

// ParseRegistration reads the key: value lines of mechanism2.txt, strictly.
//
// A key line starts at the margin with one word and a colon; every other
// line is prose (gapmodel.KeyLines, strict). An unknown key, a key given
// twice or missing, a model, arm or pad other than the registered one,
// an alpha outside (0, 1), fewer than 100 resamples or a seed that is not
// a whole number is an error naming its line.
func ParseRegistration(b []byte) (Registration, error) {
	var r Registration
	keys := []string{"model", "arm", "pad-bytes", "alpha", "resamples", "seed"}
	err := gapmodel.KeyLines(b, keys, true, func(key, val string) (err error) {
		switch key {
		case "model":
			r.Model = val
			if val != ModelIntervention {
				err = fmt.Errorf("model %q: the one model of this registration is %q", val, ModelIntervention)
			}
		case "arm":
			r.Arm = val
			if val != PaddedArm {
				err = fmt.Errorf("arm %q: the runner records the padded arm as %q", val, PaddedArm)
			}
		case "pad-bytes":
			r.PadBytes, err = strconv.Atoi(val)
			if err == nil && r.PadBytes != PadBytes {
				err = fmt.Errorf("pad-bytes %d: the pad is 1,120 - 32 - 8 = %d bytes", r.PadBytes, PadBytes)
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
		return Registration{}, fmt.Errorf("%s: %w", ttlb.Mechanism2File, err)
	}
	return r, nil
}
