package repro

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// DefaultSourceDateEpoch is the date every generated output carries when
// SOURCE_DATE_EPOCH is not set. That is, 2026-01-01T00:00:00Z. A fixed
// default (not the commit time) keeps outputs identical across commits, so
// that `mage verify` on a later commit still matches byte for byte.
const DefaultSourceDateEpoch = 1767225600

// SourceDateEpoch returns the time generated outputs must carry, from the
// SOURCE_DATE_EPOCH environment variable (reproducible-builds.org spec:
// decimal seconds since the Unix epoch) or DefaultSourceDateEpoch.
func SourceDateEpoch() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Unix(DefaultSourceDateEpoch, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a non-negative whole number of seconds; unset it or fix it", v)
	}
	return time.Unix(n, 0).UTC(), nil
}
