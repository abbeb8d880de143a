package tlsrun

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/internal/spec"
)

// Study is the study's short name: its spec is experiments/tls.toml and its
// runs live in data/tls/.
const Study = "tls"

// Spec is the content of experiments/tls.toml. Decoding is strict: a key
// not listed here is an error.
type Spec struct {
	// Seeds of the run: Order drives the interleaved order of the
	// configurations (Plan), Certificates the deterministic keys and
	// certificates (handshake.MakeCerts).
	Seeds Seeds `toml:"seeds"`
	// Matrix is the full cross product of groups and certificate keys.
	Matrix Matrix `toml:"matrix"`
	// Paper names the paper's configurations inside the matrix.
	Paper Paper `toml:"paper"`
	// Profiles by name (quick, full).
	Profiles map[string]Profile `toml:"profiles"`
	// Runs pins the run the paper uses per profile (written by spec.Pin).
	Runs spec.Runs `toml:"runs"`
	// Bridge configures the bridge path (path.go, experiments/tls/bridgenet).
	Bridge BridgeSpec `toml:"bridge"`
	// Remote names the second host of the remote path (remotepath.go).
	Remote RemoteSpec `toml:"remote"`
	// CLI holds the command lines of the openssl-cli stack (clistack.go).
	CLI CLISpec `toml:"cli"`
	// Emulated holds the factors of the emulated-path cells (emulated.go).
	Emulated EmulatedSpec `toml:"emulated"`
}

// CLISpec is the [cli] table: the openssl-cli stack's command lines. They are
// the exact arguments of the openssl program, subcommand first, with the
// placeholders of experiments/tls/openssl (cli.go) that the runner fills per
// configuration and per connection.
type CLISpec struct {
	Server []string `toml:"server"`
	Client []string `toml:"client"`
}

// BridgeSpec is the [bridge] table: how the bridge path is built.
type BridgeSpec struct {
	// MTU of the bridge and its veth devices; 0 is 1500, Docker's.
	MTU int `toml:"mtu"`
	// Offloads keeps the veth devices' offloads.
	// It keeps TSO/GSO/GRO as the kernel and
	// Docker leave them; false (the default) turns them off so that the
	// capture sees frames of at most MTU bytes, not GSO super-frames.
	Offloads bool `toml:"offloads"`
}

// Seeds are the run's seeds, recorded in meta.json.
type Seeds struct {
	Order        uint64 `toml:"order"`
	Certificates uint64 `toml:"certificates"`
}

// Matrix is groups x cert_keys, every combination one configuration.
type Matrix struct {
	Groups   []string `toml:"groups"`    // as Go's tls.CurveID prints them, e.g. "X25519MLKEM768"
	CertKeys []string `toml:"cert_keys"` // handshake.CertKey names, e.g. "mldsa87"
	// Chain makes the server send leaf + CA certificate in every matrix
	// configuration instead of a self-signed leaf.
	Chain bool `toml:"chain"`
	// Stacks are the TLS implementations of both ends (stack.go): "go"
	// (crypto/tls) and "openssl" (experiments/tls/openssl); empty means
	// ["go"]. The matrix is repeated per stack.
	Stacks []string `toml:"stacks"`
	// KeyShares are the key-share modes (handshake.KeyShare): "direct"
	// and "hrr"; empty means ["direct"]. The matrix is repeated per mode.
	KeyShares []string `toml:"keyshares"`
	// Paths are the network paths every configuration runs on
	// (tlsdata.KnownPaths); empty is ["loopback"]. A profile's own
	// paths replace them.
	Paths []string `toml:"paths"`
	// Cells, when set, are the only cells ("stack/path/keyshare") the run
	// measures. They are chosen out of stacks x paths x keyshares: the design
	// need not be fully crossed (the docker path runs the openssl-cli stack
	// only).
	Cells []string `toml:"cells"`
}

// Paper lists the paper's configurations (each must be in the matrix, or is
// added to it) and which one is the baseline of the comparisons.
type Paper struct {
	Baseline string        `toml:"baseline"`
	Configs  []PaperConfig `toml:"configs"`
	// ChainVariants adds, for each paper configuration, a variant whose
	// server sends leaf + CA certificate (the opposite of Matrix.Chain).
	ChainVariants bool `toml:"chain_variants"`
	// Cell is the primary cell, the one the paper's claims are judged on.
	// It names the stack, path and key-share mode whose
	// configurations the paper's claims are judged on (the one closest to
	// the original study). Empty fields are the first stack, the
	// profile's first path and the first key-share mode (Spec.PrimaryCell).
	Cell tlsdata.Cell `toml:"cell"`
	// Fallback is the primary cell of a run that cannot measure Cell.
	// Such a run (the docker path without Docker: WithoutPath) states it
	// before it starts, like Cell; empty means none (such a run fails).
	Fallback tlsdata.Cell `toml:"fallback"`
}

// PaperConfig is one of the paper's configurations.
type PaperConfig struct {
	Name    string `toml:"name"` // a label, e.g. "baseline", "pq-sig"
	CertKey string `toml:"cert_key"`
	Group   string `toml:"group"`
}

// Profile is one sample-size setting.
type Profile struct {
	N      int `toml:"n"`      // measured connections per configuration
	Block  int `toml:"block"`  // measured connections per block (see Plan)
	Warmup int `toml:"warmup"` // discarded connections before every block
	// Paths, when set, replace [matrix] paths for this profile.
	Paths []string `toml:"paths"`
	// OtherCellsN, when set, is n outside the primary cell.
	// It is the number of measured connections of
	// every configuration outside the primary cell ([paper.cell]), spread
	// over the same rounds as the primary cell's (Plan); 0 means N.
	OtherCellsN int `toml:"other_cells_n"`
	// OtherCells says which configurations run outside the primary cell.
	// It is "matrix" (every one, the default when empty) or "paper" (only
	// those whose certificate key and group are one of [[paper.configs]]).
	OtherCells string `toml:"other_cells"`
	// EmulatedN is the number of measured connections of every
	// emulated-path configuration (emulated.go), spread over the primary
	// cell's rounds like other_cells_n; 0 runs no emulated cell.
	EmulatedN int `toml:"emulated_n"`
	// EmulatedDelaysMs, when set, replace [emulated] delays_ms.
	EmulatedDelaysMs []float64 `toml:"emulated_delays_ms"`
}

// Values of Profile.OtherCells.
const (
	OtherCellsMatrix = "matrix"
	OtherCellsPaper  = "paper"
)

// Config is one configuration of the run.
type Config struct {
	Name  string            `json:"config"` // ConfigName: cert_key/group, "/chain" when chained
	Key   handshake.CertKey `json:"cert_key"`
	Group tls.CurveID       `json:"-"`
	// GroupName is Group as Go prints it (the records' group column).
	GroupName string `json:"group"`
	Chain     bool   `json:"chain"`
	// Paper is the paper's label when this is one of its configurations.
	Paper    string `json:"paper,omitempty"`
	Baseline bool   `json:"baseline,omitempty"`
	// Stack and KeyShare: see Matrix.Stacks and Matrix.KeyShares.
	Stack    string             `json:"stack"`
	KeyShare handshake.KeyShare `json:"keyshare"`
	// Path is the network path the configuration runs on (Spec.Units);
	// empty in Spec.Configs.
	Path string `json:"path,omitempty"`
	// ClientGroups is the client group-list mode of an emulated-path
	// configuration (tlsdata.ClientGroupModes); "" elsewhere (its own
	// group). LinkRTTNs is its link's self-tested RTT, set once the link
	// is up.
	ClientGroups string `json:"client_groups,omitempty"`
	LinkRTTNs    int64  `json:"link_rtt_ns,omitempty"`
}

// ConfigName is the canonical name of a configuration. It is the records'
// config column (the config ID of record.go, without /hrr since the run
// never provokes a HelloRetryRequest): "<cert_key>/<group>" plus "/chain"
// when the server sends leaf + CA, e.g. "mldsa87/X25519".
func ConfigName(key handshake.CertKey, group tls.CurveID, chain bool) string {
	n := string(key) + "/" + group.String()
	if chain {
		n += "/chain"
	}
	return n
}

var (
	profileRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	labelRE   = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// Limits on a profile, to catch typos (n = 1000000000) before an endless run.
const (
	maxN      = 1_000_000
	maxWarmup = 10_000
)

// LoadSpec reads and validates a Study A spec.
func LoadSpec(path string) (*Spec, error) {
	var s Spec
	if err := spec.Load(path, &s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("spec %s: %w", path, err)
	}
	return &s, nil
}

func parseGroup(s string) (tls.CurveID, error) {
	g, err := handshake.ParseGroup(s)
	if err != nil {
		return 0, err
	}
	if !slices.Contains(handshake.Groups, g) {
		return 0, fmt.Errorf("key-exchange group %q is not one the study measures: use one of %v", s, handshake.Groups)
	}
	return g, nil
}

// Validate checks everything that can be checked without running: names,
// duplicates, the baseline, and every profile.
func (s *Spec) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(s.Matrix.Groups) == 0 && len(s.Paper.Configs) == 0 {
		bad("no configurations: set [matrix] groups and cert_keys, or [[paper.configs]]")
	}
	if (len(s.Matrix.Groups) == 0) != (len(s.Matrix.CertKeys) == 0) {
		bad("[matrix] needs both groups and cert_keys (got %d groups, %d cert_keys)", len(s.Matrix.Groups), len(s.Matrix.CertKeys))
	}
	seen := map[string]bool{}
	for _, g := range s.Matrix.Groups {
		id, err := parseGroup(g)
		if err != nil {
			bad("[matrix] groups: %v", err)
			continue
		}
		if seen["g"+id.String()] {
			bad("[matrix] groups: %s listed twice", id)
		}
		seen["g"+id.String()] = true
	}
	for _, k := range s.Matrix.CertKeys {
		key, err := handshake.ParseCertKey(k)
		if err != nil {
			bad("[matrix] cert_keys: %v", err)
			continue
		}
		if seen["k"+string(key)] {
			bad("[matrix] cert_keys: %s listed twice", key)
		}
		seen["k"+string(key)] = true
	}
	names := map[string]bool{}
	for i, p := range s.Paper.Configs {
		where := fmt.Sprintf("[[paper.configs]] #%d (%q)", i+1, p.Name)
		if !labelRE.MatchString(p.Name) {
			bad("%s: name must be lower-case letters, digits and dashes", where)
		}
		if names[p.Name] {
			bad("%s: name used twice", where)
		}
		names[p.Name] = true
		if _, err := parseGroup(p.Group); err != nil {
			bad("%s: %v", where, err)
		}
		if _, err := handshake.ParseCertKey(p.CertKey); err != nil {
			bad("%s: %v", where, err)
		}
	}
	if len(s.Paper.Configs) > 0 && !names[s.Paper.Baseline] {
		bad("[paper] baseline = %q is not the name of a [[paper.configs]] entry", s.Paper.Baseline)
	}
	if len(s.Profiles) == 0 {
		bad("no [profiles.<name>] table: add quick and full")
	}
	for _, name := range slices.Sorted(maps.Keys(s.Profiles)) {
		p := s.Profiles[name]
		if !profileRE.MatchString(name) {
			bad("[profiles.%s]: a profile name must be lower-case letters, digits and dashes", name)
		}
		if p.N < 1 || p.N > maxN {
			bad("[profiles.%s] n = %d: must be 1..%d measured connections per configuration", name, p.N, maxN)
		}
		if p.Block < 1 || p.Block > maxN {
			bad("[profiles.%s] block = %d: must be 1..%d connections per block", name, p.Block, maxN)
		}
		if p.Warmup < 0 || p.Warmup > maxWarmup {
			bad("[profiles.%s] warmup = %d: must be 0..%d", name, p.Warmup, maxWarmup)
		}
		if p.OtherCellsN < 0 || p.OtherCellsN > maxN {
			bad("[profiles.%s] other_cells_n = %d: must be 0 (= n) to %d", name, p.OtherCellsN, maxN)
		}
		if p.OtherCells != "" && p.OtherCells != OtherCellsMatrix && p.OtherCells != OtherCellsPaper {
			bad("[profiles.%s] other_cells = %q: use %q or %q", name, p.OtherCells, OtherCellsMatrix, OtherCellsPaper)
		}
	}
	errs = append(errs, s.validateStacks()...)
	errs = append(errs, validPaths("[matrix] paths", s.Matrix.Paths))
	for _, name := range slices.Sorted(maps.Keys(s.Profiles)) {
		errs = append(errs, validPaths("[profiles."+name+"] paths", s.Profiles[name].Paths))
	}
	errs = append(errs, s.validateCell()...)
	errs = append(errs, s.validateCells()...)
	if m := s.Bridge.MTU; m != 0 && (m < 1280 || m > 65535) {
		bad("[bridge] mtu = %d: want 1280..65535 (0 is 1500)", m)
	}
	errs = append(errs, s.validateRemote()...)
	errs = append(errs, s.validateEmulated()...)
	for prof := range s.Runs {
		if _, ok := s.Profiles[prof]; !ok {
			bad("[runs] pins profile %q, which has no [profiles.%s] table", prof, prof)
		}
	}
	return errors.Join(errs...)
}

// Profile returns the named profile or an error listing the known ones.
func (s *Spec) Profile(name string) (Profile, error) {
	p, ok := s.Profiles[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q: the spec has %s", name, strings.Join(slices.Sorted(maps.Keys(s.Profiles)), ", "))
	}
	return p, nil
}

// Configs returns the run's configurations in a fixed order. It is the
// matrix in the order of cert_keys x groups as written in the spec, then
// paper configurations not in the matrix, then the chain variants of the
// paper's configurations; the matrix is repeated per stack, then per
// key-share mode (in the spec's order), leaving out combinations a stack
// cannot make (Skipped). The paper's configurations are those of the first
// stack and key-share mode. Paper labels are attached to the matching
// matrix entry. The spec must be valid.
func (s *Spec) Configs() []Config {
	var out []Config
	index := map[string]int{}
	stacks, keyShares := s.stacks(), s.keyShares()
	first := func(c Config) Config { c.Stack, c.KeyShare = stacks[0], keyShares[0]; return c }
	add := func(c Config) int {
		c.GroupName = c.Group.String()
		c.Name = c.id()
		if i, ok := index[c.Name]; ok {
			return i
		}
		index[c.Name] = len(out)
		out = append(out, c)
		return len(out) - 1
	}
	for _, st := range stacks {
		for _, ks := range keyShares {
			for _, k := range s.Matrix.CertKeys {
				key, _ := handshake.ParseCertKey(k)
				for _, g := range s.Matrix.Groups {
					id, _ := parseGroup(g)
					if supported(st, ks, id) == nil {
						add(Config{Key: key, Group: id, Chain: s.Matrix.Chain, Stack: st, KeyShare: ks})
					}
				}
			}
		}
	}
	for _, p := range s.Paper.Configs {
		key, _ := handshake.ParseCertKey(p.CertKey)
		id, _ := parseGroup(p.Group)
		i := add(first(Config{Key: key, Group: id, Chain: s.Matrix.Chain}))
		out[i].Paper = p.Name
		out[i].Baseline = p.Name == s.Paper.Baseline
	}
	if s.Paper.ChainVariants {
		for _, p := range s.Paper.Configs {
			key, _ := handshake.ParseCertKey(p.CertKey)
			id, _ := parseGroup(p.Group)
			i := add(first(Config{Key: key, Group: id, Chain: !s.Matrix.Chain}))
			suffix := "-chain"
			if s.Matrix.Chain {
				suffix = "-leaf"
			}
			out[i].Paper = p.Name + suffix
		}
	}
	return out
}

// WithoutPath returns a copy of s without the network path p.
// The path is gone from
// [matrix] paths, every profile's paths and [matrix] cells, and, when the
// primary cell was on p, with [paper.fallback] as the primary cell. A run
// that cannot use p (the docker path without Docker) runs this spec and
// says so; an error when p carries the primary cell and there is no
// fallback, or when no path would be left.
func (s *Spec) WithoutPath(p string) (*Spec, error) {
	c := *s
	drop := func(ps []string) []string {
		return slices.DeleteFunc(slices.Clone(ps), func(x string) bool { return x == p })
	}
	c.Matrix.Paths = drop(s.Matrix.Paths)
	c.Matrix.Cells = slices.DeleteFunc(slices.Clone(s.Matrix.Cells), func(x string) bool {
		cl, ok := parseCell(x)
		return ok && cl.Path == p
	})
	c.Profiles = map[string]Profile{}
	for name, prof := range s.Profiles {
		prof.Paths = drop(prof.Paths)
		c.Profiles[name] = prof
	}
	if s.Paper.Cell.Path == p {
		if s.Paper.Fallback == (tlsdata.Cell{}) {
			return nil, fmt.Errorf("the primary cell %s is on the %s path and [paper.fallback] names no other", s.Paper.Cell, p)
		}
		c.Paper.Cell = s.Paper.Fallback
	}
	for name := range c.Profiles {
		if len(c.Paths(name)) == 0 {
			return nil, fmt.Errorf("profile %s has no path left without %s", name, p)
		}
	}
	return &c, nil
}
