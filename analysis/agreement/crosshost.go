package agreement

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"pqrepro/analysis/stats"
)

// A HostValue is one run's normalised item (observed / predicted from the
// host's own measurements), with the host it was measured on.
type HostValue struct {
	Host  string  // a label of the host's fingerprint
	Run   string  // the run's folder
	Ratio float64 // observed / predicted, > 0
}

// A CrossHost is a normalised item's spread over hosts: the random-effects
// model of its log ratio,
//
//	y_hr = log q_hr = mu + b_h + e_hr,  b_h ~ N(0, tau^2),  e_hr ~ N(0, sigma^2),
//
// for run r on host h. sigma^2 is the pooled within-host variance
// (degrees of freedom N - m), tau^2 the method-of-moments between-host
// variance max(0, s^2(ybar_h) - sigma^2 mean(1/n_h)) (one-way ANOVA; Searle,
// Casella and McCulloch, Variance Components, 1992, ch. 3), and mu the
// unweighted mean of the m host means. A single run on a host not in the
// set is predicted inside
//
//	mu +- t(0.975, m-1) sqrt(tau^2 + sigma^2 + s^2(ybar_h)/m),
//
// with m - 1 degrees of freedom because the hosts, not the runs, are the
// replicates of a between-host question: with three hosts the interval
// is wide, and it should be.
type CrossHost struct {
	Hosts      int     // m
	Runs       int     // N
	Mu         float64 // on the log scale
	Tau2       float64 // between-host variance of the log ratio
	Sigma2     float64 // within-host variance of the log ratio
	Lo, Hi     float64 // the prediction interval of one new run, as ratios
	hostMeanS2 float64
}

// MinHosts is the fewest hosts a cross-host prediction is made from: with
// one host there is no between-host variance to estimate.
const MinHosts = 2

// ErrTooFewHosts is FitCrossHost's error for fewer than MinHosts hosts.
var ErrTooFewHosts = errors.New("a between-host variance needs at least 2 hosts")

// FitCrossHost fits the model on values at level (0.95 for a 95 %
// prediction interval). Fewer than MinHosts hosts, or a ratio that is not
// positive and finite, is an error.
func FitCrossHost(values []HostValue, level float64) (CrossHost, error) {
	by := map[string][]float64{}
	for _, v := range values {
		if !(v.Ratio > 0) || math.IsInf(v.Ratio, 0) {
			return CrossHost{}, fmt.Errorf("run %s: ratio %v is not a positive finite number", v.Run, v.Ratio)
		}
		by[v.Host] = append(by[v.Host], math.Log(v.Ratio))
	}
	m := len(by)
	if m < MinHosts {
		return CrossHost{}, fmt.Errorf("%d host(s): %w; record quiet runs on another host", m, ErrTooFewHosts)
	}
	var means []float64
	ss, df, invN := 0.0, 0, 0.0
	for _, h := range slices.Sorted(maps.Keys(by)) {
		ys := by[h]
		mean := 0.0
		for _, y := range ys {
			mean += y
		}
		mean /= float64(len(ys))
		for _, y := range ys {
			ss += (y - mean) * (y - mean)
		}
		df += len(ys) - 1
		invN += 1 / float64(len(ys))
		means = append(means, mean)
	}
	c := CrossHost{Hosts: m, Runs: len(values)}
	if df > 0 {
		c.Sigma2 = ss / float64(df)
	}
	for _, y := range means {
		c.Mu += y
	}
	c.Mu /= float64(m)
	for _, y := range means {
		c.hostMeanS2 += (y - c.Mu) * (y - c.Mu)
	}
	c.hostMeanS2 /= float64(m - 1)
	c.Tau2 = math.Max(0, c.hostMeanS2-c.Sigma2*invN/float64(m))
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(m - 1)}.Quantile(1-(1-level)/2) * math.Sqrt(c.Tau2+c.Sigma2+c.hostMeanS2/float64(m))
	c.Lo, c.Hi = math.Exp(c.Mu-half), math.Exp(c.Mu+half)
	return c, nil
}

// Inside reports whether a new run's ratio lies in the prediction interval.
func (c CrossHost) Inside(ratio float64) bool { return ratio >= c.Lo && ratio <= c.Hi }

// String is "ratio 1.12 on 3 hosts (9 runs), one new run predicted in
// [0.81, 1.55]; between hosts tau 0.041, within sigma 0.062 (log scale)".
func (c CrossHost) String() string {
	return fmt.Sprintf("ratio %.2f on %d hosts (%d runs), one run on another host predicted in [%.2f, %.2f]; log-scale sd between hosts %.3f, within a host %.3f",
		math.Exp(c.Mu), c.Hosts, c.Runs, c.Lo, c.Hi, math.Sqrt(c.Tau2), math.Sqrt(c.Sigma2))
}

// A HostHoldout is the leave-one-host-out calibration of a normalised
// item: each host's runs judged against the interval fitted on the other
// hosts' runs.
type HostHoldout struct {
	// Judged counts the held-out runs judged (hosts with at least
	// MinHosts others); Alarms those outside their interval with nothing
	// changed, the false alarms, and Lo, Hi the Wilson 95 % interval of
	// Alarms / Judged.
	Judged, Alarms int
	Lo, Hi         float64
	// Detected counts the held-out runs outside their interval after a
	// slower primitive was injected (ratio + Slower), and DLo, DHi its
	// Wilson interval: the power.
	Slower     float64
	Detected   int
	DLo, DHi   float64
	PerHost    []string // one line per held-out host
	NotHeldOut []string // hosts left out, and why
	errs       []error  // fits that failed for another reason than ErrTooFewHosts
}

// HoldOutHosts judges each host's runs against the interval of the others,
// with nothing changed (false alarms) and with every ratio raised by
// slower. The argument slower stands for a primitive whose handshake cost
// grew by that share of the predicted cryptographic time, which `openssl
// speed` of the same host did not see: the power.
func HoldOutHosts(values []HostValue, level, slower float64) HostHoldout {
	h := HostHoldout{Slower: slower}
	hosts := map[string]bool{}
	for _, v := range values {
		hosts[v.Host] = true
	}
	for _, host := range slices.Sorted(maps.Keys(hosts)) {
		var rest, held []HostValue
		for _, v := range values {
			if v.Host == host {
				held = append(held, v)
			} else {
				rest = append(rest, v)
			}
		}
		fit, err := FitCrossHost(rest, level)
		if err != nil {
			h.NotHeldOut = append(h.NotHeldOut, fmt.Sprintf("%s: %v", host, err))
			if !errors.Is(err, ErrTooFewHosts) {
				h.errs = append(h.errs, err)
			}
			continue
		}
		alarms, detected := 0, 0
		for _, v := range held {
			if !fit.Inside(v.Ratio) {
				alarms++
			}
			if !fit.Inside(v.Ratio + slower) {
				detected++
			}
		}
		h.Judged += len(held)
		h.Alarms += alarms
		h.Detected += detected
		h.PerHost = append(h.PerHost, fmt.Sprintf("%s: %d run(s) against [%.2f, %.2f] from %d other host(s): %d outside, %d outside with +%.2f", host, len(held), fit.Lo, fit.Hi, fit.Hosts, alarms, detected, slower))
	}
	h.Lo, h.Hi = stats.Wilson(h.Alarms, h.Judged)
	h.DLo, h.DHi = stats.Wilson(h.Detected, h.Judged)
	return h
}

// Err is the first error of a fit that was not for too few hosts.
func (h HostHoldout) Err() error { return errors.Join(h.errs...) }

// String says the false-alarm rate and the power in one line.
func (h HostHoldout) String() string {
	if h.Judged == 0 {
		return "leave-one-host-out: no host has " + fmt.Sprint(MinHosts) + " others to be judged against: not calibrated"
	}
	return fmt.Sprintf("leave-one-host-out: false alarms %d of %d (%.0f %%, Wilson 95 %% [%.0f, %.0f] %%); power against a primitive %.0f %% slower in the handshake only (ratio +%.2f): %d of %d (%.0f %%, [%.0f, %.0f] %%)",
		h.Alarms, h.Judged, 100*float64(h.Alarms)/float64(h.Judged), 100*h.Lo, 100*h.Hi,
		100*h.Slower, h.Slower, h.Detected, h.Judged, 100*float64(h.Detected)/float64(h.Judged), 100*h.DLo, 100*h.DHi)
}

// A Normalised is one run's item made comparable across hosts, or why it
// is not (NotJudged). It is the observed over the predicted, from the
// host's own measurements of the same run.
type Normalised struct {
	Name      string  // the item, e.g. "hybrid increase in openssl-cli/docker/direct / host prediction"
	Item      string  // the judged item it normalises, e.g. "paper hybrid vs baseline difference" ("" for none)
	Observed  float64 // in the item's unit
	Predicted float64
	Ratio     float64
	NotJudged string
}

// HostKey is the part of a fingerprint that can move a cryptographic
// time: CPU model, its flags, cores, architecture and the kernel's
// release. Runs with one key are one host of a cross-host fit.
func (a Fingerprint) HostKey() string {
	flags := a.CPUFlagsSHA256
	if flags == "" && len(a.CPUFlags) > 0 {
		var on []string
		for _, f := range slices.Sorted(maps.Keys(a.CPUFlags)) {
			if a.CPUFlags[f] {
				on = append(on, f)
			}
		}
		flags = strings.Join(on, ",")
	}
	return fmt.Sprintf("%s, %d cores, %s, %s, flags %s", a.CPUModel, a.Cores, a.Arch, kernelRelease(a.Kernel), short(flags))
}
