package picorun

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/experiments/pico/picoboard"
	"pqrepro/internal/spec"
)

// Study is the study's name: its spec is experiments/pico.toml and its runs
// live under data/pico/ (picodata.Study).
const Study = picodata.Study

// Board kinds.
const (
	BoardEmulator = "emulator"
	BoardSerial   = "serial"
)

// Spec is experiments/pico.toml.
type Spec struct {
	// Seed seeds the firmware's deterministic randombytes.
	Seed uint64 `toml:"seed"`
	// Workers is how many rp2040js instances run at once. The machine has 2
	// cores; each instance is a board rp2040js-<n>; real boards run one
	// image at a time each.
	Workers int `toml:"workers"`
	// HostTimings also times every operation on the host CPU (circl and
	// Go's crypto, picoboard.HostTimings) after the images, for a host column.
	HostTimings bool      `toml:"host_timings"`
	Board       BoardSpec `toml:"board"`
	Build       BuildSpec `toml:"build"`
	// Configurations are named sets of build factors
	// ([configurations.<name>]) that a profile may run beside [build]'s
	// (ProfileSpec.Configurations).
	Configurations map[string]ConfigSpec  `toml:"configurations"`
	Profiles       map[string]ProfileSpec `toml:"profiles"`
	Runs           spec.Runs              `toml:"runs"`
}

// BoardSpec says where the firmware runs: on Workers rp2040js instances
// (boards rp2040js-1 .. rp2040js-<workers>), or on one or more real boards
// (Port and Bootsel, then one [[board.devices]] table per further board).
type BoardSpec struct {
	Kind        string `toml:"kind"`    // BoardEmulator or BoardSerial
	Port        string `toml:"port"`    // serial port of a real board
	Bootsel     string `toml:"bootsel"` // "", "auto" or the RPI-RP2 mount point
	Baud        int    `toml:"baud"`
	IdleTimeout string `toml:"idle_timeout"` // Go duration
	// Replicate runs every image on every board, emulated or real. It is
	// so that each operation is measured on each board and
	// the analysis can test the board as a factor. false (the default)
	// spreads the images: each runs once, on the next free board.
	Replicate bool `toml:"replicate"`
	// Devices are further real boards (kind = "serial"), after the one
	// that Port and Bootsel name.
	Devices []DeviceSpec `toml:"devices"`
}

// DeviceSpec is one more real board: its serial port and BOOTSEL drive.
type DeviceSpec struct {
	Port    string `toml:"port"`
	Bootsel string `toml:"bootsel"` // "" or the RPI-RP2 mount point ("auto" only with one board)
}

// A Slot is one board a run uses, numbered from 1 in spec order.
type Slot struct {
	N       int
	Kind    string
	Port    string // real boards only
	Bootsel string // real boards only
}

// Name is the board's name before it reports its own ID: rp2040js-<n> for
// an emulator instance, pico-<n> for a real board.
func (s Slot) Name() string {
	if s.Kind == BoardEmulator {
		return fmt.Sprintf("rp2040js-%d", s.N)
	}
	return fmt.Sprintf("pico-%d", s.N)
}

// Slots lists the boards of the spec: workers emulator instances, or the
// real boards in spec order.
func (b BoardSpec) Slots(workers int) []Slot {
	var out []Slot
	if b.Kind == BoardEmulator {
		for i := 1; i <= workers; i++ {
			out = append(out, Slot{N: i, Kind: BoardEmulator})
		}
		return out
	}
	if b.Port != "" {
		out = append(out, Slot{N: 1, Kind: BoardSerial, Port: b.Port, Bootsel: b.Bootsel})
	}
	for _, d := range b.Devices {
		out = append(out, Slot{N: len(out) + 1, Kind: BoardSerial, Port: d.Port, Bootsel: d.Bootsel})
	}
	return out
}

// BuildSpec is how the firmware is compiled.
type BuildSpec struct {
	CFlags []string `toml:"cflags"`
	// Runtime is the run-time library level (picoboard.Runtimes): "libgcc"
	// (the default, every pinned run's) or "sdk-like" (our own
	// __aeabi_lmul and SIO-divider division in place of libgcc's).
	Runtime string `toml:"runtime"`
	// CodeIn is where the code runs (picoboard.CodeIns): "ram" (the
	// default, every pinned run's), "flash" (through the modelled XIP
	// cache) or "flash-cold" (the cache flushed before each operation).
	CodeIn string `toml:"code_in"`
	// ClockMHz is clk_sys in MHz, which the build turns into PLL_SYS's
	// dividers (picoboard.PLLFor, RP2040 datasheet 2.18.2); required.
	ClockMHz float64 `toml:"clock_mhz"`
	// MessageBytes is the length of the message every signature scheme
	// signs (picoboard.CheckMessageBytes: 1..4096); required.
	MessageBytes int `toml:"message_bytes"`
	// USBIRQMicros is the period of a pico-sdk program's USB stdio
	// interrupt (picoboard.CheckUSBIRQ, firmware/usbirq.c): 0, off, as in
	// every pinned run, or 100..1000000 us.
	USBIRQMicros int `toml:"usb_irq_us"`
}

// ConfigSpec is one named configuration, [configurations.<name>]: the
// build factors it changes; a key left out (empty or 0, or for
// usb_irq_us absent) is [build]'s.
type ConfigSpec struct {
	Runtime      string  `toml:"runtime"`
	ClockMHz     float64 `toml:"clock_mhz"`
	MessageBytes int     `toml:"message_bytes"`
	CodeIn       string  `toml:"code_in"`
	// USBIRQMicros is a pointer so that 0 (off) can be set against a
	// [build] that has the interrupt on.
	USBIRQMicros *int `toml:"usb_irq_us"`
	// Images, when set, are the only images the configuration runs, of
	// those its profile runs (a slow configuration on a subset); empty,
	// all of the profile's.
	Images []string `toml:"images"`
}

// Factors is one configuration's build factors, resolved against [build]
// (and image.json's record of them).
type Factors struct {
	// Config is the configuration's name: "" for [build]'s (the primary,
	// every pinned run's), else a [configurations.<name>] table's.
	Config       string  `json:"configuration,omitempty"`
	Runtime      string  `json:"runtime,omitempty"`
	ClockMHz     float64 `json:"clock_mhz,omitempty"`
	MessageBytes int     `json:"message_bytes,omitempty"`
	// CodeIn is "" in image.json for code in SRAM (the default).
	CodeIn       string `json:"code_in,omitempty"`
	USBIRQMicros int    `json:"usb_irq_us,omitempty"`
}

// Apply sets the factors in a firmware build configuration.
func (f Factors) Apply(c picoboard.BuildConfig) picoboard.BuildConfig {
	c.Runtime, c.ClockMHz, c.MsgBytes = f.Runtime, f.ClockMHz, f.MessageBytes
	c.CodeIn, c.USBIRQMicros = f.CodeIn, f.USBIRQMicros
	return c
}

// Factors resolves the configuration name ("" for [build]) into its
// factors, or returns an error naming the known configurations.
func (s Spec) Factors(name string) (Factors, error) {
	f := Factors{Runtime: s.Build.Runtime, ClockMHz: s.Build.ClockMHz, MessageBytes: s.Build.MessageBytes,
		CodeIn: s.Build.CodeIn, USBIRQMicros: s.Build.USBIRQMicros}
	if name == "" {
		return f, nil
	}
	c, ok := s.Configurations[name]
	if !ok {
		return Factors{}, fmt.Errorf("configuration %q is not a [configurations.*] table (have %s)", name, strings.Join(slices.Sorted(maps.Keys(s.Configurations)), ", "))
	}
	f.Config = name
	f.Runtime = cmp.Or(c.Runtime, f.Runtime)
	f.ClockMHz = cmp.Or(c.ClockMHz, f.ClockMHz)
	f.MessageBytes = cmp.Or(c.MessageBytes, f.MessageBytes)
	f.CodeIn = cmp.Or(c.CodeIn, f.CodeIn)
	if c.USBIRQMicros != nil {
		f.USBIRQMicros = *c.USBIRQMicros
	}
	return f, nil
}

// configName is a configuration's name: lower-case letters, digits and
// dashes, so that <image>+<name> is a plain run-folder name.
var configName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// ProfileSpec is one profile's repetition counts and limits.
type ProfileSpec struct {
	KEM          int      `toml:"kem"`
	DSAKeygen    int      `toml:"dsa_keygen"`
	DSASign      int      `toml:"dsa_sign"`
	RSAKeygen    int      `toml:"rsa_keygen"`
	RSA          int      `toml:"rsa"`
	ECC          int      `toml:"ecc"`
	SLHKeygen    int      `toml:"slh_keygen"`     // SPHINCS+ keygens per set
	SLHSignFast  int      `toml:"slh_sign_fast"`  // SPHINCS+-128f signs (each verified)
	SLHSignSmall int      `toml:"slh_sign_small"` // SPHINCS+-128s signs (each verified)
	Images       []string `toml:"images"`         // empty: every standard image
	ImageTimeout string   `toml:"image_timeout"`  // Go duration, per image
	// Configurations are the [configurations.<name>] tables run beside
	// [build]'s: every image once more per name, in a run folder
	// <image>+<name>. Empty: [build]'s only, as every pinned run.
	Configurations []string `toml:"configurations"`
}

// Firmware returns the profile as the firmware's repetition counts.
func (p ProfileSpec) Firmware(name string) picoboard.Profile {
	return picoboard.Profile{Name: name, KEM: p.KEM, DSAKeygen: p.DSAKeygen, DSASign: p.DSASign,
		RSAKeygen: p.RSAKeygen, RSA: p.RSA, ECC: p.ECC,
		SLHKeygen: p.SLHKeygen, SLHSignFast: p.SLHSignFast, SLHSignSmall: p.SLHSignSmall}
}

// DefaultSpec is what the committed experiments/pico.toml says; Estimate
// uses it, and a test keeps the two equal.
func DefaultSpec() Spec {
	return Spec{
		Seed:        picoboard.DefaultSeed,
		Workers:     2,
		HostTimings: true,
		Board:       BoardSpec{Kind: BoardEmulator, Baud: picoboard.DefaultBaud, IdleTimeout: "120s"},
		Build: BuildSpec{CFlags: slices.Clone(picoboard.DefaultCFlags), Runtime: picoboard.DefaultRuntime,
			ClockMHz: picoboard.DefaultClockMHz, MessageBytes: picoboard.DefaultMessageBytes, CodeIn: picoboard.DefaultCodeIn},
		Configurations: map[string]ConfigSpec{
			"sdk":        {Runtime: "sdk-like", ClockMHz: picoboard.SDKClockMHz, CodeIn: "flash", Images: []string{"mlkem", "mldsa44", "mldsa87"}},
			"runtime":    {Runtime: "sdk-like", Images: []string{"mldsa44"}},
			"flash":      {CodeIn: "flash", Images: []string{"mldsa44"}},
			"flash-cold": {CodeIn: "flash-cold", Images: []string{"mldsa44"}},
			"message":    {MessageBytes: 1024, Images: []string{"mldsa44"}},
		},
		Profiles: map[string]ProfileSpec{
			"quick": {KEM: 5, DSAKeygen: 3, DSASign: 10, RSAKeygen: 0, RSA: 3, ECC: 3, SLHKeygen: 1, SLHSignFast: 2, SLHSignSmall: 1,
				Images: []string{"mlkem", "mldsa44", "mldsa65", "mldsa87", "classic", "sphincs-sha2-128f"}, ImageTimeout: "10m",
				Configurations: slices.Clone(profileConfigurations)},
			"full": {KEM: 100, DSAKeygen: 20, DSASign: 100, RSAKeygen: 0, RSA: 20, ECC: 20, SLHKeygen: 1, SLHSignFast: 2, SLHSignSmall: 1,
				Images: []string{}, ImageTimeout: "60m", Configurations: slices.Clone(profileConfigurations)},
		},
	}
}

// profileConfigurations are the configurations both committed profiles
// run beside [build]'s: the SDK build, then one of its factors at a time.
var profileConfigurations = []string{"sdk", "runtime", "flash", "flash-cold", "message"}

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
	if err := s.Board.validate(); err != nil {
		return err
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
	if err := s.validateConfigurations(); err != nil {
		return err
	}
	if len(s.Profiles) == 0 {
		return fmt.Errorf("no [profiles.*] table")
	}
	for name, p := range s.Profiles {
		for k, v := range map[string]int{"kem": p.KEM, "dsa_keygen": p.DSAKeygen, "dsa_sign": p.DSASign,
			"rsa_keygen": p.RSAKeygen, "rsa": p.RSA, "ecc": p.ECC,
			"slh_keygen": p.SLHKeygen, "slh_sign_fast": p.SLHSignFast, "slh_sign_small": p.SLHSignSmall} {
			if v < 0 || v > 100000 {
				return fmt.Errorf("[profiles.%s] %s = %d: want 0..100000", name, k, v)
			}
		}
		if p.KEM < 1 || p.DSAKeygen < 1 || p.DSASign < 1 {
			return fmt.Errorf("[profiles.%s] kem, dsa_keygen and dsa_sign must be at least 1", name)
		}
		if p.SLHKeygen < 1 || p.SLHSignFast < 1 || p.SLHSignSmall < 1 {
			// The host re-checks the first key and signature of each set.
			return fmt.Errorf("[profiles.%s] slh_keygen, slh_sign_fast and slh_sign_small must be at least 1 (leave the SPHINCS+ images out with images = [...] instead)", name)
		}
		if _, err := parsePositive(p.ImageTimeout); err != nil {
			return fmt.Errorf("[profiles.%s] image_timeout: %w", name, err)
		}
		seen := map[string]bool{}
		for _, c := range p.Configurations {
			if _, err := s.Factors(c); err != nil || c == "" {
				return fmt.Errorf("[profiles.%s] configurations: %q: %v", name, c, cmp.Or(err, errors.New("empty name")))
			}
			if seen[c] {
				return fmt.Errorf("[profiles.%s] configurations: %q is listed twice", name, c)
			}
			f, _ := s.Factors(c)
			if err := s.onBoard(fmt.Sprintf("[profiles.%s] configurations: %q:", name, c), f); err != nil {
				return err
			}
			seen[c] = true
		}
		if err := checkImages("[profiles."+name+"]", p.Images); err != nil {
			return err
		}
	}
	return nil
}

// checkImages returns an error naming where and the standard images
// unless every one of images is a standard image, listed once.
func checkImages(where string, images []string) error {
	all := imageNames(picoboard.StandardImages())
	seen := map[string]bool{}
	for _, img := range images {
		if !slices.Contains(all, img) {
			return fmt.Errorf("%s images: unknown image %q (standard images: %s)", where, img, strings.Join(all, ", "))
		}
		if seen[img] {
			return fmt.Errorf("%s images: %q is listed twice", where, img)
		}
		seen[img] = true
	}
	return nil
}

// validateConfigurations checks [build]'s factors and each named
// configuration's. Each needs a plain name, every level known and makeable
// (picoboard.CheckFactors: runtime, a clock the PLL makes exactly, a
// message length in bounds, a USB interrupt period off or in bounds;
// picoboard.CheckCodeIn, flash on the emulator only), and at least one
// factor unlike [build]'s.
func (s Spec) validateConfigurations() error {
	check := func(where string, f Factors) error {
		if err := picoboard.CheckFactors(f.Runtime, f.ClockMHz, f.MessageBytes, f.USBIRQMicros); err != nil {
			return fmt.Errorf("%s %w", where, err)
		}
		if err := picoboard.CheckCodeIn(f.CodeIn); err != nil {
			return fmt.Errorf("%s %w", where, err)
		}
		return nil
	}
	primary, _ := s.Factors("")
	if err := check("[build]", primary); err != nil {
		return err
	}
	if err := s.onBoard("[build]", primary); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(s.Configurations)) {
		where := "[configurations." + name + "]"
		if !configName.MatchString(name) {
			return fmt.Errorf("%s: a configuration's name is lower-case letters, digits and dashes (it names run folders <image>+<name>)", where)
		}
		f, _ := s.Factors(name)
		if err := check(where, f); err != nil {
			return err
		}
		if err := checkImages(where, s.Configurations[name].Images); err != nil {
			return err
		}
		same := f
		same.Config = ""
		if same == primary {
			return fmt.Errorf("%s sets no factor unlike [build]'s (runtime %q, clock_mhz %v, message_bytes %d, code_in %q, usb_irq_us %d): it would measure [build]'s configuration again", where, f.Runtime, f.ClockMHz, f.MessageBytes, f.CodeIn, f.USBIRQMicros)
		}
	}
	return nil
}

// onBoard returns an error when a configuration that runs puts its code
// in flash and the board is real. A flash image runs on the emulator only.
func (s Spec) onBoard(where string, f Factors) error {
	if f.CodeIn != picoboard.DefaultCodeIn && s.Board.Kind != BoardEmulator {
		return fmt.Errorf("%s code_in = %q runs on the emulator only (a board would need boot2, which we cannot build without pico-sdk)", where, f.CodeIn)
	}
	return nil
}

// validate checks the board list. A real board needs a port, no port or
// BOOTSEL drive is listed twice, and "auto" (search the mount table) is
// only allowed with one board, as it cannot tell two drives apart.
func (b BoardSpec) validate() error {
	switch b.Kind {
	case BoardEmulator:
		if len(b.Devices) > 0 {
			return fmt.Errorf(`[[board.devices]] lists real boards, but [board] kind = "emulator": set kind = "serial", or use workers for more emulator instances`)
		}
		return nil
	case BoardSerial:
	default:
		return fmt.Errorf("[board] kind = %q: want %q or %q", b.Kind, BoardEmulator, BoardSerial)
	}
	if b.Port == "" {
		return fmt.Errorf(`[board] kind = "serial" needs port (the first board's USB-UART device; further boards go in [[board.devices]])`)
	}
	slots := b.Slots(0)
	ports, drives := map[string]int{}, map[string]int{}
	for _, sl := range slots {
		where := "[board]"
		if sl.N > 1 {
			where = fmt.Sprintf("[[board.devices]] #%d", sl.N-1)
		}
		if sl.Port == "" {
			return fmt.Errorf("%s: port is empty (the board's serial device, e.g. /dev/ttyUSB1)", where)
		}
		if n, dup := ports[sl.Port]; dup {
			return fmt.Errorf("%s: port %s is already board %d's: each board needs its own serial port", where, sl.Port, n)
		}
		ports[sl.Port] = sl.N
		if sl.Bootsel == "auto" && len(slots) > 1 {
			return fmt.Errorf(`%s: bootsel = "auto" cannot tell %d boards' drives apart: give each board its RPI-RP2 mount point`, where, len(slots))
		}
		if sl.Bootsel != "" && sl.Bootsel != "auto" {
			d := filepath.Clean(sl.Bootsel)
			if n, dup := drives[d]; dup {
				return fmt.Errorf("%s: bootsel %s is already board %d's: each board mounts its own RPI-RP2 drive", where, sl.Bootsel, n)
			}
			drives[d] = sl.N
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

func imageNames(cfgs []picoboard.BuildConfig) []string {
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
