package settings

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestDefaults(t *testing.T) {
	s := Defaults()
	if s.Profile != "" || s.Studies != nil || s.CalibrateK != DefaultCalibrateK || s.CalibrateSeed != DefaultCalibrateSeed ||
		s.Store != "" || s.Remote != "" || s.S3 != (S3Credentials{}) || s.NoPin || s.PinBusy != "" ||
		s.BundleMeasure || s.BundleDirty || s.Fuzz || !s.SourceDateEpoch.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Defaults() = %+v", s)
	}
}

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   func(string) string
		check func(Settings) bool
		err   string // "" means no error
	}{
		{"profile quick", env(Profile, "quick"), func(s Settings) bool { return s.Profile == Quick }, ""},
		{"profile full", env(Profile, "full"), func(s Settings) bool { return s.Profile == Full }, ""},
		{"profile typo", env(Profile, "fll"), nil, `PQREPRO_PROFILE="fll": want quick or full`},
		{"studies", env(Studies, " tls, ,net "), func(s Settings) bool { return fmt.Sprint(s.Studies) == "[tls net]" }, ""},
		{"calibrate", env(CalibrateK, "500", CalibrateSeed, "0x10"), func(s Settings) bool { return s.CalibrateK == 500 && s.CalibrateSeed == 16 }, ""},
		{"calibrate k zero", env(CalibrateK, "0"), nil, `PQREPRO_CALIBRATE_K="0": want a number of pseudo-replicates from 1 to 10000`},
		{"calibrate seed negative", env(CalibrateSeed, "-1"), nil, `PQREPRO_CALIBRATE_SEED="-1": want an unsigned integer`},
		{"store and remote", env(Store, "/s", Remote, "r.toml"), func(s Settings) bool { return s.Store == "/s" && s.Remote == "r.toml" }, ""},
		{"pin no", env(Pin, "no", PinBusy, "why"), func(s Settings) bool { return s.NoPin && s.PinBusy == "why" }, ""},
		{"pin yes", env(Pin, "yes"), func(s Settings) bool { return !s.NoPin }, ""},
		{"pin maybe", env(Pin, "maybe"), nil, `PQREPRO_PIN="maybe": set it to no`},
		{"pico", env(PicoUF2, "a.uf2", PicoDrive, "/d", PicoPort, "/dev/ttyUSB0"), func(s Settings) bool {
			return s.PicoUF2 == "a.uf2" && s.PicoDrive == "/d" && s.PicoPort == "/dev/ttyUSB0"
		}, ""},
		{"bundle flags", env(BundleMeasure, "1", BundleDirty, "0"), func(s Settings) bool { return s.BundleMeasure && !s.BundleDirty }, ""},
		{"bundle flag yes", env(BundleDirty, "yes"), nil, `PQREPRO_BUNDLE_DIRTY="yes": want 1`},
		{"fuzz", env(Fuzz, "1"), func(s Settings) bool { return s.Fuzz }, ""},
		{"CI fuzzes", env(CI, "true"), func(s Settings) bool { return s.Fuzz }, ""},
		{"epoch", env(SourceDateEpoch, "1700000000"), func(s Settings) bool { return s.SourceDateEpoch.Equal(time.Unix(1700000000, 0)) }, ""},
		{"epoch bad", env(SourceDateEpoch, "yesterday"), nil, `SOURCE_DATE_EPOCH="yesterday": not a whole number of seconds from 0 to 253402300799`},
		{"epoch negative", env(SourceDateEpoch, "-5"), nil, `SOURCE_DATE_EPOCH="-5"`},
		{"every bad value at once", env(Profile, "x", Pin, "y"), nil, `PQREPRO_PROFILE="x": want quick or full, or leave it unset for each target's default; PQREPRO_PIN="y"`},
		{"pqrepro s3 keys", env(S3AccessKeyID, "id", S3SecretAccessKey, "sk", AWSAccessKeyID, "aws"), func(s Settings) bool {
			return s.S3 == S3Credentials{AccessKeyID: "id", SecretAccessKey: "sk", From: S3AccessKeyID}
		}, ""},
		{"aws keys", env(AWSAccessKeyID, "aws", AWSSecretKey, "old", AWSSessionToken, "tok"), func(s Settings) bool {
			return s.S3 == S3Credentials{AccessKeyID: "aws", SecretAccessKey: "old", SessionToken: "tok", From: AWSAccessKeyID}
		}, ""},
		{"aws secret preferred", env(AWSAccessKeyID, "aws", AWSSecretKey, "old", AWSSecretAccessKey, "new"), func(s Settings) bool { return s.S3.SecretAccessKey == "new" }, ""},
		{"no aws id, no keys", env(AWSSecretAccessKey, "new"), func(s Settings) bool { return s.S3 == S3Credentials{} }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load(tc.env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "docs/config.md") {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(s) {
				t.Errorf("%+v", s)
			}
		})
	}
}

// TestSecretsNotPrinted: a Settings printed any way hides the S3 secret
// and session token.
func TestSecretsNotPrinted(t *testing.T) {
	s, err := Load(env(AWSAccessKeyID, "id", AWSSecretAccessKey, "hunter2", AWSSessionToken, "tok3n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if out := fmt.Sprintf(f, s); strings.Contains(out, "hunter2") || strings.Contains(out, "tok3n") {
			t.Errorf("%s prints a secret: %s", f, out)
		}
	}
	if s.S3.SecretAccessKey.Reveal() != "hunter2" {
		t.Error("Reveal lost the secret")
	}
}

// TestProfileFor is issue 33's bug: quick ran the full profile when
// PQREPRO_PROFILE=full was exported.
func TestProfileFor(t *testing.T) {
	for _, tc := range []struct {
		env, fixed, def, want, err string
	}{
		{"", Quick, "", Quick, ""},
		{Quick, Quick, "", Quick, ""},
		{Full, Quick, "", "", "quick runs the quick profile only, but PQREPRO_PROFILE=full: unset PQREPRO_PROFILE (or set it to quick) to run quick, or run `go run mage.go all` for the full profile"},
		{"", "", Full, Full, ""},
		{Quick, "", Full, Quick, ""},
		{Full, "", Quick, Full, ""},
		{"", "", "", "", ""},
		{Quick, "", "", Quick, ""},
	} {
		s, err := Load(env(Profile, tc.env))
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.ProfileFor("quick", tc.fixed, tc.def)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("env %q fixed %q: err = %v, want %q", tc.env, tc.fixed, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("env %q fixed %q default %q: %q, %v; want %q", tc.env, tc.fixed, tc.def, got, err, tc.want)
		}
	}
}

// moduleRoot is the repository root above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestDocumented fails when docs/config.md does not name a variable Load
// reads, or names a PQREPRO_ variable Load does not read.
func TestDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	known := map[string]bool{}
	for _, n := range Names {
		known[n] = true
		if !strings.Contains(doc, "`"+n+"`") {
			t.Errorf("docs/config.md does not list `%s`", n)
		}
	}
	for _, f := range strings.FieldsFunc(doc, func(r rune) bool { return r == '`' || r == ' ' || r == '\n' || r == '=' || r == '|' }) {
		if strings.HasPrefix(f, "PQREPRO_") && !known[strings.TrimRight(f, ".,:;)")] {
			t.Errorf("docs/config.md names %s, which settings does not read", f)
		}
	}
}

// envReaders may read the environment: this package's Load is given
// os.Getenv by the entry points only.
var envReaders = map[string]string{
	"magefile.go":       "the Mage entry point: loads the settings",
	"cmd/pqrepro":       "the command's entry points: load the settings",
	"internal/settings": "this package",
	"experiments/instruments/sshhost/role.go": "SSH_CONNECTION is sshd's description of the connection a remote role answers on, not a pqrepro setting",
}

// TestNoLibraryReadsTheEnvironment scans the module's non-test Go files
// for os.Getenv and os.LookupEnv outside envReaders.
func TestNoLibraryReadsTheEnvironment(t *testing.T) {
	root := moduleRoot(t)
	var bad []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || allowed(rel) {
			return nil
		}
		for _, call := range envReads(t, p) {
			bad = append(bad, rel+":"+call)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s reads the environment: add the variable to internal/settings and pass its value down in a Config", b)
	}
}

func allowed(rel string) bool {
	for p := range envReaders {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// envReads lists the os.Getenv and os.LookupEnv calls of a file as
// "line: call".
func envReads(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	osName := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"os"` {
			osName = "os"
			if imp.Name != nil {
				osName = imp.Name.Name
			}
		}
	}
	if osName == "" {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == osName && (sel.Sel.Name == "Getenv" || sel.Sel.Name == "LookupEnv") {
			out = append(out, fmt.Sprintf("%d: os.%s", fset.Position(sel.Pos()).Line, sel.Sel.Name))
		}
		return true
	})
	return out
}

// TestEnvReads checks the scanner on a file that reads and one that
// does not, so that TestNoLibraryReadsTheEnvironment cannot pass by
// finding nothing.
func TestEnvReads(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"reads.go":   "package x\nimport o \"os\"\nvar a = o.Getenv(\"A\")\nfunc f() { _, _ = o.LookupEnv(\"B\") }\n",
		"environ.go": "package x\nimport \"os\"\nvar a = os.Environ()\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(envReads(t, filepath.Join(dir, "reads.go"))); got != "[3: os.Getenv 4: os.LookupEnv]" {
		t.Errorf("reads.go: %s", got)
	}
	if got := envReads(t, filepath.Join(dir, "environ.go")); got != nil {
		t.Errorf("environ.go (passing the environment on is not a read): %v", got)
	}
}

// TestSourceDateEpochBounds is issue 44's item 7: SOURCE_DATE_EPOCH is a
// whole number of seconds from 0 to MaxSourceDateEpoch (9999-12-31
// 23:59:59 UTC); 2^63-1 was accepted, and pdflatex crashed on it.
func TestSourceDateEpochBounds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time // zero: an error
	}{
		{"0", time.Unix(0, 0).UTC()},
		{"1767225600", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"253402300799", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"253402300800", time.Time{}},
		{"9223372036854775807", time.Time{}},
		{"-1", time.Time{}},
		{"1e9", time.Time{}},
		{" 5", time.Time{}},
	} {
		got, err := ParseSourceDateEpoch(tc.in)
		switch {
		case !tc.want.IsZero() && (err != nil || !got.Equal(tc.want) || got.Location() != time.UTC):
			t.Errorf("ParseSourceDateEpoch(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case tc.want.IsZero() && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s=%q", SourceDateEpoch, tc.in)) || !strings.Contains(err.Error(), "253402300799")):
			t.Errorf("ParseSourceDateEpoch(%q) = %v, %v; want an error naming the variable and the bound", tc.in, got, err)
		}
		if _, err := Load(env(SourceDateEpoch, tc.in)); (err == nil) != !tc.want.IsZero() {
			t.Errorf("Load with %s=%q: %v", SourceDateEpoch, tc.in, err)
		}
	}
}

// TestCalibrateKBound is issue 44's item 7: PQREPRO_CALIBRATE_K has an
// upper bound, MaxCalibrateK; a mistyped 2000000 would analyse every
// reference run two million times.
func TestCalibrateKBound(t *testing.T) {
	for _, tc := range []struct {
		v  string
		ok bool
	}{
		{"1", true}, {"200", true}, {strconv.Itoa(MaxCalibrateK), true},
		{strconv.Itoa(MaxCalibrateK + 1), false}, {"2000000", false}, {"0", false},
	} {
		s, err := Load(env(CalibrateK, tc.v))
		switch {
		case tc.ok && (err != nil || strconv.Itoa(s.CalibrateK) != tc.v):
			t.Errorf("%s=%s: %d, %v", CalibrateK, tc.v, s.CalibrateK, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s=%q", CalibrateK, tc.v)) || !strings.Contains(err.Error(), "10000")):
			t.Errorf("%s=%s: %v, want an error giving the bound", CalibrateK, tc.v, err)
		}
	}
}
