// Package provenance writes meta.json, the record of how a raw dataset
// was made. That is, which spec and profile, which seeds, when, on which
// host, with which Go, modules, commit and external tools, on which
// board, and what the run measured about itself (kernel packet drops,
// emulator delay accuracy). Every study writes one beside its data, so
// that a reader of the dataset can tell whether a difference between two
// runs comes from the code, the machine or chance.
package provenance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pqrepro/internal/atomicfile"
)

// FileName is the name of the provenance file in every run folder.
const FileName = "meta.json"

// Meta is the content of meta.json. Field names are stable: analysis code
// and reviewers read them.
type Meta struct {
	Study   string `json:"study"`
	RunID   string `json:"run_id"`
	Spec    string `json:"spec"`        // path of the spec file, relative to the repository root
	SpecSHA string `json:"spec_sha256"` // hash of the spec file as it was when the run started
	// SpecDesignSHA is the hash of that spec without its [runs] pins
	// (spec.WithoutPins): the same for every run of one design, whatever
	// was pinned when it started. Runs recorded before it existed lack
	// it.
	SpecDesignSHA string `json:"spec_design_sha256,omitempty"`
	Profile       string `json:"profile"`
	// Seeds are every seed the run used, by purpose (for example
	// "order", "certificates", "loss").
	Seeds map[string]uint64 `json:"seeds"`
	Start time.Time         `json:"start"`
	End   time.Time         `json:"end"`
	Host  Host              `json:"host"`
	Go    GoInfo            `json:"go"`
	Git   Git               `json:"git"`
	// Tools are versions of external programs by name (gcc, node,
	// rp2040js, tshark); an absent tool is not listed.
	Tools map[string]string `json:"tools"`
	// Board says where the code ran: "host", "rp2040js <version>
	// (emulated)", or "Raspberry Pi Pico <serial>".
	Board string `json:"board"`
	// Measured holds what the run measured about itself, such as
	// kernel packet drops or the link emulator's achieved delay.
	Measured map[string]any `json:"measured,omitempty"`
	// Files lists the dataset's files and their SHA-256 (large captures
	// are in the content store and listed here by hash).
	Files map[string]string `json:"files,omitempty"`
	// Notes are free-form remarks recorded by the run.
	Notes []string `json:"notes,omitempty"`
}

// Host describes the machine.
type Host struct {
	Hostname string `json:"hostname"`
	CPUModel string `json:"cpu_model"`
	Cores    int    `json:"cores"`
	Kernel   string `json:"kernel"`
	Arch     string `json:"arch"`
	MemoryKB uint64 `json:"memory_kb"`
	// CPUFlags says, for each of CryptoFlags, whether /proc/cpuinfo's
	// flags line lists it: the instructions that decide how fast the
	// studies' primitives run (AES-GCM and GHASH, the AVX2 paths of
	// ML-KEM and ML-DSA, the bignum paths of P-384 and RSA, SHA-256).
	// CPUFlagsSHA256 is the SHA-256 (hex) of the whole flags line as the
	// kernel prints it, which tells two CPUs apart on any flag. Both are
	// empty where /proc/cpuinfo has no flags line, and in a run recorded
	// before they existed.
	CPUFlags       map[string]bool `json:"cpu_flags,omitempty"`
	CPUFlagsSHA256 string          `json:"cpu_flags_sha256,omitempty"`
}

// CryptoFlags are the CPU flags (as /proc/cpuinfo names them on x86)
// that a run's host records. That is, AES-NI and carry-less multiply
// (AES-GCM), AVX, AVX2 and AVX-512F (the vectorised ML-KEM and ML-DSA
// code of Go and OpenSSL), BMI2 and ADX (mulx/adcx/adox in P-256,
// P-384 and RSA bignum code), and the SHA extensions.
var CryptoFlags = []string{"aes", "pclmulqdq", "avx", "avx2", "avx512f", "bmi2", "adx", "sha_ni"}

// ParseCPUInfo reads the first processor's model and CPU flags from
// /proc/cpuinfo's text.
//
// It returns the first processor's model name ("unknown" without one),
// its CryptoFlags and the SHA-256 of its whole flags line (nil and ""
// without a flags line; on arm64 the line is "Features", read the same
// way).
func ParseCPUInfo(text string) (model string, flags map[string]bool, sum string) {
	model = "unknown"
	var line string
	found := false
	for _, l := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			if model == "unknown" {
				model = strings.TrimSpace(v)
			}
		case "flags", "Features":
			if !found {
				line, found = strings.TrimSpace(v), true
			}
		}
	}
	if !found {
		return model, nil, ""
	}
	have := map[string]bool{}
	for _, f := range strings.Fields(line) {
		have[f] = true
	}
	flags = make(map[string]bool, len(CryptoFlags))
	for _, f := range CryptoFlags {
		flags[f] = have[f]
	}
	h := sha256.Sum256([]byte(line))
	return model, flags, hex.EncodeToString(h[:])
}

// GoInfo describes the Go toolchain and modules the binary was built with.
type GoInfo struct {
	Version string            `json:"version"`
	Main    string            `json:"main"`
	Modules map[string]string `json:"modules"`
	// Settings are the build settings (GOOS, GOARCH, CGO_ENABLED,
	// -trimpath, GODEBUG defaults, ...) from runtime/debug.
	Settings map[string]string `json:"settings"`
}

// Git describes the source tree the run was made from.
type Git struct {
	// Commit is the full hash of HEAD, or "unknown" when the run was not
	// started from a git checkout (WhyUnknown says why).
	Commit string `json:"commit"`
	// Dirty is true when tracked files differ from HEAD (untracked files,
	// such as a new run folder, do not count: `git describe --dirty`).
	Dirty bool `json:"dirty"`
	// DiffSHA256 is, when Dirty, the SHA-256 of the output of `git diff
	// HEAD --binary`: whoever holds that patch can prove it is the one
	// the run was made with, and apply it to Commit to get the tree.
	DiffSHA256 string `json:"diff_sha256,omitempty"`
	// WhyUnknown says why Commit is "unknown".
	WhyUnknown string `json:"why_unknown,omitempty"`
}

// Options say what Collect should look at. Tools maps a tool's name to
// the command line that prints its version (for example "gcc":
// {"arm-none-eabi-gcc", "--version"}); the first line of its output is
// recorded.
type Options struct {
	// Root is the tree the run works in (spec, data, store).
	Root string
	// Git is the state of the repository the run was started from, as
	// RepoGit found it at the repository root when the run started; the
	// pipeline passes it, so that a run working in a temporary tree (mage
	// all) records the repository's commit, not the temporary
	// tree's. Nil means RepoGit(Root), and "unknown" with the reason when
	// Root is not a git checkout.
	Git   *Git
	Tools map[string][]string
}

// Collect fills the host, Go, Git and tool fields of a Meta. The study,
// run, spec, seeds, times, board and measurements are the caller's.
// Nothing here fails a run: what cannot be found is recorded as unknown.
func Collect(ctx context.Context, opt Options) Meta {
	m := Meta{
		Seeds:    map[string]uint64{},
		Tools:    map[string]string{},
		Measured: map[string]any{},
		Files:    map[string]string{},
	}
	m.Host = collectHost()
	m.Go = collectGo()
	if opt.Git != nil {
		m.Git = *opt.Git
	} else {
		m.Git = collectGit(ctx, opt.Root)
	}
	for _, name := range slices.Sorted(maps.Keys(opt.Tools)) {
		if v, err := ToolVersion(ctx, opt.Tools[name]...); err == nil {
			m.Tools[name] = v
		}
	}
	return m
}

// ToolVersion runs a version command and returns the first non-empty line
// of its output.
func ToolVersion(ctx context.Context, argv ...string) (string, error) {
	if len(argv) == 0 {
		return "", fmt.Errorf("tool version: empty command")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line, nil
		}
	}
	return "", fmt.Errorf("%s printed nothing", strings.Join(argv, " "))
}

func collectHost() Host {
	h := Host{Cores: runtime.NumCPU(), Arch: runtime.GOARCH, CPUModel: "unknown", Kernel: "unknown"}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		h.CPUModel, h.CPUFlags, h.CPUFlagsSHA256 = ParseCPUInfo(string(b))
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				f := strings.Fields(rest)
				if len(f) > 0 {
					h.MemoryKB, _ = strconv.ParseUint(f[0], 10, 64)
				}
			}
		}
	}
	return h
}

func collectGo() GoInfo {
	g := GoInfo{Version: runtime.Version(), Modules: map[string]string{}, Settings: map[string]string{}}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return g
	}
	g.Main = bi.Main.Path
	for _, d := range bi.Deps {
		v := d.Version
		if d.Replace != nil {
			v += " => " + d.Replace.Path + " " + d.Replace.Version
		}
		g.Modules[d.Path] = v
	}
	for _, s := range bi.Settings {
		// vcs.* are recorded under Git, from git itself.
		if !strings.HasPrefix(s.Key, "vcs") {
			g.Settings[s.Key] = s.Value
		}
	}
	return g
}

func collectGit(ctx context.Context, root string) Git {
	g, err := RepoGit(ctx, root)
	if err != nil {
		return Git{Commit: "unknown", WhyUnknown: err.Error()}
	}
	return g
}

// RepoGit returns the commit of the git checkout at dir and whether
// tracked files differ from it.
//
// If they differ, it also returns the SHA-256 of `git diff HEAD
// --binary`. It fails when dir is not a git checkout or git cannot say.
func RepoGit(ctx context.Context, dir string) (Git, error) {
	if dir == "" {
		return Git{}, fmt.Errorf("git: no repository directory given")
	}
	git := func(args ...string) ([]byte, error) { return GitOutput(ctx, dir, args...) }
	out, err := git("rev-parse", "--verify", "HEAD")
	if err != nil {
		return Git{}, err
	}
	g := Git{Commit: strings.TrimSpace(string(out))}
	st, err := git("status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return Git{}, err
	}
	if len(bytes.TrimSpace(st)) > 0 {
		diff, err := git("diff", "HEAD", "--binary", "--no-ext-diff", "--no-color")
		if err != nil {
			return Git{}, err
		}
		sum := sha256.Sum256(diff)
		g.Dirty, g.DiffSHA256 = true, hex.EncodeToString(sum[:])
	}
	return g, nil
}

// GitOutput runs git with args in the checkout at dir and returns its
// standard output, or an error quoting git's standard error.
func GitOutput(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// Write writes meta.json into dir atomically, as indented JSON with
// sorted keys and a final newline.
func Write(dir string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", FileName, err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, FileName), append(b, '\n'), 0o644)
}

// Read reads meta.json from dir.
func Read(dir string) (Meta, error) {
	var m Meta
	p := filepath.Join(dir, FileName)
	b, err := os.ReadFile(p)
	if err != nil {
		return m, fmt.Errorf("read provenance: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s is not valid provenance JSON: %w", p, err)
	}
	return m, nil
}
