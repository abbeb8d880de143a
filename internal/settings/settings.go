// Package settings names every environment variable pqrepro reads: its
// name, default and meaning, in one table.
//
// The entry points (magefile.go and cmd/pqrepro) call Load once with
// os.Getenv; the values travel down in each package's Config, so that no
// library reads the environment and a test sets a value by writing a
// field, not by changing the process's environment. settings_test.go
// fails when a variable is missing from docs/config.md or when a file
// outside the entry points reads the environment. SOURCE_DATE_EPOCH
// follows reproducible-builds.org's specification; the AWS_* fallbacks
// are the names the AWS SDKs read.
package settings

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The names of the variables (docs/config.md says what each does and
// which targets read it).
const (
	// Profile picks the profile of experiments (quick or full) and of
	// the pinned runs the outputs are built from.
	Profile = "PQREPRO_PROFILE"
	// Studies limits the studies all and quick re-run (comma-separated).
	Studies = "PQREPRO_STUDIES"
	// CalibrateK is calibrate's number of pseudo-replicate pairs.
	CalibrateK = "PQREPRO_CALIBRATE_K"
	// CalibrateSeed is calibrate's PCG seed.
	CalibrateSeed = "PQREPRO_CALIBRATE_SEED"
	// Store is the content store's folder; unset, .store under the root.
	Store = "PQREPRO_STORE"
	// Remote is the data remote's configuration file; unset, remote.toml.
	Remote = "PQREPRO_REMOTE"
	// S3AccessKeyID is the S3 remote's access key.
	S3AccessKeyID = "PQREPRO_S3_ACCESS_KEY_ID"
	// S3SecretAccessKey is the S3 remote's secret key.
	S3SecretAccessKey = "PQREPRO_S3_SECRET_ACCESS_KEY"
	// AWSAccessKeyID is the S3 access key when S3AccessKeyID is unset.
	AWSAccessKeyID = "AWS_ACCESS_KEY_ID"
	// AWSSecretAccessKey is the S3 secret key beside AWSAccessKeyID.
	AWSSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	// AWSSecretKey is AWSSecretAccessKey's older name.
	AWSSecretKey = "AWS_SECRET_KEY"
	// AWSSessionToken is the session token beside AWSAccessKeyID.
	AWSSessionToken = "AWS_SESSION_TOKEN"
	// Pin set to no commits a run without pinning it (a repeat run).
	Pin = "PQREPRO_PIN"
	// PinBusy is the reason to pin a run although its machine was busy.
	PinBusy = "PQREPRO_PIN_BUSY"
	// Settle bounds a run's wait for its start-up's load to decay before
	// the pre-flight (a Go duration; 0 does not wait).
	Settle = "PQREPRO_SETTLE"
	// PicoUF2 is the image pico:flash copies.
	PicoUF2 = "PQREPRO_PICO_UF2"
	// PicoDrive is the Pico's RPI-RP2 drive pico:flash copies to.
	PicoDrive = "PQREPRO_PICO_DRIVE"
	// PicoPort is the serial port pico:read reads.
	PicoPort = "PQREPRO_PICO_PORT"
	// BundleMeasure set to 1 makes bundle time verify, paper and build.
	BundleMeasure = "PQREPRO_BUNDLE_MEASURE"
	// BundleDirty set to 1 lets bundle archive a modified tree.
	BundleDirty = "PQREPRO_BUNDLE_DIRTY"
	// Fuzz set to 1 makes test run the bounded fuzzers.
	Fuzz = "PQREPRO_FUZZ"
	// CI set to anything makes test run the bounded fuzzers.
	CI = "CI"
	// SourceDateEpoch is the date every generated output carries.
	SourceDateEpoch = "SOURCE_DATE_EPOCH"
)

// Names lists every variable Load reads, in the order of docs/config.md.
var Names = []string{
	Profile, Studies, CalibrateK, CalibrateSeed, Store, Remote,
	S3AccessKeyID, S3SecretAccessKey, AWSAccessKeyID, AWSSecretAccessKey, AWSSecretKey, AWSSessionToken,
	Pin, PinBusy, Settle, PicoUF2, PicoDrive, PicoPort, BundleMeasure, BundleDirty, Fuzz, CI, SourceDateEpoch,
}

// The defaults of the variables that have one besides "unset".
const (
	// DefaultSettle is 3 min: about three time constants of the 1-minute
	// load average, after which a start-up burst has decayed to 5 %.
	DefaultSettle = 3 * time.Minute
	// DefaultCalibrateK is 200 pseudo-replicate pairs: enough to bound
	// a 5 % false-alarm rate to within about 3 points (docs/agreement.md).
	DefaultCalibrateK = 200
	// MaxCalibrateK is the largest PQREPRO_CALIBRATE_K accepted. The time of
	// calibrate grows with K (every pair re-derives every reference run's
	// items), and at 10,000 pairs a 5 % false-alarm rate's Wilson 95 %
	// interval is already under half a point wide each side, finer than the
	// goal needs; a mistyped extra digit or two should fail, not run for days.
	MaxCalibrateK = 10_000
	// DefaultCalibrateSeed is the calibration's fixed PCG seed.
	DefaultCalibrateSeed = 20261201
	// DefaultSourceDateEpoch is 2026-01-01T00:00:00Z, midnight UTC. A fixed
	// date (not the commit time) keeps outputs identical across commits, so
	// that verify on a later commit still matches byte for byte.
	DefaultSourceDateEpoch = 1767225600
	// MaxSourceDateEpoch is the latest SOURCE_DATE_EPOCH accepted:
	// 9999-12-31T23:59:59Z. A PDF's dates (D:YYYYMMDDHHmmSS, ISO
	// 32000-1, 7.9.4) have four year digits, and pdflatex crashed on
	// 2^63-1 seconds.
	MaxSourceDateEpoch = 253402300799
)

// The profiles PQREPRO_PROFILE may name.
const (
	Quick = "quick"
	Full  = "full"
)

// Profiles are the profiles, in the order plans print them; the one list
// every target validates against (ValidProfile).
var Profiles = []string{Quick, Full}

// ValidProfile reports whether p names a profile; "" (each target's
// default) is valid too.
func ValidProfile(p string) bool { return p == "" || slices.Contains(Profiles, p) }

// A Secret is a credential: it prints as "(set)" or "(unset)", never its
// value, so that a Settings logged with %v or %+v leaks nothing.
type Secret string

// String hides the value.
func (s Secret) String() string {
	if s == "" {
		return "(unset)"
	}
	return "(set)"
}

// GoString hides the value from %#v too.
func (s Secret) GoString() string { return s.String() }

// Reveal returns the value, for the one call that hands it to the client.
func (s Secret) Reveal() string { return string(s) }

// S3Credentials are the S3 remote's keys: PQREPRO_S3_* if its access key
// is set, else the AWS_* ones if AWS_ACCESS_KEY_ID is. Else there are
// none: anonymous requests, enough to pull from a public bucket.
type S3Credentials struct {
	AccessKeyID     string
	SecretAccessKey Secret
	SessionToken    Secret
	// From names the variable the access key came from ("" for none),
	// for error messages.
	From string
}

// Settings are the values of every variable, parsed and checked.
type Settings struct {
	// Profile is "", Quick or Full.
	Profile string
	// Studies are the study names PQREPRO_STUDIES lists (trimmed, empty
	// names dropped); nil means every study. The pipeline checks them
	// against the registered studies.
	Studies []string
	// CalibrateK and CalibrateSeed are calibrate's parameters.
	CalibrateK    int
	CalibrateSeed uint64
	// Store is PQREPRO_STORE: the content store's folder, "" for the
	// default (.store under the repository root).
	Store string
	// Remote is PQREPRO_REMOTE: the data remote's configuration file, ""
	// for remote.toml.
	Remote string
	// S3 are the S3 remote's credentials.
	S3 S3Credentials
	// NoPin is PQREPRO_PIN=no; PinBusy is PQREPRO_PIN_BUSY.
	NoPin   bool
	PinBusy string
	// Settle is PQREPRO_SETTLE: how long a run waits at most, before its
	// pre-flight, for the load of its own start-up to decay
	// (quiet.Settler); 0 does not wait.
	Settle time.Duration
	// PicoUF2, PicoDrive and PicoPort are the pico:flash and pico:read
	// values; "" is their default.
	PicoUF2, PicoDrive, PicoPort string
	// BundleMeasure and BundleDirty are PQREPRO_BUNDLE_MEASURE=1 and
	// PQREPRO_BUNDLE_DIRTY=1.
	BundleMeasure, BundleDirty bool
	// Fuzz is true when test runs the bounded fuzzers: PQREPRO_FUZZ=1 or
	// CI set.
	Fuzz bool
	// SourceDateEpoch is the date generated outputs carry (UTC).
	SourceDateEpoch time.Time
}

// Defaults are the settings of an empty environment.
func Defaults() Settings {
	s, err := Load(func(string) string { return "" })
	if err != nil {
		panic(err) // the defaults are valid; settings_test checks it
	}
	return s
}

// Load reads and checks every variable through getenv (os.Getenv at the
// entry points, a map in tests). A bad value is an error naming the
// variable and what it may be; all bad values are reported at once.
func Load(getenv func(string) string) (Settings, error) {
	s := Settings{
		Store:         getenv(Store),
		Remote:        getenv(Remote),
		PinBusy:       getenv(PinBusy),
		PicoUF2:       getenv(PicoUF2),
		PicoDrive:     getenv(PicoDrive),
		PicoPort:      getenv(PicoPort),
		CalibrateK:    DefaultCalibrateK,
		CalibrateSeed: DefaultCalibrateSeed,
	}
	var errs []string
	bad := func(name, v, want string) { errs = append(errs, fmt.Sprintf("%s=%q: %s", name, v, want)) }

	if v := getenv(Profile); ValidProfile(v) {
		s.Profile = v
	} else {
		bad(Profile, v, "want quick or full, or leave it unset for each target's default")
	}
	for _, name := range strings.Split(getenv(Studies), ",") {
		if name = strings.TrimSpace(name); name != "" {
			s.Studies = append(s.Studies, name)
		}
	}
	if v := getenv(CalibrateK); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > MaxCalibrateK {
			bad(CalibrateK, v, fmt.Sprintf("want a number of pseudo-replicates from 1 to %d (the goal needs at least 200; the time grows with it)", MaxCalibrateK))
		} else {
			s.CalibrateK = n
		}
	}
	if v := getenv(CalibrateSeed); v != "" {
		if n, err := strconv.ParseUint(v, 0, 64); err != nil {
			bad(CalibrateSeed, v, "want an unsigned integer")
		} else {
			s.CalibrateSeed = n
		}
	}
	switch {
	case getenv(S3AccessKeyID) != "":
		s.S3 = S3Credentials{AccessKeyID: getenv(S3AccessKeyID), SecretAccessKey: Secret(getenv(S3SecretAccessKey)), From: S3AccessKeyID}
	case getenv(AWSAccessKeyID) != "":
		secret := getenv(AWSSecretAccessKey)
		if secret == "" {
			secret = getenv(AWSSecretKey)
		}
		s.S3 = S3Credentials{AccessKeyID: getenv(AWSAccessKeyID), SecretAccessKey: Secret(secret), SessionToken: Secret(getenv(AWSSessionToken)), From: AWSAccessKeyID}
	}
	s.Settle = DefaultSettle
	if v := getenv(Settle); v != "" {
		if d, err := time.ParseDuration(v); err != nil || d < 0 || d > time.Hour {
			bad(Settle, v, "want a duration from 0 (no wait) to 1h, e.g. 3m")
		} else {
			s.Settle = d
		}
	}
	switch v := getenv(Pin); v {
	case "", "yes":
	case "no":
		s.NoPin = true
	default:
		bad(Pin, v, "set it to no (commit the run without pinning it: a repeat run) or leave it unset")
	}
	flag := func(name string) bool {
		switch v := getenv(name); v {
		case "", "0":
			return false
		case "1":
			return true
		default:
			bad(name, v, "want 1 (on), or 0 or unset (off)")
			return false
		}
	}
	s.BundleMeasure = flag(BundleMeasure)
	s.BundleDirty = flag(BundleDirty)
	s.Fuzz = flag(Fuzz) || getenv(CI) != ""
	s.SourceDateEpoch = DefaultEpoch()
	if v := getenv(SourceDateEpoch); v != "" {
		if t, err := ParseSourceDateEpoch(v); err != nil {
			errs = append(errs, err.Error())
		} else {
			s.SourceDateEpoch = t
		}
	}
	if len(errs) > 0 {
		return s, fmt.Errorf("settings: %s (docs/config.md)", strings.Join(errs, "; "))
	}
	return s, nil
}

// DefaultEpoch is DefaultSourceDateEpoch as a time: the date of every
// output when SOURCE_DATE_EPOCH is unset.
func DefaultEpoch() time.Time { return time.Unix(DefaultSourceDateEpoch, 0).UTC() }

// ParseSourceDateEpoch reads a SOURCE_DATE_EPOCH: whole seconds since
// 1970 (UTC), from 0 to MaxSourceDateEpoch. Load and the stages whose
// parameter it is (the studies' figures) all read it here, so that one
// rule holds wherever the date is parsed.
func ParseSourceDateEpoch(v string) (time.Time, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > MaxSourceDateEpoch {
		return time.Time{}, fmt.Errorf("%s=%q: not a whole number of seconds from 0 to %d (9999-12-31T23:59:59Z: a PDF date has four year digits); unset it or fix it", SourceDateEpoch, v, int64(MaxSourceDateEpoch))
	}
	return time.Unix(n, 0).UTC(), nil
}

// ProfileFor is the profile a target runs at: fixed, if the target has
// one (quick), else PQREPRO_PROFILE, else the target's default (which
// may be ""). A PQREPRO_PROFILE that contradicts a fixed profile is an
// error, not silently overridden (issue 33: with PQREPRO_PROFILE=full
// exported, quick ran the 70-minute full profile).
func (s Settings) ProfileFor(target, fixed, def string) (string, error) {
	switch {
	case fixed != "" && s.Profile != "" && s.Profile != fixed:
		return "", fmt.Errorf("%s runs the %s profile only, but %s=%s: unset %s (or set it to %s) to run %s, or run `go run mage.go all` for the %s profile",
			target, fixed, Profile, s.Profile, Profile, fixed, target, s.Profile)
	case fixed != "":
		return fixed, nil
	case s.Profile != "":
		return s.Profile, nil
	}
	return def, nil
}
