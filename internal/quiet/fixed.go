package quiet

import (
	"context"
	"time"
)

// Fixed is a Watcher that samples nothing and reports a fixed Record.
// That is, the stand-in for tests of runners, which must not depend on
// how busy the machine running them is. Make one with NewFixed.
type Fixed struct {
	Rec    Record
	Sample Sample
}

// NewFixed returns a Fixed reporting verdict (Quiet, Busy or Unknown)
// with plausible figures: a busy one names a compiler taking a core.
func NewFixed(verdict string) *Fixed {
	th := DefaultThresholds
	f := &Fixed{Rec: Record{Cores: 2, Governor: FreqNone, Thresholds: th, Verdict: verdict, Reasons: []string{},
		Frequency: Frequency{Source: FreqNone}, Series: []Point{}, SeriesSpan: 1}}
	f.Sample = Sample{At: time.Unix(0, 0), Seconds: 5, Load: [3]float64{0.2, 0.2, 0.2}, OtherCores: 0.01}
	switch verdict {
	case Busy:
		f.Sample.Load, f.Sample.OtherCores = [3]float64{6, 5, 4}, 1.2
		f.Sample.Top = []Proc{{Cores: 1.2, Name: "cc1", PID: 4242}}
		f.Sample.Reasons = []string{ReasonOther, ReasonLoad}
		f.Rec.BusySamples, f.Rec.Samples = 4, 4
		f.Rec.Reasons = []string{"other processes above 0.10 core in 4 of 4 samples (max 1.20 core)", "4 of 4 samples busy, more than 10 %"}
		f.Rec.TopOther = f.Sample.Top
	case Unknown:
		f.Rec.Reasons = []string{"no sample: the machine's /proc could not be read (or the run was shorter than one interval)"}
	default:
		f.Rec.Samples = 4
	}
	f.Rec.Load1 = Range{Max: f.Sample.Load[0], Mean: f.Sample.Load[0]}
	f.Rec.OtherCores = Range{Max: f.Sample.OtherCores, Mean: f.Sample.OtherCores}
	f.Rec.TopOther = append([]Proc{}, f.Sample.Top...)
	return f
}

// Start implements Watcher; it fails only when ctx has ended.
func (f *Fixed) Start(ctx context.Context) (Record, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	return f.Rec, nil
}

// Latest implements Watcher.
func (f *Fixed) Latest() Sample { return f.Sample }

// Stop implements Watcher.
func (f *Fixed) Stop() Record { return f.Rec }
