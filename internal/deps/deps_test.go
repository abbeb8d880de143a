package deps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type fakeSystem struct {
	installed map[string]bool
	commands  []string
	fail      string
}

func (f *fakeSystem) run(ctx context.Context, dir string, out io.Writer, argv ...string) error {
	line := strings.Join(argv, " ")
	f.commands = append(f.commands, line)
	if f.fail != "" && strings.Contains(line, f.fail) {
		return errors.New("exit status 100")
	}
	for _, a := range argv {
		f.installed[a] = true
	}
	return nil
}

func (f *fakeSystem) has(name string) func() bool { return func() bool { return f.installed[name] } }

func TestEnsure(t *testing.T) {
	for _, tc := range []struct {
		name      string
		root      bool
		sudo      bool
		fail      string
		wantCmds  []string
		wantErr   string
		installed []string
	}{
		{name: "nothing missing", root: true, installed: []string{"tshark", "gcc-arm-none-eabi"}},
		{name: "root installs", root: true, installed: []string{"tshark"},
			wantCmds: []string{"apt-get -o DPkg::Lock::Timeout=300 update -q", "apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends gcc-arm-none-eabi libnewlib-arm-none-eabi"}},
		{name: "sudo installs", sudo: true,
			wantCmds: []string{"sudo -n apt-get -o DPkg::Lock::Timeout=300 update -q", "sudo -n apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends gcc-arm-none-eabi libnewlib-arm-none-eabi tshark"}},
		{name: "neither", wantErr: "run `sudo apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi tshark`"},
		{name: "apt fails", root: true, fail: "install", wantErr: "exit status 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := &fakeSystem{installed: map[string]bool{}}
			for _, p := range tc.installed {
				sys.installed[p] = true
			}
			sys.fail = tc.fail
			var log bytes.Buffer
			in := &Installer{Log: &log, Run: sys.run,
				IsRoot: func() bool { return tc.root }, HaveSudo: func() bool { return tc.sudo }}
			reqs := []Requirement{
				{Name: "tshark", Why: "the capture cross-check", Present: sys.has("tshark"), Apt: []string{"tshark"}},
				{Name: "arm gcc", Why: "pico:build", Present: sys.has("gcc-arm-none-eabi"), Apt: []string{"gcc-arm-none-eabi", "libnewlib-arm-none-eabi"}},
			}
			err := in.Ensure(context.Background(), reqs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(sys.commands, "\n") != strings.Join(tc.wantCmds, "\n") {
				t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(sys.commands, "\n"), strings.Join(tc.wantCmds, "\n"))
			}
			if len(tc.wantCmds) > 0 && !strings.Contains(log.String(), "will run: apt-get install") {
				t.Errorf("did not say what it would install first:\n%s", log.String())
			}
			if len(tc.wantCmds) > 0 && !strings.Contains(log.String(), "waits up to 5m0s for another apt or dpkg") {
				t.Errorf("did not say it waits for the package lock:\n%s", log.String())
			}
		})
	}
}

func TestNpm(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "emu")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte("{}"), 0o644)
	present := NpmInstalled(root, "emu")
	if present() {
		t.Fatal("present before install")
	}
	var cmds []string
	in := &Installer{Root: root, IsRoot: func() bool { return true }, Run: func(ctx context.Context, d string, _ io.Writer, argv ...string) error {
		cmds = append(cmds, d+": "+strings.Join(argv, " "))
		os.MkdirAll(filepath.Join(d, "node_modules"), 0o755)
		return os.WriteFile(filepath.Join(d, "node_modules", ".package-lock.json"), []byte("{}"), 0o644)
	}}
	if err := in.Ensure(context.Background(), []Requirement{{Name: "rp2040js", Why: "pico:emulate", Present: present, NpmDir: "emu"}}); err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 1 || cmds[0] != dir+": npm ci --ignore-scripts --no-audit --no-fund" {
		t.Errorf("commands = %q", cmds)
	}
	if !present() {
		t.Error("not present after install")
	}
}

func TestStillMissingAfterInstall(t *testing.T) {
	in := &Installer{IsRoot: func() bool { return true }, Run: func(context.Context, string, io.Writer, ...string) error { return nil }}
	err := in.Ensure(context.Background(), []Requirement{{Name: "ghost", Why: "x", Present: func() bool { return false }, Apt: []string{"ghost"}}})
	if err == nil || !strings.Contains(err.Error(), "still missing: ghost") {
		t.Errorf("err = %v", err)
	}
}

func TestCommand(t *testing.T) {
	if !Command("sh")() {
		t.Error("sh not found on PATH")
	}
	if Command("pqrepro-no-such-program")() {
		t.Error("found a program that does not exist")
	}
}

// NpmInstalled returns a Present function that checks that the npm
// packages of dir are installed exactly as the lock file pins them:
// node_modules/.package-lock.json (written by npm ci) must exist and
// must not be older than package-lock.json.
func NpmInstalled(root, dir string) func() bool {
	return func() bool {
		lock, err := os.Stat(filepath.Join(root, dir, "package-lock.json"))
		if err != nil {
			return false
		}
		inst, err := os.Stat(filepath.Join(root, dir, "node_modules", ".package-lock.json"))
		return err == nil && !inst.ModTime().Before(lock.ModTime())
	}
}

// TestInstallLogs checks that with LogDir the terminal gets one line per
// command and its time, the file gets apt's progress, -v copies it, and a
// failure quotes the file's last lines and names it.
func TestInstallLogs(t *testing.T) {
	noisy := func(fail bool) func(context.Context, string, io.Writer, ...string) error {
		return func(_ context.Context, _ string, out io.Writer, argv ...string) error {
			for i := 0; i < 40; i++ {
				fmt.Fprintf(out, "Reading database ... %d%%\n", i)
			}
			if fail && slices.Contains(argv, "install") {
				fmt.Fprintln(out, "E: Unable to locate package tshark")
				return errors.New("exit status 100")
			}
			return nil
		}
	}
	reqs := []Requirement{{Name: "tshark", Why: "test", Present: func() bool { return false }, Apt: []string{"tshark"}}}
	for _, tc := range []struct {
		name          string
		verbose, fail bool
	}{{"quiet", false, false}, {"verbose", true, false}, {"failure", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			var log bytes.Buffer
			in := &Installer{Root: root, Log: &log, LogDir: filepath.Join(root, ".cache", "logs"), Verbose: tc.verbose,
				IsRoot: func() bool { return true }, Run: noisy(tc.fail)}
			err := in.Ensure(context.Background(), reqs)
			files, _ := filepath.Glob(filepath.Join(root, ".cache", "logs", "apt-get-*.log"))
			if len(files) != 2 {
				t.Fatalf("log files %v, want one for update and one for install", files)
			}
			for _, f := range files {
				b, _ := os.ReadFile(f)
				if !strings.Contains(string(b), "Reading database ... 39%") || !strings.HasPrefix(string(b), "$ apt-get ") {
					t.Errorf("%s holds %q, want the command line and its whole output", f, b)
				}
			}
			progress := strings.Count(log.String(), "Reading database")
			switch {
			case tc.verbose && progress != 80:
				t.Errorf("verbose terminal shows %d progress lines, want 80:\n%s", progress, log.String())
			case !tc.verbose && progress != 0 && !tc.fail:
				t.Errorf("terminal shows %d progress lines, want none:\n%s", progress, log.String())
			}
			if !strings.Contains(log.String(), "(its output: .cache/logs/apt-get-update-") {
				t.Errorf("terminal does not name the log relative to the root:\n%s", log.String())
			}
			if tc.fail {
				if err == nil || !strings.Contains(err.Error(), "E: Unable to locate package tshark") || !strings.Contains(err.Error(), ".cache/logs/apt-get-install-") {
					t.Fatalf("error %v, want the log's last lines and its name", err)
				}
				if strings.Count(err.Error(), "Reading database") > 15 {
					t.Errorf("error quotes more than the last lines: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "still missing: tshark") {
				t.Fatalf("error %v, want still missing (the fake installs nothing)", err)
			}
			if strings.Count(log.String(), "  done in ") != 2 {
				t.Errorf("terminal lacks one done line per command:\n%s", log.String())
			}
		})
	}
}

func TestLogName(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"sudo", "-n", "apt-get", "-o", "DPkg::Lock::Timeout=300", "install", "-y", "tshark"}, "apt-get-install"},
		{[]string{"npm", "ci", "--ignore-scripts"}, "npm-ci"},
		{[]string{"-x"}, "command"},
		{[]string{"/usr/bin/x"}, "command"},
	} {
		if got := logName(tc.argv); got != tc.want {
			t.Errorf("logName(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}
