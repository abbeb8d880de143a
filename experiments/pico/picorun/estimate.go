package picorun

import (
	"slices"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/experiments/pico/picoboard"
)

// opMillis is the time of one operation on the M0+ at 133 MHz, in ms, used
// only to estimate wall time and order the work. The post-quantum values
// are the means of a quick emulated run (rp2040js 1.4.1, -O3); ML-DSA
// signing is the mean over its rejection loop. The classical ones are
// mbedTLS 2.28.3 from the same quick run, except RSA-2048 key generation,
// which the quick profile skips: about 66 s of simulated time in one
// emulated run (experiments/pico/picoboard), taken as 70 s since the search for primes
// varies from key to key.
var opMillis = map[string]map[string]float64{
	"ml-kem-512":  {"keygen": 9.0, "encaps": 10.6, "decaps": 12.9},
	"ml-kem-768":  {"keygen": 14.8, "encaps": 17.3, "decaps": 20.5},
	"ml-kem-1024": {"keygen": 23.4, "encaps": 26.3, "decaps": 30.3},
	"ml-dsa-44":   {"keygen": 39.5, "sign": 160, "verify": 44.3},
	"ml-dsa-65":   {"keygen": 67.7, "sign": 260, "verify": 72.6},
	"ml-dsa-87":   {"keygen": 112.7, "sign": 355, "verify": 120.3},
	"rsa-2048":    {"keygen": 70000, "sign": 2215, "verify": 46.8},
	"ecdsa-p256":  {"keygen": 175.8, "sign": 80.9, "verify": 267.1},
	"ecdh-p256":   {"keygen": 172.9, "shared": 180.1},
	// SPHINCS+ round 3.1 -simple (PQClean), measured in rp2040js (one
	// development run per set): signing takes the same time for every
	// message.
	"sphincs-sha2-128f":  {"keygen": 326.1, "sign": 7633.7, "verify": 455},
	"sphincs-shake-128f": {"keygen": 1003.2, "sign": 23495.7, "verify": 1416},
	"sphincs-sha2-128s":  {"keygen": 20867.9, "sign": 158563.9, "verify": 164.7},
}

// Emulator throughput and fixed costs behind Estimate.
//
// rp2040js ran this firmware at 24-37 simulated MHz on the reference
// machine (2 cores, two emulators at once, other work beside); 25 MHz errs
// long. Each image also costs a build (cached by firmware ID; a first build
// compiles PQClean and takes about 15 s) and a few seconds of start-up and
// test-vector output.
const (
	estimateSimHz     = 25e6
	estimateClockHz   = 133e6
	estimateBuild     = 15 * time.Second
	estimateOverhead  = 3 * time.Second
	estimateUnknownOp = 1000.0 // ms for an operation opMillis does not list
)

func opMs(scheme, op string) float64 {
	if v, ok := opMillis[scheme][op]; ok {
		return v
	}
	return estimateUnknownOp
}

// imageSimMillis is the simulated time, in ms at 133 MHz, of one run of an
// image with the profile's counts.
func imageSimMillis(c picoboard.BuildConfig, p ProfileSpec) float64 {
	var ms float64
	for _, s := range c.Schemes {
		switch {
		case slices.Contains(picodata.KEMSchemes, s):
			ms += float64(p.KEM) * (opMs(s, "keygen") + opMs(s, "encaps") + opMs(s, "decaps"))
		case slices.Contains(picodata.DSASchemes, s):
			ms += float64(p.DSAKeygen)*opMs(s, "keygen") + float64(p.DSASign)*(opMs(s, "sign")+opMs(s, "verify"))
		case slices.Contains(picodata.SPHINCSSchemes, s):
			// Each signature is verified; the first once more with a
			// flipped bit.
			signs := p.Firmware("").SLHSigns(s)
			ms += float64(p.SLHKeygen)*opMs(s, "keygen") + float64(signs)*(opMs(s, "sign")+opMs(s, "verify")) + opMs(s, "verify")
		case s == "rsa-2048":
			ms += float64(p.RSAKeygen)*opMs(s, "keygen") + float64(p.RSA)*(opMs(s, "sign")+2*opMs(s, "verify"))
		case s == "ecdsa-p256":
			// verify twice: the valid signature and a flipped one.
			ms += float64(p.ECC) * (opMs(s, "keygen") + opMs(s, "sign") + 2*opMs(s, "verify"))
		case s == "ecdh-p256":
			// Per repetition: both parties' keygen and shared secret
			// (one of each timed), then the timed whole exchange.
			ms += float64(p.ECC) * 4 * (opMs(s, "keygen") + opMs(s, "shared"))
		default:
			ms += estimateUnknownOp
		}
	}
	return ms
}

// imageEstimate is the expected wall time of emulating one image:
// simulated cycles / emulator speed + start-up.
func imageEstimate(c picoboard.BuildConfig, p ProfileSpec) time.Duration {
	sim := imageSimMillis(c, p) / 1000 * estimateClockHz / estimateSimHz
	return time.Duration(sim*float64(time.Second)) + estimateOverhead
}

// makespan schedules the durations longest first onto workers (LPT, as Run
// does) and returns when the last one ends.
func makespan(ds []time.Duration, workers int) time.Duration {
	if workers < 1 {
		workers = 1
	}
	ds = slices.Clone(ds)
	slices.SortFunc(ds, func(a, b time.Duration) int { return int(b - a) })
	load := make([]time.Duration, workers)
	for _, d := range ds {
		i := slices.Index(load, slices.Min(load))
		load[i] += d
	}
	return slices.Max(load)
}

// Estimate is the expected wall time of Run for a profile of the committed
// spec on the reference machine. It counts 2 cores: the builds one after
// the other, then the images (once per configuration) on the spec's
// workers, longest first. An unknown profile gives 0.
func Estimate(profile string) time.Duration {
	s := DefaultSpec()
	p, ok := s.Profiles[profile]
	if !ok {
		return 0
	}
	imgs, err := withConfigurations(s, selectImages(picoboard.StandardImages(), p.Images), p.Configurations)
	if err != nil {
		return 0
	}
	return estimateFor(imgs, p, s.Workers)
}

func estimateFor(imgs []picoboard.BuildConfig, p ProfileSpec, workers int) time.Duration {
	var ds []time.Duration
	for _, c := range imgs {
		ds = append(ds, imageEstimate(c, p))
	}
	return time.Duration(len(imgs))*estimateBuild + makespan(ds, workers)
}

// selectImages keeps the named images (all when names is empty), in the
// order of StandardImages.
func selectImages(all []picoboard.BuildConfig, names []string) []picoboard.BuildConfig {
	if len(names) == 0 {
		return all
	}
	var out []picoboard.BuildConfig
	for _, c := range all {
		if slices.Contains(names, c.Name) {
			out = append(out, c)
		}
	}
	return out
}
