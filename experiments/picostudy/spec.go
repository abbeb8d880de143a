package picostudy

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"pqrepro/experiments/pico"
	"pqrepro/internal/spec"
)

// Study is the study's name: its spec is experiments/pico.toml and its runs
// live under data/pico/.
const Study = "pico"

// Board kinds.
const (
	BoardEmulator = "emulator"
	BoardSerial   = "serial"
)

// Spec is experiments/pico.toml.
type Spec struct {
	// Seed seeds the firmware's deterministic randombytes.
	Seed uint64 `toml:"seed"`
	// Workers is how many images run at once on the emulator (the
	// machine's 2 cores); a real board always runs one.
	Workers int `toml:"workers"`
	// HostTimings also times every operation on the host CPU (circl and
	// Go's crypto, pico.HostTimings) after the images, for a host column.
	HostTimings bool                   `toml:"host_timings"`
	Board       BoardSpec              `toml:"board"`
	Build       BuildSpec              `toml:"build"`
	Profiles    map[string]ProfileSpec `toml:"profiles"`
	Runs        spec.Runs              `toml:"runs"`
}

// BoardSpec says where the firmware runs.
type BoardSpec struct {
	Kind        string `toml:"kind"`    // BoardEmulator or BoardSerial
	Port        string `toml:"port"`    // serial port of a real board
	Bootsel     string `toml:"bootsel"` // "", "auto" or the RPI-RP2 mount point
	Baud        int    `toml:"baud"`
	IdleTimeout string `toml:"idle_timeout"` // Go duration
}

// BuildSpec is how the firmware is compiled.
type BuildSpec struct {
	CFlags []string `toml:"cflags"`
}

// ProfileSpec is one profile's repetition counts and limits.
type ProfileSpec struct {
	KEM          int      `toml:"kem"`
	DSAKeygen    int      `toml:"dsa_keygen"`
	DSASign      int      `toml:"dsa_sign"`
	RSAKeygen    int      `toml:"rsa_keygen"`
	RSA          int      `toml:"rsa"`
	ECC          int      `toml:"ecc"`
	Images       []string `toml:"images"`        // empty: every standard image
	ImageTimeout string   `toml:"image_timeout"` // Go duration, per image
}

// Firmware returns the profile as the firmware's repetition counts.
func (p ProfileSpec) Firmware(name string) pico.Profile {
	return pico.Profile{Name: name, KEM: p.KEM, DSAKeygen: p.DSAKeygen, DSASign: p.DSASign,
		RSAKeygen: p.RSAKeygen, RSA: p.RSA, ECC: p.ECC}
}

// DefaultSpec is what the committed experiments/pico.toml says; Estimate
// uses it, and a test keeps the two equal.
func DefaultSpec() Spec {
	return Spec{
		Seed:        pico.DefaultSeed,
		Workers:     2,
		HostTimings: true,
		Board:       BoardSpec{Kind: BoardEmulator, Baud: pico.DefaultBaud, IdleTimeout: "120s"},
		Build:       BuildSpec{CFlags: slices.Clone(pico.DefaultCFlags)},
		Profiles: map[string]ProfileSpec{
			"quick": {KEM: 5, DSAKeygen: 3, DSASign: 10, RSAKeygen: 0, RSA: 3, ECC: 3, Images: []string{}, ImageTimeout: "10m"},
			"full":  {KEM: 100, DSAKeygen: 20, DSASign: 100, RSAKeygen: 1, RSA: 20, ECC: 20, Images: []string{}, ImageTimeout: "60m"},
		},
	}
}

// LoadSpec reads and checks the spec at path (strictly: unknown keys are
// errors).
func LoadSpec(path string) (Spec, error) {
	var s Spec
	if err := spec.Load(path, &s); err != nil {
		return Spec{}, err
	}
	if err := s.Validate(); err != nil {
		return Spec{}, fmt.Errorf("spec %s: %w", path, err)
	}
	return s, nil
}

// Validate checks the values a decoder cannot.
func (s Spec) Validate() error {
	if s.Seed == 0 {
		return fmt.Errorf("seed must be set and non-zero")
	}
	if s.Workers < 1 || s.Workers > 16 {
		return fmt.Errorf("workers = %d: want 1..16 (this machine has 2 cores)", s.Workers)
	}
	switch s.Board.Kind {
	case BoardEmulator:
	case BoardSerial:
		if s.Board.Port == "" {
			return fmt.Errorf(`[board] kind = "serial" needs port (the board's USB-UART device)`)
		}
	default:
		return fmt.Errorf("[board] kind = %q: want %q or %q", s.Board.Kind, BoardEmulator, BoardSerial)
	}
	if s.Board.Baud <= 0 {
		return fmt.Errorf("[board] baud = %d must be positive", s.Board.Baud)
	}
	if _, err := parsePositive(s.Board.IdleTimeout); err != nil {
		return fmt.Errorf("[board] idle_timeout: %w", err)
	}
	if len(s.Build.CFlags) == 0 {
		return fmt.Errorf("[build] cflags must not be empty")
	}
	if len(s.Profiles) == 0 {
		return fmt.Errorf("no [profiles.*] table")
	}
	known := map[string]bool{}
	for _, c := range pico.StandardImages() {
		known[c.Name] = true
	}
	for name, p := range s.Profiles {
		for k, v := range map[string]int{"kem": p.KEM, "dsa_keygen": p.DSAKeygen, "dsa_sign": p.DSASign,
			"rsa_keygen": p.RSAKeygen, "rsa": p.RSA, "ecc": p.ECC} {
			if v < 0 || v > 100000 {
				return fmt.Errorf("[profiles.%s] %s = %d: want 0..100000", name, k, v)
			}
		}
		if p.KEM < 1 || p.DSAKeygen < 1 || p.DSASign < 1 {
			return fmt.Errorf("[profiles.%s] kem, dsa_keygen and dsa_sign must be at least 1", name)
		}
		if _, err := parsePositive(p.ImageTimeout); err != nil {
			return fmt.Errorf("[profiles.%s] image_timeout: %w", name, err)
		}
		for _, img := range p.Images {
			if !known[img] {
				return fmt.Errorf("[profiles.%s] images: unknown image %q (standard images: %s)", name, img, strings.Join(imageNames(pico.StandardImages()), ", "))
			}
		}
	}
	return nil
}

func parsePositive(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration like \"90s\" or \"10m\"", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	return d, nil
}

func imageNames(cfgs []pico.BuildConfig) []string {
	out := make([]string, len(cfgs))
	for i, c := range cfgs {
		out[i] = c.Name
	}
	return out
}

// Profile returns the named profile or an error listing the known ones.
func (s Spec) Profile(name string) (ProfileSpec, error) {
	p, ok := s.Profiles[name]
	if !ok {
		names := make([]string, 0, len(s.Profiles))
		for n := range s.Profiles {
			names = append(names, n)
		}
		slices.Sort(names)
		return ProfileSpec{}, fmt.Errorf("profile %q is not in the spec (have %s)", name, strings.Join(names, ", "))
	}
	return p, nil
}
