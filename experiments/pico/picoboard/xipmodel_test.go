package picoboard

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestXIPCacheModel runs experiments/pico/emulator/xip-cache-check.js: the
// XIP cache model against hit and miss sequences computed by hand (one
// line, a sequence crossing lines, the two ways of a set, the eviction
// order, addresses 8 and 16 kB apart sharing a set, the four aliases,
// flush and write), its miss cost (56 clk_sys cycles at the Pico's boot2
// settings), its geometry checks, and the model in rp2040js under the
// timing layer. Each case is a subtest; a broken model fails it.
func TestXIPCacheModel(t *testing.T) {
	root, mods := emulatorModules(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", filepath.Join(root, "experiments/pico/emulator/xip-cache-check.js"), "--modules", mods).Output()
	var res struct {
		Cases []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
		} `json:"cases"`
		Failures int `json:"failures"`
	}
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		t.Fatalf("xip-cache-check.js: %v, printed %q: %v", err, out, jerr)
	}
	if len(res.Cases) < 18 {
		t.Fatalf("only %d cases ran", len(res.Cases))
	}
	for _, c := range res.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if !c.OK {
				t.Error(c.Detail)
			}
		})
	}
	if res.Failures != 0 || err != nil {
		t.Errorf("%d failures (exit %v)", res.Failures, err)
	}
}

// TestXIPGeometryRefused checks that run.js refuses an impossible cache
// geometry before it reads the image: the error names the geometry, not
// the missing UF2.
func TestXIPGeometryRefused(t *testing.T) {
	root, mods := emulatorModules(t)
	for _, c := range []struct{ args, want string }{
		{"--xip-size 12288", "size 12288 is not a power of two"},
		{"--xip-line 12", "line 12 is not a power of two"},
		{"--xip-ways 3", "3 ways do not divide the 2048 lines"},
		{"--xip-ways 0", "0 ways do not divide"},
	} {
		args := append([]string{filepath.Join(root, "experiments/pico/emulator/run.js"), "--modules", mods,
			"--uf2", filepath.Join(t.TempDir(), "absent.uf2"), "--xip-cache"}, strings.Fields(c.args)...)
		out, err := exec.Command("node", args...).Output()
		var st EmulatorStatus
		if jerr := json.Unmarshal(out, &st); jerr != nil || err == nil {
			t.Fatalf("%s: exit %v, printed %q", c.args, err, out)
		}
		if st.Reason != "error" || !strings.Contains(st.Error, c.want) {
			t.Errorf("%s: %s %q, want an error with %q", c.args, st.Reason, st.Error, c.want)
		}
	}
	out, _ := exec.Command("node", filepath.Join(root, "experiments/pico/emulator/run.js"), "--modules", mods,
		"--uf2", "x.uf2", "--xip-ways", "2").Output()
	if !strings.Contains(string(out), "need --xip-cache") {
		t.Errorf("--xip-ways without --xip-cache: %s", out)
	}
}
