package picorun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/pico/picoboard"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
)

func TestCommittedSpecIsDefault(t *testing.T) {
	s, err := LoadSpec(filepath.Join("..", "..", "pico.toml"))
	if err != nil {
		t.Fatal(err)
	}
	s.Runs = nil
	if want := DefaultSpec(); !reflect.DeepEqual(s, want) {
		t.Errorf("experiments/pico.toml and DefaultSpec disagree (Estimate uses DefaultSpec):\n got %+v\nwant %+v", s, want)
	}
	if s.Profiles["full"].DSASign != 100 {
		t.Errorf("the full profile must sign 100 times (the paper's count), has %d", s.Profiles["full"].DSASign)
	}
}

// profileConfigurationsLine is a profile's configurations line.
var profileConfigurationsLine = regexp.MustCompile(`(?m)^configurations = \[[^\]]*\]\n`)

func writeSpec(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pico.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// committedSpec is experiments/pico.toml as the tests change it: without
// its profiles' configurations lines, so that a case measures what it
// names and a real board's spec stays valid (a flash configuration runs
// on the emulator only). Cases about configurations add their own.
func committedSpec(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "pico.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return profileConfigurationsLine.ReplaceAllString(string(b), "")
}

func TestLoadSpecRejects(t *testing.T) {
	base := committedSpec(t)
	cases := []struct{ name, old, new, want string }{
		{"unknown key", "workers = 2", "workers = 2\nwrokers = 3", "unknown key(s) wrokers"},
		{"misspelt profile key", "dsa_sign = 10", "dsa_signs = 10", "profiles.quick.dsa_signs"},
		{"zero seed", "seed = 0x5eed2040", "seed = 0", "seed must be set"},
		{"bad board", `kind = "emulator"`, `kind = "qemu"`, `kind = "qemu"`},
		{"serial without port", `kind = "emulator"`, `kind = "serial"`, "needs port"},
		{"bad timeout", `idle_timeout = "120s"`, `idle_timeout = "soon"`, "idle_timeout"},
		{"negative count", "kem = 5", "kem = -1", "kem = -1"},
		{"unknown image", "images = []          # empty", `images = ["mlkem2"] #`, `unknown image "mlkem2"`},
		{"no cflags", `cflags = [`, `cflags = [] # [`, "cflags must not be empty"},
		{"too many workers", "workers = 2", "workers = 64", "workers = 64"},
		{"unknown runtime", `runtime = "libgcc"`, `runtime = "pico-sdk"`, `[build] runtime "pico-sdk" is not one of libgcc, sdk-like`},
		{"no runtime", `runtime = "libgcc"`, ``, `[build] runtime "" is not one of libgcc, sdk-like`},
		{"unknown code_in", `code_in = "ram"`, `code_in = "rom"`, `[build] code_in "rom" is not one of ram, flash, flash-cold`},
		{"no code_in", `code_in = "ram"`, ``, `[build] code_in "" is not one of ram, flash, flash-cold`},
		{"no clock", "clock_mhz = 133\n", "", "[build] clock_mhz = 0: want a positive clock"},
		{"clock the PLL cannot make", "clock_mhz = 133\n", "clock_mhz = 100.1\n", "[build] clock_mhz = 100.1: the PLL cannot make it exactly from the 12 MHz crystal (VCO 750-1600 MHz, FBDIV 16-320, POSTDIV 1-7; RP2040 datasheet 2.18.2); the nearest it can make: 100 MHz and 100.5 MHz"},
		{"clock above the rating", "clock_mhz = 133\n", "clock_mhz = 200\n", "[build] clock_mhz = 200 is above the RP2040's rated 133 MHz"},
		{"no message length", "message_bytes = 32", "", "[build] message_bytes = 0: want 1..4096"},
		{"message too long", "message_bytes = 32", "message_bytes = 5000", "[build] message_bytes = 5000: want 1..4096"},
		{"unknown configuration runtime", `runtime = "sdk-like"`, `runtime = "pico-sdk"`, `[configurations.sdk] runtime "pico-sdk" is not one of libgcc, sdk-like`},
		{"configuration clock", "clock_mhz = 125", "clock_mhz = 124.9", "[configurations.sdk] clock_mhz = 124.9: the PLL cannot make it exactly"},
		{"configuration like build", "runtime = \"sdk-like\"\nclock_mhz = 125\ncode_in = \"flash\"\nimages", "runtime = \"libgcc\"\nclock_mhz = 133\nimages", "[configurations.sdk] sets no factor unlike [build]'s"},
		{"configuration image", `images = ["mlkem", "mldsa44", "mldsa87"]`, `images = ["mlkem", "mldsa"]`, `[configurations.sdk] images: unknown image "mldsa" (standard images: mlkem, mldsa44`},
		{"configuration image twice", `images = ["mlkem", "mldsa44", "mldsa87"]`, `images = ["mlkem", "mlkem"]`, `[configurations.sdk] images: "mlkem" is listed twice`},
		{"configuration name", "[configurations.sdk]", "[configurations.SDK]", "[configurations.SDK]: a configuration's name is lower-case"},
		{"negative usb_irq_us", "usb_irq_us = 0", "usb_irq_us = -1000", "[build] usb_irq_us = -1000: want 0 (off) or a period of 100..1000000 us (pico-sdk's is 1000)"},
		{"usb_irq_us too short", "usb_irq_us = 0", "usb_irq_us = 99", "[build] usb_irq_us = 99: want 0 (off) or a period of 100..1000000 us"},
		{"usb_irq_us too long", "usb_irq_us = 0", "usb_irq_us = 2000000", "[build] usb_irq_us = 2000000"},
		{"usb_irq_us not an integer", "usb_irq_us = 0", "usb_irq_us = 1000.5", `"build.usb_irq_us"): incompatible types: TOML value has type float64`},
		{"usb_irq_us not a number", "usb_irq_us = 0", `usb_irq_us = "1ms"`, `"build.usb_irq_us"): incompatible types: TOML value has type string`},
		{"configuration usb_irq_us", "[configurations.sdk]", "[configurations.usb-fast]\nusb_irq_us = 50\n\n[configurations.sdk]", "[configurations.usb-fast] usb_irq_us = 50: want 0 (off) or a period of 100..1000000 us"},
		{"configuration code_in", "[configurations.sdk]", "[configurations.rom]\ncode_in = \"rom\"\n\n[configurations.sdk]", `[configurations.rom] code_in "rom" is not one of ram, flash, flash-cold`},
		{"configuration usb off like build", "[configurations.sdk]", "[configurations.usb-off]\nusb_irq_us = 0\n\n[configurations.sdk]", "[configurations.usb-off] sets no factor unlike [build]'s"},
		{"unknown configuration in profile", "image_timeout = \"10m\"", "image_timeout = \"10m\"\nconfigurations = [\"sdk\", \"pico\"]", `[profiles.quick] configurations: "pico": configuration "pico" is not a [configurations.*] table (have flash, flash-cold, message, runtime, sdk)`},
		{"configuration twice", "image_timeout = \"10m\"", "image_timeout = \"10m\"\nconfigurations = [\"sdk\", \"sdk\"]", `[profiles.quick] configurations: "sdk" is listed twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := strings.Replace(base, c.old, c.new, 1)
			if body == base {
				t.Fatalf("case does not change the spec (%q not found)", c.old)
			}
			if c.name == "no cflags" {
				// Drop the rest of the array that the replacement commented out.
				i := strings.Index(body, "cflags = [] # [")
				j := strings.Index(body[i:], "\n")
				body = body[:i] + "cflags = []" + body[i+j:]
			}
			_, err := LoadSpec(writeSpec(t, body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to say %q", err, c.want)
			}
		})
	}
	if _, err := LoadSpec(filepath.Join(t.TempDir(), "none.toml")); err == nil {
		t.Error("a missing spec loaded")
	}
	s, _ := LoadSpec(filepath.Join("..", "..", "pico.toml"))
	if _, err := s.Profile("medium"); err == nil || !strings.Contains(err.Error(), "have full, quick") {
		t.Errorf("unknown profile: %v", err)
	}
}

func cleanDataset() *picodata.Dataset {
	return &picodata.Dataset{Header: picodata.Header{FirmwareID: "abc"}, Complete: true,
		Measurements: []picodata.Measurement{{Scheme: "ml-kem-512", Op: "keygen", OK: true}}}
}

func TestCheckDataset(t *testing.T) {
	img := picoboard.Image{FirmwareID: "abc", Schemes: []string{"ml-kem-512"}}
	cases := []struct {
		name string
		edit func(d *picodata.Dataset)
		img  picoboard.Image
		want string
	}{
		{"clean", func(d *picodata.Dataset) {}, img, ""},
		{"fault", func(d *picodata.Dataset) { d.Fault = &picodata.Fault{Exception: 3, PC: 0x20000100} }, img, "faulted (exception 3 at pc=0x20000100"},
		{"device failure", func(d *picodata.Dataset) {
			d.Failures = []picodata.DeviceFailure{{Scheme: "ml-kem-512", Op: "decaps", Iter: 2, Msg: "shared_secret_mismatch"}}
		}, img, "device check failed: ml-kem-512 decaps iteration 2: shared_secret_mismatch"},
		{"ok=0", func(d *picodata.Dataset) { d.Measurements[0].OK = false }, img, "ml-kem-512 keygen iteration 0 reported ok=0"},
		{"incomplete", func(d *picodata.Dataset) {
			d.Complete = false
			d.Problems = []picodata.Problem{{Line: 7, Msg: "checksum mismatch"}}
		}, img, "incomplete serial run (line 7: checksum mismatch)"},
		{"other firmware", func(d *picodata.Dataset) { d.Header.FirmwareID = "def" }, img, "ran firmware def"},
		{"missing scheme", func(d *picodata.Dataset) {}, picoboard.Image{FirmwareID: "abc", Schemes: []string{"ml-kem-512", "ml-kem-768"}}, "ml-kem-768 has no measurements"},
	}
	for _, c := range cases {
		d := cleanDataset()
		c.edit(d)
		err := CheckDataset(c.img, d)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrCheck) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want ErrCheck saying %q", c.name, err, c.want)
		}
	}
	if err := CheckDataset(img, nil); err == nil {
		t.Error("nil dataset passed")
	}
}

func TestCheckVerification(t *testing.T) {
	ok := []picodata.Check{{Scheme: "ml-kem-512", Name: "encaps ct", Lib: "circl", OK: true}}
	if err := checkVerification(ok, nil); err != nil {
		t.Fatal(err)
	}
	bad := append(ok, picodata.Check{Scheme: "ml-dsa-44", Name: "verify", Lib: "crypto/mldsa", Detail: "rejected"})
	err := checkVerification(bad, picoboard.ErrVectorMismatch)
	if !errors.Is(err, ErrCheck) || !strings.Contains(err.Error(), "ml-dsa-44 verify (crypto/mldsa): rejected") {
		t.Errorf("error %v", err)
	}
	if err := checkVerification(ok, errors.New("vector missing for ml-kem-768")); err == nil || !strings.Contains(err.Error(), "ml-kem-768") {
		t.Errorf("error %v", err)
	}
}

func TestEstimate(t *testing.T) {
	q, f := Estimate("quick"), Estimate("full")
	if q <= 0 || q > 10*time.Minute {
		t.Errorf("quick estimate %v: want a few minutes", q)
	}
	// The full profile with the SPHINCS+ images must stay under 45 minutes
	// on 2 cores (the SHA2-128s image alone is about 29).
	if f < 3*q || f > 45*time.Minute {
		t.Errorf("full estimate %v (quick %v): want at most 45 minutes", f, q)
	}
	if Estimate("medium") != 0 {
		t.Error("unknown profile estimated")
	}
	for _, c := range []struct {
		ds      []time.Duration
		workers int
		want    time.Duration
	}{
		{[]time.Duration{3, 3, 2, 2, 2}, 2, 7}, // LPT, not the optimum 6
		{[]time.Duration{5, 1, 1}, 2, 5},
		{[]time.Duration{1, 2, 3}, 1, 6},
		{[]time.Duration{1, 2, 3}, 0, 6},
		{[]time.Duration{4}, 3, 4},
	} {
		if got := makespan(c.ds, c.workers); got != c.want {
			t.Errorf("makespan(%v, %d) = %v, want %v", c.ds, c.workers, got, c.want)
		}
	}
}

func TestTrackerETA(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	tr := &tracker{now: clock, start: now, workers: 2, total: 2, scale: 1,
		est:     map[string]time.Duration{"a": 10 * time.Second, "b": 20 * time.Second},
		started: map[string]time.Time{}, done: map[string]bool{}}
	if s := tr.begin("b"); !strings.Contains(s, "[1/2] b started (elapsed 0s, ETA 20s)") {
		t.Errorf("%q", s)
	}
	tr.begin("a")
	now = now.Add(20 * time.Second) // a took twice its estimate
	if s := tr.finish("a", "ok"); !strings.Contains(s, "a finished in 20s: ok (elapsed 20s, ETA 20s)") {
		t.Errorf("%q", s)
	}
}

func TestRequirements(t *testing.T) {
	reqs := Requirements(".")
	var apt []string
	for _, r := range reqs {
		apt = append(apt, r.Apt...)
		if r.Present == nil || r.Why == "" {
			t.Errorf("requirement %s is incomplete", r.Name)
		}
	}
	if strings.Join(apt, " ") != "gcc-arm-none-eabi libnewlib-arm-none-eabi nodejs npm" {
		t.Errorf("apt packages %v", apt)
	}
}

// needTools skips the end-to-end tests when the firmware toolchain or
// node is missing.
func needTools(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"arm-none-eabi-gcc", "node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %s", tool, InstallHint)
		}
	}
	if testing.Short() {
		t.Skip("-short: the end-to-end run emulates firmware for several seconds")
	}
}

// testSpec is the committed spec with the quick profile cut to 2 ML-KEM
// repetitions, so that one image runs in a few seconds.
func testSpec(t *testing.T) string {
	t.Helper()
	body := strings.Replace(committedSpec(t), "kem = 5", "kem = 2", 1)
	return writeSpec(t, body)
}

// syncBuffer is a log that tests can read while Run writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	on func(line string)
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on != nil {
		s.on(string(p))
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func runDirs(t *testing.T, dataDir string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dataDir, Study))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestRunQuickMLKEM runs the quick profile restricted to the ML-KEM image
// end to end: build, rp2040js, checks, files, meta.json, commit and pin.
func TestRunQuickMLKEM(t *testing.T) {
	needTools(t)
	specPath := testSpec(t)
	dataDir := t.TempDir()
	var log syncBuffer
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := Run(ctx, RunConfig{Config: runlife.Config{Profile: "quick", SpecPath: specPath, DataDir: dataDir, Now: now, Log: &log}, Images: []string{"mlkem"}})
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log.String())
	}
	const id = "20261130T120000Z-quick"
	if got := runDirs(t, dataDir); !reflect.DeepEqual(got, []string{id}) {
		t.Fatalf("run folders %v, want [%s]", got, id)
	}
	dir := filepath.Join(dataDir, Study, id)
	for _, f := range []string{"meta.json", "mlkem/serial.log", "mlkem/measurements.csv.gz", "mlkem/verify.json", "mlkem/size.json", "mlkem/image.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	meta, err := provenance.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Board != "rp2040js 1.4.1 (emulated)" || meta.Study != Study || meta.RunID != id || meta.Profile != "quick" ||
		meta.Seeds["firmware_randombytes"] != picoboard.DefaultSeed || meta.Spec != "pico.toml" {
		t.Errorf("meta %+v", meta)
	}
	for _, tool := range []string{"arm-none-eabi-gcc", "node", "rp2040js"} {
		if meta.Tools[tool] == "" {
			t.Errorf("meta.json lacks the %s version", tool)
		}
	}
	imgs, _ := meta.Measured["images"].(map[string]any)
	mk, _ := imgs["mlkem"].(map[string]any)
	if mk["simulated_mhz"] == nil || mk["wall_seconds"] == nil {
		t.Errorf("measured %v", meta.Measured)
	}
	if len(meta.Files) != 6 || meta.Files[picodata.HostTimingsFile] == "" {
		t.Errorf("meta.json lists %d files, want the 5 image files and the host timings", len(meta.Files))
	}
	for f, sum := range meta.Files {
		got, err := repro.HashFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil || got != sum {
			t.Errorf("%s: hash %s, meta.json says %s (%v)", f, got, sum, err)
		}
	}
	// The records are the serial log, parsed.
	raw, _ := os.ReadFile(filepath.Join(dir, "mlkem", "serial.log"))
	ds, err := picodata.ReadRun(ctx, bytes.NewReader(raw), picodata.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gzb, _ := os.ReadFile(filepath.Join(dir, "mlkem", "measurements.csv.gz"))
	ms, err := picodata.DecodeMeasurements(bytes.NewReader(gzb))
	if err != nil || !reflect.DeepEqual(ms, ds.Measurements) || len(ms) != 18 {
		t.Errorf("%d records, %d in the log (%v)", len(ms), len(ds.Measurements), err)
	}
	hb, _ := os.ReadFile(filepath.Join(dir, picodata.HostTimingsFile))
	hs, err := picodata.DecodeHostTimings(bytes.NewReader(hb))
	if err != nil || len(hs) == 0 || hs[0].Scheme != "ml-kem-512" || hs[0].N != 2 {
		t.Errorf("host timings %+v (%v)", hs, err)
	}
	var rec ImageRecord
	b, _ := os.ReadFile(filepath.Join(dir, "mlkem", "image.json"))
	if err := json.Unmarshal(b, &rec); err != nil || !rec.Emulated || rec.Header.ClockHz != 133000000 || rec.Checks == 0 ||
		rec.Provenance["firmware_id"] != rec.FirmwareID {
		t.Errorf("image.json %+v (%v)", rec, err)
	}
	if bytes.Contains(b, []byte(dataDir)) || bytes.Contains(b, []byte(".cache")) {
		t.Error("image.json holds a path of this machine")
	}
	after, err := LoadSpec(specPath)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := repro.HashFile(filepath.Join(dir, repro.ManifestFile))
	if err != nil {
		t.Fatalf("the run is not sealed: %v", err)
	}
	runs := after.Runs
	if runs["quick"] != id+"@sha256:"+manifest {
		t.Errorf("pinned %v, want quick = %s@sha256:%s", runs, id, manifest)
	}
	t.Run("replayed on a serial port", func(t *testing.T) { testSerialBoard(t, raw, false) })
	t.Run("flashed through BOOTSEL, then replayed", func(t *testing.T) { testSerialBoard(t, raw, true) })
	t.Run("several boards", func(t *testing.T) { testSeveralBoards(t, raw) })

	l := log.String()
	for _, want := range []string{"plan: profile quick, 1 images (mlkem)", "[1/1] mlkem started (elapsed", "[1/1] mlkem finished in", "ETA", "pinned for the quick profile"} {
		if !strings.Contains(l, want) {
			t.Errorf("log lacks %q:\n%s", want, l)
		}
	}
}

// testSerialBoard runs the real-board path: the serial log an emulator run
// produced is played into a pseudo-terminal after some noise, as a board
// that was already running would send it, and Run reads it with
// go.bug.st/serial, checks it and records it as a board run.
//
// With bootsel, the UF2 is first copied to a fake RPI-RP2 drive that
// "appears" (is listed in the mount table) only after a second.
func testSerialBoard(t *testing.T, raw []byte, bootsel bool) {
	master, slave, err := picoboard.OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	// Put the slave into raw mode before anything is written, as a board's
	// USB-UART adapter would be; keep it open (unread) until the end.
	hold, err := picoboard.OpenSerial(slave, picoboard.DefaultBaud)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	body := strings.Replace(committedSpec(t), "kem = 5", "kem = 2", 1)
	body = strings.Replace(body, `kind = "emulator"`, `kind = "serial"`, 1)
	body = strings.Replace(body, `port = ""`, fmt.Sprintf("port = %q", slave), 1)
	body = strings.Replace(body, `idle_timeout = "120s"`, `idle_timeout = "20s"`, 1)
	cfg := RunConfig{Config: runlife.Config{Profile: "quick"}, Images: []string{"mlkem"}}
	var drive string
	if bootsel {
		body = strings.Replace(body, `bootsel = ""`, `bootsel = "auto"`, 1)
		drive = t.TempDir()
		os.WriteFile(filepath.Join(drive, "INFO_UF2.TXT"), []byte("UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: RPI-RP2\n"), 0o644)
		cfg.mountsFile = filepath.Join(t.TempDir(), "mounts")
		os.WriteFile(cfg.mountsFile, []byte("proc /proc proc rw 0 0\n"), 0o644)
		cfg.bootselWait = 30 * time.Second
		time.AfterFunc(time.Second, func() {
			os.WriteFile(cfg.mountsFile, []byte("proc /proc proc rw 0 0\n/dev/sdz1 "+drive+" vfat rw 0 0\n"), 0o644)
		})
	}
	cfg.SpecPath = writeSpec(t, body)
	dataDir := t.TempDir()
	cfg.DataDir = dataDir
	var log syncBuffer
	trigger := "started"
	if bootsel {
		trigger = "the board runs it"
	}
	log.on = func(line string) {
		if strings.Contains(line, trigger) {
			go func() {
				master.Write([]byte("boot noise \x00\xff\r\nPQ 9 m scheme=x *00000000\r\n"))
				master.Write(raw)
			}()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg.Log = &log
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if bootsel {
		uf2, err := os.ReadFile(filepath.Join(drive, "mlkem.uf2"))
		if err != nil {
			t.Fatalf("nothing flashed: %v\n%s", err, log.String())
		}
		if _, err := picoboard.DecodeUF2(uf2); err != nil {
			t.Error(err)
		}
		if !strings.Contains(log.String(), "waiting up to 30s for the RPI-RP2 drive") {
			t.Errorf("no BOOTSEL instruction in the log:\n%s", log.String())
		}
	}
	runs := runDirs(t, dataDir)
	if len(runs) != 1 {
		t.Fatalf("runs %v", runs)
	}
	dir := filepath.Join(dataDir, Study, runs[0])
	meta, err := provenance.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(meta.Board, "Raspberry Pi Pico (RP2040) on pts/") || meta.Measured["emulated"] != false || meta.Tools["rp2040js"] != "" {
		t.Errorf("board %q, measured %v, tools %v", meta.Board, meta.Measured, meta.Tools)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "mlkem", "serial.log"))
	if !bytes.HasPrefix(got, []byte("boot noise")) || !bytes.HasSuffix(got, raw) {
		t.Error("the board's serial log is not kept verbatim (noise first)")
	}
	var rec ImageRecord
	b, _ := os.ReadFile(filepath.Join(dir, "mlkem", "image.json"))
	if err := json.Unmarshal(b, &rec); err != nil || rec.Emulated || rec.Emulator != nil || rec.Skipped < 1 {
		t.Errorf("image.json %+v (%v)", rec, err)
	}
}

// TestRunFailedChecks proves that a failed device or host check fails the
// run, naming the scheme and check, with no run folder and no pin.
func TestRunFailedChecks(t *testing.T) {
	needTools(t)
	cases := []struct {
		name   string
		tamper func(string, *picodata.Dataset)
		want   string
	}{
		{"host verification", func(_ string, d *picodata.Dataset) { d.Vectors["ml-kem-768"]["ct"][0] ^= 1 }, "host verification failed: ml-kem-768"},
		{"device check", func(_ string, d *picodata.Dataset) {
			d.Failures = append(d.Failures, picodata.DeviceFailure{Scheme: "ml-kem-1024", Op: "decaps", Iter: 1, Msg: "shared_secret_mismatch"})
		}, "device check failed: ml-kem-1024 decaps iteration 1: shared_secret_mismatch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			specPath := testSpec(t)
			before, _ := os.ReadFile(specPath)
			dataDir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			_, err := Run(ctx, RunConfig{Config: runlife.Config{Profile: "quick", SpecPath: specPath, DataDir: dataDir}, Images: []string{"mlkem"}, tamper: c.tamper})
			if !errors.Is(err, ErrCheck) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "image mlkem") {
				t.Fatalf("error %v, want ErrCheck saying %q", err, c.want)
			}
			if got := runDirs(t, dataDir); len(got) != 0 {
				t.Errorf("a failed run left %v", got)
			}
			if after, _ := os.ReadFile(specPath); !bytes.Equal(before, after) {
				t.Error("a failed run changed the spec")
			}
		})
	}
}

// TestRunCancelled interrupts a run while its image is being emulated: no
// run folder (not even the temporary one) and no pin remain.
func TestRunCancelled(t *testing.T) {
	needTools(t)
	specPath := testSpec(t)
	before, _ := os.ReadFile(specPath)
	dataDir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &syncBuffer{on: func(line string) {
		if strings.Contains(line, "started") {
			time.AfterFunc(300*time.Millisecond, cancel)
		}
	}}
	start := time.Now()
	_, err := Run(ctx, RunConfig{Config: runlife.Config{Profile: "quick", SpecPath: specPath, DataDir: dataDir, Log: log}, Images: []string{"mlkem"}})
	if err == nil {
		t.Fatal("a cancelled run succeeded")
	}
	if !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "interrupted") && !strings.Contains(err.Error(), "cancel") {
		t.Errorf("error %v does not say the run was cancelled", err)
	}
	if time.Since(start) > time.Minute {
		t.Errorf("cancel took %v", time.Since(start))
	}
	if got := runDirs(t, dataDir); len(got) != 0 {
		t.Errorf("a cancelled run left %v", got)
	}
	if after, _ := os.ReadFile(specPath); !bytes.Equal(before, after) {
		t.Error("a cancelled run changed the spec")
	}
}

func TestRunRejectsUnknownImage(t *testing.T) {
	_, err := Run(context.Background(), RunConfig{Config: runlife.Config{Profile: "quick", SpecPath: testSpec(t), DataDir: t.TempDir()}, Images: []string{"nope"}})
	if err == nil || !strings.Contains(err.Error(), `unknown image "nope"`) {
		t.Errorf("error %v", err)
	}
	_, err = Run(context.Background(), RunConfig{Config: runlife.Config{Profile: "medium", SpecPath: testSpec(t), DataDir: t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), `profile "medium"`) {
		t.Errorf("error %v", err)
	}
}

func BenchmarkEncodeMeasurements(b *testing.B) {
	ms := make([]picodata.Measurement, 1000)
	for i := range ms {
		ms[i] = picodata.Measurement{Scheme: "ml-dsa-87", Op: "sign", Iter: i, Micros: uint64(300000 + i), Cycles: uint64(39900000 + i), Stack: 122000, Heap: 424, OK: true}
	}
	for b.Loop() {
		if _, err := picodata.EncodeMeasurements(ms); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBuildKeyRuntime checks that the default run-time library leaves a
// configuration's image folder where it was and "sdk-like" gets its own.
func TestBuildKeyRuntime(t *testing.T) {
	c := picoboard.BuildConfig{Profile: picoboard.QuickProfile, Seed: picoboard.DefaultSeed, CFlags: picoboard.DefaultCFlags}
	old := "quick-" + repro.HashBytes([]byte(fmt.Sprintf("%+v|%d|%q", c.Profile, c.Seed, c.CFlags)))[:12]
	for _, rt := range []string{"", picoboard.DefaultRuntime} {
		c.Runtime = rt
		if got := buildKey(c); got != old {
			t.Errorf("runtime %q: build key %s, want the old %s", rt, got, old)
		}
	}
	c.Runtime = "sdk-like"
	if buildKey(c) == old {
		t.Error("sdk-like shares the default's build key")
	}
}

// TestCodeInFlashNeedsEmulator checks that a flash image on a real board
// (which would need boot2) is refused before anything is built, and that
// the emulator accepts both flash levels.
func TestCodeInFlashNeedsEmulator(t *testing.T) {
	// Without the one-factor flash configurations, which [build] in flash
	// would make identical to it.
	base := committedSpec(t)
	for _, l := range []string{"flash", "flash-cold"} {
		base = strings.Replace(base, "[configurations."+l+"]\ncode_in = \""+l+"\"\nimages = [\"mldsa44\"]\n", "", 1)
	}
	for _, l := range []string{"flash", "flash-cold"} {
		body := strings.Replace(base, `code_in = "ram"`, `code_in = "`+l+`"`, 1)
		if _, err := LoadSpec(writeSpec(t, body)); err != nil {
			t.Errorf("code_in %s on the emulator: %v", l, err)
		}
		body = strings.Replace(strings.Replace(body, `kind = "emulator"`, `kind = "serial"`, 1), `port = ""`, `port = "/dev/ttyACM0"`, 1)
		_, err := LoadSpec(writeSpec(t, body))
		if err == nil || !strings.Contains(err.Error(), `code_in = "`+l+`" runs on the emulator only`) {
			t.Errorf("code_in %s on a board: %v", l, err)
		}
	}
	// A configuration in flash is refused on a board only when a profile
	// runs it: the committed "sdk" is defined for the emulator.
	board := strings.Replace(strings.Replace(base, `kind = "emulator"`, `kind = "serial"`, 1), `port = ""`, `port = "/dev/ttyACM0"`, 1)
	if _, err := LoadSpec(writeSpec(t, board)); err != nil {
		t.Errorf("sdk defined, not run, on a board: %v", err)
	}
	board = strings.Replace(board, "image_timeout = \"10m\"", "image_timeout = \"10m\"\nconfigurations = [\"sdk\"]", 1)
	if _, err := LoadSpec(writeSpec(t, board)); err == nil || !strings.Contains(err.Error(), `[profiles.quick] configurations: "sdk": code_in = "flash" runs on the emulator only`) {
		t.Errorf("sdk run on a board: %v", err)
	}
}

// TestBuildKeyCodeIn checks that code in SRAM leaves a configuration's
// image folder where it was and each flash level gets its own.
func TestBuildKeyCodeIn(t *testing.T) {
	c := picoboard.BuildConfig{Profile: picoboard.QuickProfile, Seed: picoboard.DefaultSeed, CFlags: picoboard.DefaultCFlags}
	old := buildKey(c)
	c.CodeIn = picoboard.DefaultCodeIn
	if got := buildKey(c); got != old {
		t.Errorf("code_in ram: build key %s, want the old %s", got, old)
	}
	seen := map[string]bool{old: true}
	for _, l := range []string{"flash", "flash-cold"} {
		c.CodeIn = l
		if k := buildKey(c); seen[k] {
			t.Errorf("code_in %s shares a build key", l)
		} else {
			seen[k] = true
		}
	}
}

// TestPlanConfigurations checks the configuration mechanism: a profile
// that lists "sdk" runs each image twice, once with [build]'s factors
// under its own name and once as <image>+sdk with the SDK's clock and
// runtime, into build folders of their own; a profile that lists none
// (every pinned run's) runs [build]'s alone.
func TestPlanConfigurations(t *testing.T) {
	s := DefaultSpec()
	q := s.Profiles["quick"]
	q.Configurations = nil
	s.Profiles["quick"] = q
	p, err := newPlan(s, "quick", []string{"mlkem"}, 0)
	if err != nil || len(p.imgs) != 1 || p.imgs[0].Name != "mlkem" || p.imgs[0].ClockMHz != 133 || p.imgs[0].Runtime != "libgcc" || p.imgs[0].MsgBytes != 32 {
		t.Fatalf("no configurations: %+v, %v", p.imgs, err)
	}
	if p.clocks() != "133 MHz" {
		t.Errorf("clocks %q", p.clocks())
	}
	q.Configurations = []string{"sdk"}
	s.Profiles["quick"] = q
	s.Configurations["long-message"] = ConfigSpec{MessageBytes: 1024}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err = newPlan(s, "quick", []string{"mlkem", "mldsa44"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	keys := map[string]bool{}
	for _, c := range p.imgs {
		got[c.Name] = fmt.Sprintf("%s %v %d", c.Runtime, c.ClockMHz, c.MsgBytes)
		c.Profile = q.Firmware("quick")
		keys[buildKey(c)] = true
	}
	want := map[string]string{"mlkem": "libgcc 133 32", "mldsa44": "libgcc 133 32", "mlkem+sdk": "sdk-like 125 32", "mldsa44+sdk": "sdk-like 125 32"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("images %v, want %v", got, want)
	}
	if len(keys) != 2 {
		t.Errorf("%d build folders for two configurations", len(keys))
	}
	if p.clocks() != "133 MHz or 125 MHz" {
		t.Errorf("clocks %q", p.clocks())
	}
	if f, _ := s.Factors("long-message"); f != (Factors{Config: "long-message", Runtime: "libgcc", ClockMHz: 133, MessageBytes: 1024, CodeIn: "ram"}) {
		t.Errorf("long-message resolves to %+v", f)
	}
	if f, _ := s.Factors("sdk"); f != (Factors{Config: "sdk", Runtime: "sdk-like", ClockMHz: 125, MessageBytes: 32, CodeIn: "flash"}) {
		t.Errorf("sdk resolves to %+v", f)
	}
	// A configuration's images list limits it to those of the profile's.
	sdk := s.Configurations["sdk"]
	sdk.Images = []string{"mldsa44", "classic"}
	s.Configurations["sdk"] = sdk
	p, err = newPlan(s, "quick", []string{"mlkem", "mldsa44"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range p.imgs {
		names = append(names, c.Name)
	}
	if slices.Sort(names); fmt.Sprint(names) != "[mldsa44 mldsa44+sdk mlkem]" {
		t.Errorf("sdk limited to mldsa44 and classic runs %v", names)
	}
	if Estimate("quick") == 0 {
		t.Error("no estimate")
	}
}
