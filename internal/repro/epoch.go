package repro

import (
	"time"

	"pqrepro/internal/settings"
)

// DefaultSourceDateEpoch is the date every generated output carries when
// SOURCE_DATE_EPOCH is not set. That is, 2026-01-01T00:00:00Z
// (settings.DefaultSourceDateEpoch). A fixed default (not the commit
// time) keeps outputs identical across commits, so that `mage verify` on
// a later commit still matches byte for byte.
const DefaultSourceDateEpoch = settings.DefaultSourceDateEpoch

// DefaultEpoch is DefaultSourceDateEpoch as a time: the date of a stage
// or bundle whose caller gives none. The entry points read
// SOURCE_DATE_EPOCH (reproducible-builds.org) into settings and pass it
// down.
func DefaultEpoch() time.Time { return time.Unix(DefaultSourceDateEpoch, 0).UTC() }
