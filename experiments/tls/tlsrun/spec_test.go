package tlsrun

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/handshake"
)

// tinySpec is a valid spec of 2 configurations x 5 measured connections
// (blocks of 2, one warm-up each: 3 rounds, 8 connections per
// configuration), the size of the end-to-end tests.
const tinySpec = `
[seeds]
order = 7
certificates = 3

[matrix]
groups = ["X25519", "MLKEM1024"]
cert_keys = ["ed25519"]

[paper]
baseline = "baseline"

[[paper.configs]]
name = "baseline"
cert_key = "ed25519"
group = "X25519"

[[paper.configs]]
name = "pq-kem"
cert_key = "ed25519"
group = "MLKEM1024"

[profiles.quick]
n = 5
block = 2
warmup = 1

[runs]
`

func writeSpec(t testing.TB, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "experiments", "tls.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRepositorySpec(t *testing.T) {
	s, err := LoadSpec("../../tls.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfgs := s.Configs()
	// The 4 x 5 matrix per stack and key-share mode, less Go's HRR path
	// for X25519MLKEM768 (5 cert keys).
	if len(cfgs) != 3*2*20-5 {
		t.Fatalf("%d configurations, want 3 stacks x 2 key-share modes x the 4 x 5 matrix - 5", len(cfgs))
	}
	if got := s.PrimaryCell("full").String(); got != "openssl-cli/docker/direct" {
		t.Errorf("primary cell %s, want openssl-cli/docker/direct (the closest to the original)", got)
	}
	paper := map[string]string{}
	for _, c := range cfgs {
		if c.Chain {
			t.Errorf("%s: the default is leaf only", c.Name)
		}
		id, err := tlsdata.ParseConfigID(c.Name)
		if err != nil || id.ID() != c.Name || id.CertKey != string(c.Key) || id.Group != c.GroupName {
			t.Errorf("config name %q does not parse as a record config ID: %+v %v", c.Name, id, err)
		}
		if c.Paper != "" {
			paper[c.Paper] = c.Name
		}
	}
	want := map[string]string{
		"baseline": "ed25519/X25519/openssl-cli", "pq-sig": "mldsa87/X25519/openssl-cli",
		"pq-kem": "ed25519/MLKEM1024/openssl-cli", "hybrid": "ed25519/SecP384r1MLKEM1024/openssl-cli",
	}
	for k, v := range want {
		if paper[k] != v {
			t.Errorf("paper config %s = %q, want %q", k, paper[k], v)
		}
	}
	if !cfgs[0].Baseline || cfgs[0].Name != "ed25519/X25519/openssl-cli" {
		t.Errorf("first configuration %+v, want the baseline", cfgs[0])
	}
	for _, p := range []string{"quick", "full"} {
		if _, err := s.Profile(p); err != nil {
			t.Error(err)
		}
	}
	q, _ := Estimate(s, "quick")
	f, _ := Estimate(s, "full")
	if q <= 0 || q > 2*time.Minute || f < 4*q {
		t.Errorf("estimates quick %s, full %s: want quick in CI minutes and full much longer", q, f)
	}
	if len(s.Runs) != 0 {
		// A pin is fine in the repository, but it must name a profile.
		for p := range s.Runs {
			if _, ok := s.Profiles[p]; !ok {
				t.Errorf("[runs] pins unknown profile %s", p)
			}
		}
	}
}

func TestChainVariants(t *testing.T) {
	s, err := LoadSpec(writeSpec(t, t.TempDir(), strings.Replace(tinySpec, `baseline = "baseline"`, "baseline = \"baseline\"\nchain_variants = true", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range s.Configs() {
		names = append(names, c.Name+"="+c.Paper)
	}
	got := strings.Join(names, " ")
	want := "ed25519/X25519=baseline ed25519/MLKEM1024=pq-kem ed25519/X25519/chain=baseline-chain ed25519/MLKEM1024/chain=pq-kem-chain"
	if got != want {
		t.Errorf("configs\n got %s\nwant %s", got, want)
	}
}

func TestSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"unknown group", `"MLKEM1024"]`, `"MLKEM512"]`, `unknown key-exchange group "MLKEM512"`},
		{"group not in the study", `"MLKEM1024"]`, `"0x0017"]`, "not one the study measures"},
		{"duplicate group", `"MLKEM1024"]`, `"X25519"]`, "X25519 listed twice"},
		{"unknown cert key", `cert_keys = ["ed25519"]`, `cert_keys = ["rsa2048"]`, `unknown certificate key "rsa2048"`},
		{"groups without keys", `cert_keys = ["ed25519"]`, `cert_keys = []`, "needs both groups and cert_keys"},
		{"n = 0", "n = 5", "n = 0", "n = 0: must be 1.."},
		{"n huge", "n = 5", "n = 1000000000", "must be 1..1000000"},
		{"block = 0", "block = 2", "block = 0", "block = 0"},
		{"negative warm-up", "warmup = 1", "warmup = -1", "warmup = -1"},
		{"misspelt key", "warmup = 1", "wramup = 1", "profiles.quick.wramup"},
		{"misspelt table", "[seeds]", "[seed]", "unknown key"},
		{"bad baseline", `baseline = "baseline"`, `baseline = "base"`, `baseline = "base" is not the name`},
		{"bad label", `name = "pq-kem"`, `name = "PQ KEM"`, "lower-case"},
		{"duplicate label", `name = "pq-kem"`, `name = "baseline"`, "name used twice"},
		{"paper group", `group = "MLKEM1024"`, `group = "X448"`, `unknown key-exchange group "X448"`},
		{"no profiles", "[profiles.quick]\nn = 5\nblock = 2\nwarmup = 1\n", "", "no [profiles.<name>] table"},
		{"bad profile name", "[profiles.quick]", "[profiles.Quick]", "lower-case"},
		{"pin of unknown profile", "[runs]", "[runs]\nfull = \"20260101T000000Z-full\"", `pins profile "full"`},
		{"syntax", "n = 5", "n = ", "tls.toml"},
		{"unknown path", `cert_keys = ["ed25519"]`, `cert_keys = ["ed25519"]` + "\npaths = [\"wifi\"]", `[matrix] paths: "wifi" is not a path`},
		{"duplicate path", "warmup = 1", "warmup = 1\npaths = [\"bridge\", \"bridge\"]", `[profiles.quick] paths: "bridge" listed twice`},
		{"bridge mtu", "[runs]", "[bridge]\nmtu = 9\n[runs]", "[bridge] mtu = 9"},
		{"remote path without host", "warmup = 1", "warmup = 1\npaths = [\"remote\"]", `"remote" path needs [remote] host`},
		{"bad remote host", "[runs]", "[remote]\nhost = \"-oProxyCommand=x\"\n[runs]", "[remote] host"},
		{"misspelt remote key", "[runs]", "[remote]\nhots = \"h\"\n[runs]", "remote.hots"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Replace(tinySpec, tc.old, tc.new, 1)
			if body == tinySpec {
				t.Fatalf("test case does not change the spec (%q not found)", tc.old)
			}
			_, err := LoadSpec(writeSpec(t, t.TempDir(), body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := LoadSpec(filepath.Join(t.TempDir(), "none.toml")); err == nil {
		t.Error("a missing spec was accepted")
	}
}

// Paths: a profile's replace the matrix's; one path plans as before.
func TestPathsAndUnits(t *testing.T) {
	s, err := LoadSpec(writeSpec(t, t.TempDir(), strings.Replace(tinySpec, "warmup = 1\n", "warmup = 1\npaths = [\"loopback\", \"bridge\"]\n[profiles.one]\nn = 5\nblock = 2\nwarmup = 1\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Paths("one"); len(got) != 1 || got[0] != PathLoopback {
		t.Errorf("Paths(one) = %v, want the default [loopback]", got)
	}
	u := s.Units("quick")
	if len(u) != 4 || u[0].Path != PathLoopback || u[2].Path != PathBridge || u[2].Name != u[0].Name {
		t.Errorf("Units(quick) = %+v", u)
	}
	one, _ := Plan(s, "one")
	tiny, _ := Plan(loadTiny(t, tinySpec), "quick")
	if len(one) != len(tiny) {
		t.Fatalf("one path: %d steps, tiny spec %d", len(one), len(tiny))
	}
	for i := range one {
		if one[i] != tiny[i] {
			t.Fatalf("step %d: %+v, without paths %+v", i, one[i], tiny[i])
		}
	}
	if two, _ := Plan(s, "quick"); len(two) != 2*len(tiny) {
		t.Errorf("two paths: %d steps, want %d", len(two), 2*len(tiny))
	}
}

func TestProfileUnknown(t *testing.T) {
	s, err := LoadSpec(writeSpec(t, t.TempDir(), tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Profile("full"); err == nil || !strings.Contains(err.Error(), "quick") {
		t.Errorf("err = %v, want the known profiles listed", err)
	}
	if _, err := Plan(s, "full"); err == nil {
		t.Error("Plan accepted an unknown profile")
	}
	if _, err := Estimate(s, "full"); err == nil {
		t.Error("Estimate accepted an unknown profile")
	}
}

func TestConfigName(t *testing.T) {
	for _, tc := range []struct {
		key   handshake.CertKey
		group tls.CurveID
		chain bool
		want  string
	}{
		{handshake.Ed25519, tls.X25519, false, "ed25519/X25519"},
		{handshake.ECDSAP256, tls.X25519MLKEM768, true, "ecdsa-p256/X25519MLKEM768/chain"},
		{handshake.MLDSA87, tls.SecP384r1MLKEM1024, false, "mldsa87/SecP384r1MLKEM1024"},
	} {
		if got := ConfigName(tc.key, tc.group, tc.chain); got != tc.want {
			t.Errorf("ConfigName = %q, want %q", got, tc.want)
		}
		if _, err := tlsdata.ParseConfigID(tc.want); err != nil {
			t.Errorf("%s: %v", tc.want, err)
		}
	}
}

func TestEstimates(t *testing.T) {
	root := t.TempDir()
	writeSpec(t, root, tinySpec)
	m := Estimates(root)
	if len(m) != 1 || m["quick"] <= costFixed {
		t.Errorf("Estimates = %v", m)
	}
	if Estimates(t.TempDir()) != nil {
		t.Error("Estimates without a spec is not nil")
	}
}

// FuzzLoadSpec: any spec text is either refused with an error or gives a
// valid spec whose small profiles plan without panicking.
func FuzzLoadSpec(f *testing.F) {
	f.Add(tinySpec)
	if b, err := os.ReadFile("../../tls.toml"); err == nil {
		f.Add(string(b))
	}
	f.Add("[profiles.quick]\nn = 1\nblock = 1\nwarmup = 0\n[matrix]\ngroups=[\"X25519\"]\ncert_keys=[\"ed25519\"]\n")
	f.Fuzz(func(t *testing.T, body string) {
		p := filepath.Join(t.TempDir(), "tls.toml")
		os.WriteFile(p, []byte(body), 0o644)
		s, err := LoadSpec(p)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("LoadSpec accepted a spec that does not validate: %v", err)
		}
		for name, prof := range s.Profiles {
			if len(s.Configs())*(prof.N+prof.Warmup*prof.N) > 100_000 {
				continue
			}
			steps, err := Plan(s, name)
			if err != nil || len(steps) == 0 {
				t.Fatalf("profile %s: %d steps, %v", name, len(steps), err)
			}
		}
	})
}
