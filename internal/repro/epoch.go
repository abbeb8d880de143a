package repro

import (
	"fmt"
	"strconv"
	"time"

	"pqrepro/internal/settings"
)

// EpochParam is the stage parameter that dates a stage's PDFs. Every
// stage that dates an output records the date under this one name with
// FormatEpoch and reads it back with Env.Epoch, so SOURCE_DATE_EPOCH takes
// one path from the setting (settings.Load) to every output, and a changed
// date reruns exactly the stages it dates.
const EpochParam = settings.SourceDateEpoch

// EpochOr is t, or settings.DefaultEpoch() when t is zero: the date of a
// stage or bundle whose caller gives none.
func EpochOr(t time.Time) time.Time {
	if t.IsZero() {
		return settings.DefaultEpoch()
	}
	return t
}

// FormatEpoch is EpochParam's value for the date t: its Unix seconds, or
// the default date's when t is zero (EpochOr).
func FormatEpoch(t time.Time) string {
	return strconv.FormatInt(EpochOr(t).Unix(), 10)
}

// Epoch reads the stage's EpochParam by the setting's rule
// (settings.ParseSourceDateEpoch). The stage must declare the parameter.
func (e *Env) Epoch() (time.Time, error) {
	t, err := settings.ParseSourceDateEpoch(e.Param(EpochParam))
	if err != nil {
		return time.Time{}, fmt.Errorf("stage parameter %s: %w", EpochParam, err)
	}
	return t, nil
}
