// Package deps finds and installs the external programs the pipeline
// needs. That is, Debian packages (apt-get, as root or through sudo)
// and npm packages (into a project-local folder, from a committed
// lock file).
//
// Ensure first says what is missing and what it will install, then
// installs it; it never installs anything that is already there, so a
// second run is silent and fast.
package deps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A Requirement is one thing a target needs.
type Requirement struct {
	// Name is what the user sees, for example "tshark".
	Name string
	// Why says which target or check needs it.
	Why string
	// Present reports whether the requirement is met.
	Present func() bool
	// Apt lists the Debian packages that provide it.
	Apt []string
	// NpmDir, when set, is a directory (relative to the repository root)
	// holding package.json and package-lock.json; the requirement is met
	// by `npm ci` there, which installs into NpmDir/node_modules.
	NpmDir string
}

// Command returns a Present function that looks for a program on PATH.
func Command(name string) func() bool {
	return func() bool { _, err := exec.LookPath(name); return err == nil }
}

// PrivateAptOptions are the apt-get and apt-cache options that make apt
// read its sources from, and keep its lists and package cache in, dir
// only.
//
// The files are dir/sources.list, dir/sources.list.d, dir/lists and
// dir/cache: a private configuration under a build cache, for fetching
// a source package without writing a system file (/etc/apt,
// /var/lib/apt) or holding the system's apt locks.
func PrivateAptOptions(dir string) []string {
	return []string{
		"-o", "Dir::Etc::SourceList=" + filepath.Join(dir, "sources.list"),
		"-o", "Dir::Etc::SourceParts=" + filepath.Join(dir, "sources.list.d"),
		"-o", "Dir::State::Lists=" + filepath.Join(dir, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(dir, "cache"),
		"-o", "APT::Sandbox::User=root",
	}
}

// DefaultLockTimeout is Installer.LockTimeout's default.
const DefaultLockTimeout = 5 * time.Minute

// An Installer runs the install commands. Tests replace Run.
type Installer struct {
	Root string
	Log  io.Writer
	// Run runs one command with its output to out; nil runs it for real.
	Run func(ctx context.Context, dir string, out io.Writer, argv ...string) error
	// LogDir, when set, receives each install command's whole output in a
	// file of its own; Log then gets one line per command (what runs, where
	// its output is, how long it took) instead of apt's hundreds of
	// progress lines. Empty sends the output to Log.
	LogDir string
	// Verbose also copies each command's output to Log (mage -v).
	Verbose bool
	// IsRoot reports whether the process may call apt-get directly; nil
	// checks the effective user ID.
	IsRoot func() bool
	// HaveSudo reports whether `sudo -n` works; nil tries it.
	HaveSudo func() bool
	// LockTimeout is how long apt-get waits for another apt or dpkg (an
	// unattended upgrade, a second target installing at once) to release
	// the package system's lock, instead of failing at once with "Could
	// not get lock"; 0 means DefaultLockTimeout.
	LockTimeout time.Duration

	aptUpdated bool
}

func (in *Installer) run(ctx context.Context, dir string, argv ...string) error {
	log := in.Log
	if log == nil {
		log = io.Discard
	}
	out, finish, err := in.output(log, argv)
	if err != nil {
		return err
	}
	start := time.Now()
	if in.Run != nil {
		err = in.Run(ctx, dir, out, argv...)
	} else {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = out, out
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		err = cmd.Run()
	}
	return finish(time.Since(start), err)
}

// output opens where one command's output goes. With LogDir it is a new
// file there (and Log too when Verbose), announced by one line on Log;
// finish then reports the command's time, or on failure returns an error
// that quotes the last lines of the file and names it.
func (in *Installer) output(log io.Writer, argv []string) (io.Writer, func(time.Duration, error) error, error) {
	line := strings.Join(argv, " ")
	if in.LogDir == "" {
		return log, func(_ time.Duration, err error) error {
			if err != nil {
				return fmt.Errorf("%s: %w", line, err)
			}
			return nil
		}, nil
	}
	if err := os.MkdirAll(in.LogDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create the install log folder: %w", err)
	}
	f, err := os.CreateTemp(in.LogDir, logName(argv)+"-*.log")
	if err != nil {
		return nil, nil, fmt.Errorf("create an install log in %s: %w", in.LogDir, err)
	}
	name := f.Name()
	if rel, err := filepath.Rel(in.Root, name); err == nil && in.Root != "" && !strings.HasPrefix(rel, "..") {
		name = rel
	}
	fmt.Fprintf(log, "  running %s (its output: %s)\n", line, name)
	fmt.Fprintf(f, "$ %s\n", line)
	var out io.Writer = f
	if in.Verbose {
		out = io.MultiWriter(f, log)
	}
	return out, func(took time.Duration, err error) error {
		cerr := f.Close()
		if err != nil {
			tail := lastLines(f.Name(), 15)
			return fmt.Errorf("%s: %w; the last lines of its output (all of it in %s):\n%s", line, err, name, tail)
		}
		if cerr != nil {
			return fmt.Errorf("write the install log %s: %w", name, cerr)
		}
		fmt.Fprintf(log, "  done in %v\n", took.Round(100*time.Millisecond))
		return nil
	}, nil
}

// logName is a file-name stem for a command: its program and subcommand,
// without the sudo and option words, e.g. "apt-get-install".
func logName(argv []string) string {
	var words []string
	for _, a := range argv {
		if a == "sudo" || strings.HasPrefix(a, "-") || strings.ContainsAny(a, "=/ ") {
			continue
		}
		words = append(words, a)
		if len(words) == 2 {
			break
		}
	}
	if len(words) == 0 {
		return "command"
	}
	return strings.Join(words, "-")
}

// lastLines returns up to n last lines of a file, indented, or a note
// that it could not be read.
func lastLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "    (cannot read it: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// Missing returns the requirements that are not met, in order.
func Missing(reqs []Requirement) []Requirement {
	var out []Requirement
	for _, r := range reqs {
		if !r.Present() {
			out = append(out, r)
		}
	}
	return out
}

// Plan describes what Ensure would install, one line per package
// manager; empty when nothing is missing.
func Plan(missing []Requirement) []string {
	var apt, npm []string
	for _, r := range missing {
		apt = append(apt, r.Apt...)
		if r.NpmDir != "" {
			npm = append(npm, r.NpmDir)
		}
	}
	var lines []string
	if len(apt) > 0 {
		slices.Sort(apt)
		lines = append(lines, "apt-get install "+strings.Join(slices.Compact(apt), " "))
	}
	for _, d := range npm {
		lines = append(lines, "npm ci in "+d+" (versions pinned by its package-lock.json)")
	}
	return lines
}

// InstallEstimate is the expected time of installing what missing needs.
// It counts 20 s for the package lists and 4 s per Debian package, 30 s
// per npm folder. Measured: 11 packages (TeX Live's base and the ARM
// toolchain among them, with what they pull in) in 52 s, package lists
// included, on a fresh machine of this project's kind (2026-12-03).
func InstallEstimate(missing []Requirement) time.Duration {
	var apt []string
	var d time.Duration
	for _, r := range missing {
		apt = append(apt, r.Apt...)
		if r.NpmDir != "" {
			d += 30 * time.Second
		}
	}
	slices.Sort(apt)
	if n := len(slices.Compact(apt)); n > 0 {
		d += 20*time.Second + time.Duration(n)*4*time.Second
	}
	return d
}

// Ensure installs whatever of reqs is missing, after printing what it will
// install and why. Without root and without password-less sudo it
// installs nothing and returns an error that gives the command to run.
func (in *Installer) Ensure(ctx context.Context, reqs []Requirement) error {
	missing := Missing(reqs)
	if len(missing) == 0 {
		return nil
	}
	log := in.Log
	if log == nil {
		log = io.Discard
	}
	for _, r := range missing {
		fmt.Fprintf(log, "  missing %s (needed by %s)\n", r.Name, r.Why)
	}
	for _, line := range Plan(missing) {
		fmt.Fprintf(log, "  will run: %s\n", line)
	}
	var apt []string
	for _, r := range missing {
		apt = append(apt, r.Apt...)
	}
	slices.Sort(apt)
	apt = slices.Compact(apt)
	if len(apt) > 0 {
		var prefix []string
		switch {
		case in.isRoot():
		case in.haveSudo():
			prefix = []string{"sudo", "-n"}
		default:
			return fmt.Errorf("need the Debian packages %s and cannot install them (not root, no password-less sudo): run `sudo apt-get install %s` and try again",
				strings.Join(apt, ", "), strings.Join(apt, " "))
		}
		wait := in.LockTimeout
		if wait <= 0 {
			wait = DefaultLockTimeout
		}
		// apt-get waits this long for the lock another apt or dpkg holds
		// (apt(8)'s DPkg::Lock::Timeout, in seconds), and says so.
		lock := []string{"-o", fmt.Sprintf("DPkg::Lock::Timeout=%d", int(wait/time.Second))}
		fmt.Fprintf(log, "  (apt-get waits up to %v for another apt or dpkg to release its lock)\n", wait)
		locked := func(err error) error {
			return fmt.Errorf("%w (if another apt or dpkg held the package lock for more than %v, wait for it to finish and try again)", err, wait)
		}
		if !in.aptUpdated {
			if err := in.run(ctx, in.Root, slices.Concat(prefix, []string{"apt-get"}, lock, []string{"update", "-q"})...); err != nil {
				return fmt.Errorf("update the package lists: %w", locked(err))
			}
			in.aptUpdated = true
		}
		args := slices.Concat(prefix, []string{"apt-get"}, lock, []string{"install", "-y", "-q", "--no-install-recommends"})
		if err := in.run(ctx, in.Root, append(args, apt...)...); err != nil {
			return fmt.Errorf("install %s: %w", strings.Join(apt, " "), locked(err))
		}
	}
	for _, r := range missing {
		if r.NpmDir == "" {
			continue
		}
		if _, err := exec.LookPath("npm"); err != nil && in.Run == nil {
			return fmt.Errorf("%s needs npm: install Node.js and npm (apt-get install nodejs npm) and try again", r.Name)
		}
		if err := in.run(ctx, filepath.Join(in.Root, r.NpmDir), "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"); err != nil {
			return fmt.Errorf("install the npm packages of %s: %w", r.NpmDir, err)
		}
	}
	var still []string
	for _, r := range missing {
		if !r.Present() {
			still = append(still, r.Name)
		}
	}
	if len(still) > 0 {
		return errors.New("installed, but still missing: " + strings.Join(still, ", ") + " (see the install output above, or the install logs)")
	}
	return nil
}

func (in *Installer) isRoot() bool {
	if in.IsRoot != nil {
		return in.IsRoot()
	}
	return os.Geteuid() == 0
}

func (in *Installer) haveSudo() bool {
	if in.HaveSudo != nil {
		return in.HaveSudo()
	}
	return exec.Command("sudo", "-n", "true").Run() == nil
}
