package picorun

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/pico/picoboard"
	"pqrepro/internal/repro"
)

// RunConfig says which profile to run and where: the run lifecycle's
// settings and Study C's own.
type RunConfig struct {
	// Config is the run lifecycle's (runlife.Config; Run sets Study).
	// Root "" is found from the working directory (picoboard.FindRoot);
	// Now is also the clock of the progress lines.
	runlife.Config
	// Images, when set, replaces the profile's image list (tests).
	Images []string
	// Workers, when positive, replaces the spec's worker count.
	Workers int

	// tamper, in tests, changes a dataset after it is read and before it
	// is checked, to prove that a failed check fails the run.
	tamper func(image string, ds *picodata.Dataset)
	// mountsFile replaces /proc/self/mounts when looking for the BOOTSEL
	// drive. bootselWait is how long to wait for it (0: DefaultBootselWait);
	// sysRoot replaces /sys when reading a port's USB serial number.
	mountsFile  string
	bootselWait time.Duration
	sysRoot     string
}

// DefaultBootselWait is how long Run waits for a board's RPI-RP2 drive to
// appear before each image (someone has to hold BOOTSEL and replug it).
const DefaultBootselWait = 2 * time.Minute

// ImageRecord is image.json: how one image was built and how its run went.
// It holds no path of the machine that made it.
type ImageRecord struct {
	Name string `json:"name"`
	// Factors are the configuration the image was built with (runs
	// before them: libgcc, 133 MHz, 32 bytes, and no such keys).
	Factors
	Schemes      []string          `json:"schemes"`
	Profile      string            `json:"profile"`
	FirmwareID   string            `json:"firmware_id"`
	Compiler     string            `json:"compiler"`
	CFlags       []string          `json:"cflags"`
	Defines      []string          `json:"defines"`
	Sources      map[string]string `json:"sources"`
	ELFSHA256    string            `json:"elf_sha256"`
	UF2SHA256    string            `json:"uf2_sha256"`
	Header       picodata.Header   `json:"header"`
	Measurements int               `json:"measurements"`
	Checks       int               `json:"host_checks"`
	Skipped      int               `json:"skipped_lines"`
	EndMicros    uint64            `json:"end_us"`
	// Board is the ID of the board that ran the image. It is the unique ID
	// the firmware reported (Header.UID), else the USB serial number of the
	// board's serial port, else pico-<n> (the n-th board of the spec); an
	// emulator instance is rp2040js-<n>. Runs made before boards were
	// recorded lack it: they ran on one board (analysis/picostudy).
	Board    string          `json:"board,omitempty"`
	Emulated bool            `json:"emulated"`
	Emulator *EmulatorRecord `json:"emulator,omitempty"`
	// Provenance is picoboard.Image.Provenance: firmware ID, output hashes,
	// compiler, flags, defines, seed, memory layout, source tree hashes,
	// PQClean and mbedTLS versions.
	Provenance   map[string]string `json:"provenance"`
	BuildSeconds float64           `json:"build_seconds"`
	WallSeconds  float64           `json:"wall_seconds"`
}

// EmulatorRecord is what rp2040js reported about one image's run.
type EmulatorRecord struct {
	Reason      string   `json:"reason"`
	Cycles      uint64   `json:"cycles"`
	SimSeconds  float64  `json:"sim_seconds"`
	WallSeconds float64  `json:"wall_seconds"`
	SimMHz      float64  `json:"sim_mhz"`
	ClkSys      float64  `json:"clk_sys_hz"`
	Warnings    []string `json:"warnings,omitempty"`
}

// ErrCheck is wrapped by the error of a run whose device or host checks
// failed.
var ErrCheck = errors.New("pico run check failed")

// Run runs the profile's firmware images and records a raw dataset. The
// lifecycle (defaults, spec, run folder, meta.json, commit, pin) is
// experiments/instruments/runlife's; the steps between are this package's:
//
//  1. load the spec strictly and plan the run (newPlan: images, boards,
//     workers);
//  2. start a run folder (runlife.Life.Begin);
//  3. install the emulator or name the real boards (prepareBoards);
//  4. build every image (buildImages, cached by firmware ID);
//  5. run the images on the boards (planJobs, runJobs, runImage:
//     Spec.Board.Slots: Workers emulator instances, or the real boards,
//     one image at a time each), longest first; spread (each image once,
//     on the next free board) or, with replicate, every image on every
//     board into <image>@<board number>; write per image the serial log
//     verbatim, measurements.csv.gz, verify.json (host checks with circl
//     and Go's crypto), size.json and image.json, which names the board
//     (ImageRecord.Board);
//  6. time the schemes on the host CPU when the spec asks
//     (writeHostTimings);
//  7. write meta.json (measuredMeta, runNotes), commit the run, and pin
//     it in the spec for the profile (runlife.Life.Commit).
//
// An incomplete read, a device check that failed ("err" line), a fault or
// a host verification that failed fails the run with the image, scheme and
// check named, as do a board that disappears, a BOOTSEL drive that does
// not appear or cannot be written, and two boards reporting one ID
// (ErrSameBoard); the run folder is then removed (never registered), as it
// is when ctx is cancelled. The result is nil when no run was committed; a run committed but not
// pinned has one, beside the error.
func Run(ctx context.Context, cfg RunConfig) (res *runlife.Result, err error) {
	root, err := picoboard.FindRoot(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("pico:run: %w", err)
	}
	cfg.Study, cfg.Root = Study, root
	l, err := runlife.New(cfg.Config)
	if err != nil {
		return nil, err
	}
	defer func() { err = l.Wrap(err) }()
	log, now := l.Log, l.Now
	logf := func(format string, args ...any) { fmt.Fprintf(log, "pico: "+format+"\n", args...) }

	// 1. The spec and what it asks for; nothing is created yet.
	s, err := LoadSpec(l.SpecPath)
	if err != nil {
		return nil, err
	}
	p, err := newPlan(s, cfg.Profile, cfg.Images, cfg.Workers)
	if err != nil {
		return nil, err
	}
	logf("%s", p.describe(cfg.Profile))

	// 2. The run folder, removed on every path that does not commit it.
	if err := l.Begin(ctx); err != nil {
		return nil, err
	}
	defer l.Abort()
	defer func() {
		if err != nil {
			logf("run %s failed, nothing recorded: %v", l.Run.ID, firstLine(err))
		}
	}()

	// 3. Tools and the board label first: a missing emulator fails early.
	bs, err := prepareBoards(ctx, root, p, cfg.sysRoot, log)
	if err != nil {
		return nil, err
	}

	// 4. Build every image before running any: a compile error stops the
	// run before minutes of emulation.
	built, err := buildImages(ctx, root, s, cfg.Profile, p.prof, p.imgs, log)
	if err != nil {
		return nil, err
	}

	// 5. Run the images on the boards.
	queues, jobEst := planJobs(built, p.slots, p.replicate, p.est)
	tr := &tracker{now: now, start: now(), est: jobEst, workers: p.workers, total: len(jobEst),
		started: map[string]time.Time{}, done: map[string]bool{}, scale: 1, machine: l.MachineLine}
	records, err := runJobs(ctx, p.slots, queues, p.replicate, func(ctx context.Context, j job, sl Slot) (ImageRecord, error) {
		img := j.img
		logf("%s on %s", tr.begin(j.key), sl.Name())
		rec, err := runImage(ctx, img, imageEnv{root: root, dir: filepath.Join(l.Run.Dir, j.key),
			board: p.board, slot: sl, ids: bs.ids, modules: bs.modules, idle: p.imageIdle(img), timeout: p.timeout, log: log, tamper: cfg.tamper, now: now,
			mounts: cfg.mountsFile, bootselWait: cmp.Or(cfg.bootselWait, DefaultBootselWait)})
		if err != nil {
			return rec, fmt.Errorf("image %s on board %d (%s): %w", img.Name, sl.N, sl.describe(), err)
		}
		detail := fmt.Sprintf("%d measurements, %d host checks passed, board %s", rec.Measurements, rec.Checks, rec.Board)
		if rec.Emulator != nil {
			detail += fmt.Sprintf(", %.1f simulated MHz", rec.Emulator.SimMHz)
		}
		logf("%s", tr.finish(j.key, detail))
		return rec, nil
	})
	if err != nil {
		return nil, err
	}
	if err := l.Interrupted(ctx); err != nil {
		return nil, err
	}

	// 6. The same schemes timed on the host CPU.
	hostRows := 0
	if s.HostTimings {
		if hostRows, err = writeHostTimings(ctx, l.Run.Dir, s, cfg.Profile, p.prof, built, now, logf); err != nil {
			return nil, err
		}
	}

	// 7. meta.json, commit and pin.
	meta := l.Meta(ctx, map[string][]string{
		"arm-none-eabi-gcc": {"arm-none-eabi-gcc", "--version"},
		"node":              {"node", "--version"},
		"npm":               {"npm", "--version"},
	})
	for k, v := range bs.tools {
		meta.Tools[k] = v
	}
	meta.Seeds = map[string]uint64{"firmware_randombytes": s.Seed}
	meta.Board = bs.label
	meta.Measured = measuredMeta(p, meta.End.Sub(meta.Start), hostRows, bs.ids.record(p.slots, records), records)
	meta.Notes = runNotes(p.board.Kind == BoardEmulator, p.clocks())
	if meta.Files, err = hashTree(l.Run.Dir); err != nil {
		return nil, err
	}
	if err := l.Commit(ctx, meta); err != nil {
		return l.Result(), err
	}
	logf("run %s recorded (%d images, %v) and %s", l.Run.ID, len(records),
		meta.End.Sub(meta.Start).Round(time.Second), l.PinState())
	return l.Result(), nil
}

// runPlan is what a run does, decided from the spec and RunConfig before
// anything is created.
type runPlan struct {
	prof          ProfileSpec
	imgs          []picoboard.BuildConfig // each image once, longest first
	est           map[string]time.Duration
	workers       int // boards running at once
	board         BoardSpec
	slots         []Slot
	replicate     bool // every image on every board
	idle, timeout time.Duration
}

// newPlan selects the profile's images, boards and workers and orders the
// images. images, when given, and workers, when positive, replace the
// spec's; newPlan orders the images
// longest first so the boards finish close together, and refuses a set of
// real boards that cannot run it.
func newPlan(s Spec, profile string, images []string, workers int) (runPlan, error) {
	prof, err := s.Profile(profile)
	if err != nil {
		return runPlan{}, err
	}
	names := prof.Images
	if len(images) > 0 {
		names = images
	}
	all := picoboard.StandardImages()
	for _, n := range names {
		if !slices.ContainsFunc(all, func(c picoboard.BuildConfig) bool { return c.Name == n }) {
			return runPlan{}, fmt.Errorf("unknown image %q (standard images: %s)", n, strings.Join(imageNames(all), ", "))
		}
	}
	imgs, err := withConfigurations(s, selectImages(all, names), prof.Configurations)
	if err != nil {
		return runPlan{}, err
	}
	p := runPlan{prof: prof, imgs: imgs, workers: s.Workers, board: s.Board}
	if workers > 0 {
		p.workers = workers
	}
	p.slots = p.board.Slots(p.workers)
	if p.board.Kind == BoardSerial {
		p.workers = len(p.slots) // one image at a time per board
		for _, sl := range p.slots {
			// Spread, a free board takes any image: each one needs a way
			// to load it unless only one image runs.
			if sl.Bootsel == "" && len(p.imgs) > 1 {
				return runPlan{}, fmt.Errorf(`board %d (%s) has no bootsel and runs only the image it already has; set its bootsel (the RPI-RP2 mount point, or "auto" with one board) or run one image (%d selected)`, sl.N, sl.Port, len(p.imgs))
			}
		}
	}
	p.idle, _ = parsePositive(p.board.IdleTimeout)
	p.timeout, _ = parsePositive(prof.ImageTimeout)
	// Replicating on one board is spreading: plain <image> folders.
	p.replicate = p.board.Replicate && len(p.slots) > 1
	p.est = map[string]time.Duration{}
	for _, c := range p.imgs {
		p.est[c.Name] = imageEstimate(c, prof)
	}
	slices.SortStableFunc(p.imgs, func(a, b picoboard.BuildConfig) int { return int(p.est[b.Name] - p.est[a.Name]) })
	return p, nil
}

// configSep joins an image's name and its configuration's:
// <image>+<configuration>, the image's name and run folder.
const configSep = "+"

// withConfigurations returns the images with [build]'s factors, then each
// configuration's images again as <image>+<name> with its factors. A
// configuration with an images list runs only those.
func withConfigurations(s Spec, imgs []picoboard.BuildConfig, configs []string) ([]picoboard.BuildConfig, error) {
	var out []picoboard.BuildConfig
	for _, name := range append([]string{""}, configs...) {
		f, err := s.Factors(name)
		if err != nil {
			return nil, err
		}
		only := s.Configurations[name].Images
		for _, c := range imgs {
			if name != "" && len(only) > 0 && !slices.Contains(only, c.Name) {
				continue
			}
			c = f.Apply(c)
			if name != "" {
				c.Name += configSep + name
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// clocks names the plan's clocks for meta.json's notes: "133 MHz", or
// each image's when they differ.
func (p runPlan) clocks() string {
	var mhz []string
	for _, c := range p.imgs {
		v := strconv.FormatFloat(cmp.Or(c.ClockMHz, picoboard.DefaultClockMHz), 'f', -1, 64) + " MHz"
		if !slices.Contains(mhz, v) {
			mhz = append(mhz, v)
		}
	}
	if len(mhz) == 0 {
		return strconv.Itoa(picoboard.DefaultClockMHz) + " MHz"
	}
	return strings.Join(mhz, " or ")
}

// describe is the plan's log line.
func (p runPlan) describe(profile string) string {
	planImgs := p.imgs
	sched := "spread over"
	if p.replicate {
		planImgs = nil
		for range p.slots {
			planImgs = append(planImgs, p.imgs...)
		}
		sched = "each on every one of"
	}
	return fmt.Sprintf("plan: profile %s, %d images (%s) on %s, %s %d board(s) (%s), about %v",
		profile, len(p.imgs), strings.Join(imageNames(p.imgs), ", "), p.board.Kind, sched, len(p.slots),
		strings.Join(slotNames(p.slots), ", "), estimateFor(planImgs, p.prof, p.workers).Round(time.Second))
}

// imageIdle is how long img may stay silent on the serial line.
func (p runPlan) imageIdle(img picoboard.Image) time.Duration {
	if p.prof.RSAKeygen > 0 && slices.Contains(img.Schemes, "rsa-2048") ||
		slices.ContainsFunc(img.Schemes, func(s string) bool { return slices.Contains(picodata.SPHINCSSchemes, s) }) {
		// An RSA-2048 keygen or a SPHINCS+ signature is silent for minutes
		// in rp2040js: only the image's time limit bounds it.
		return max(p.idle, p.timeout)
	}
	return p.idle
}

// boardSetup is what the boards need before the first image: the
// emulator's install (modules) and version, meta.json's board label, and
// the board IDs.
type boardSetup struct {
	tools   map[string]string
	label   string
	modules string
	ids     *boardIDs
}

// prepareBoards installs rp2040js or names the real boards' serial ports.
// An emulated run records rp2040js's version; prepareBoards also checks
// that no two ports are one board (boardIDs.preflight).
func prepareBoards(ctx context.Context, root string, p runPlan, sysRoot string, log io.Writer) (boardSetup, error) {
	bs := boardSetup{tools: map[string]string{}}
	if p.board.Kind == BoardEmulator {
		var err error
		if bs.modules, err = picoboard.EnsureEmulator(ctx, root, log); err != nil {
			return bs, err
		}
		ver, err := packageVersion(filepath.Join(bs.modules, "rp2040js", "package.json"))
		if err != nil {
			return bs, fmt.Errorf("rp2040js version: %w (delete .cache/pico/npm-emu and retry)", err)
		}
		bs.tools["rp2040js"] = ver
		bs.label = "rp2040js " + ver + " (emulated)"
	} else {
		bs.label = serialBoardLabel(p.slots)
	}
	bs.ids = newBoardIDs(p.slots, sysRoot)
	return bs, bs.ids.preflight()
}

// serialBoardLabel is meta.json's board for real boards: the model and
// their ports.
func serialBoardLabel(slots []Slot) string {
	var ports []string
	for _, sl := range slots {
		ports = append(ports, strings.TrimPrefix(sl.Port, "/dev/"))
	}
	if len(slots) > 1 {
		return fmt.Sprintf("%d Raspberry Pi Picos (RP2040) on %s", len(slots), strings.Join(ports, ", "))
	}
	return "Raspberry Pi Pico (RP2040) on " + strings.Join(ports, ", ")
}

// job is one image to run on one board.
type job struct {
	key string // run folder and progress name
	img picoboard.Image
}

// planJobs lists the jobs per queue, in order, and each job's estimate.
// A queue holds every image once in one
// queue that every board takes from (spread), or every image once per
// board in a queue of its own (replicate: run folders <image>@<board
// number>); and each job's estimate.
func planJobs(built []picoboard.Image, slots []Slot, replicate bool, est map[string]time.Duration) ([][]job, map[string]time.Duration) {
	jobEst := map[string]time.Duration{}
	if !replicate {
		var q []job
		for _, img := range built {
			q = append(q, job{key: img.Name, img: img})
			jobEst[img.Name] = est[img.Name]
		}
		return [][]job{q}, jobEst
	}
	var plan [][]job
	for _, sl := range slots {
		var q []job
		for _, img := range built {
			j := job{key: fmt.Sprintf("%s@%d", img.Name, sl.N), img: img}
			jobEst[j.key] = est[img.Name]
			q = append(q, j)
		}
		plan = append(plan, q)
	}
	return plan, jobEst
}

// runJobs runs the jobs on the boards, one at a time per board. With
// replicate, board i takes queue i; else every board takes the next job of
// the one queue. The first job that fails stops the others (a job stopped
// by it is not an error of its own) and is the error; a job that ctx
// stops is not recorded. It returns the records by job key.
func runJobs(ctx context.Context, slots []Slot, plan [][]job, replicate bool, run func(context.Context, job, Slot) (ImageRecord, error)) (map[string]ImageRecord, error) {
	queues := make([]chan job, len(slots))
	shared := make(chan job)
	for i := range slots {
		queues[i] = shared
		if replicate {
			queues[i] = make(chan job)
		}
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu       sync.Mutex
		firstErr error
		records  = map[string]ImageRecord{}
	)
	fail := func(e error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = e
			cancel(e)
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for i, sl := range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queues[i] {
				if runCtx.Err() != nil {
					continue
				}
				rec, err := run(runCtx, j, sl)
				if err != nil {
					if runCtx.Err() != nil && !errors.Is(err, context.Cause(runCtx)) {
						continue // stopped because another image failed or ctx ended
					}
					fail(err)
					continue
				}
				mu.Lock()
				records[j.key] = rec
				mu.Unlock()
			}
		}()
	}
	var feeders sync.WaitGroup
	for qi, q := range plan {
		ch := shared
		if replicate {
			ch = queues[qi]
		}
		feeders.Add(1)
		go func() {
			defer feeders.Done()
			defer close(ch)
			for _, j := range q {
				select {
				case ch <- j:
				case <-runCtx.Done():
					return
				}
			}
		}()
	}
	feeders.Wait()
	wg.Wait()
	return records, firstErr
}

// writeHostTimings times the built images' schemes on the host CPU into
// dir/HostTimingsFile. It uses circl and Go crypto, the profile's counts,
// each image once (also when replicated), and returns the number of
// series.
func writeHostTimings(ctx context.Context, dir string, s Spec, profile string, prof ProfileSpec, built []picoboard.Image, now func() time.Time, logf func(string, ...any)) (int, error) {
	var schemes []string
	for _, img := range built {
		// The host times each scheme once: [build]'s images name them all.
		if !strings.Contains(img.Name, configSep) {
			schemes = append(schemes, img.Schemes...)
		}
	}
	logf("timing %s on the host CPU (circl and Go crypto, the profile's counts)", strings.Join(schemes, ", "))
	t0 := now()
	hs, err := picoboard.HostTimings(ctx, picoboard.HostConfig{Profile: prof.Firmware(profile), Schemes: schemes, Seed: s.Seed, MsgBytes: s.Build.MessageBytes})
	if err != nil {
		return 0, fmt.Errorf("host timings: %w", err)
	}
	b, err := picodata.EncodeHostTimings(hs)
	if err != nil {
		return 0, fmt.Errorf("encode host timings: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, picodata.HostTimingsFile), b, 0o644); err != nil {
		return 0, fmt.Errorf("write %s: %w", picodata.HostTimingsFile, err)
	}
	logf("host timings: %d scheme/operation/library series in %v", len(hs), now().Sub(t0).Round(100*time.Millisecond))
	return len(hs), nil
}

// measuredMeta is meta.json's measured. It holds the run's wall time,
// workers, host timing series, whether it was emulated or replicated, the
// boards (boardIDs.record) and per image its times, counts, clock,
// provenance and board (and the emulator's figures).
func measuredMeta(p runPlan, wall time.Duration, hostRows int, boards map[string]any, records map[string]ImageRecord) map[string]any {
	images := map[string]any{}
	measured := map[string]any{"wall_seconds": wall.Seconds(), "workers": p.workers, "host_timing_series": hostRows,
		"emulated": p.board.Kind == BoardEmulator, "images": images, "replicate": p.replicate, "boards": boards}
	for name, rec := range records {
		m := map[string]any{"wall_seconds": rec.WallSeconds, "build_seconds": rec.BuildSeconds,
			"measurements": rec.Measurements, "clock_hz": rec.Header.ClockHz, "provenance": rec.Provenance, "board": rec.Board,
			"configuration": rec.Config, "runtime": rec.Runtime, "clock_mhz": rec.ClockMHz, "message_bytes": rec.MessageBytes}
		if rec.USBIRQMicros != 0 {
			m["usb_irq_us"] = rec.USBIRQMicros
		}
		if e := rec.Emulator; e != nil {
			m["simulated_mhz"] = e.SimMHz
			m["simulated_seconds"] = e.SimSeconds
			m["cycles"] = e.Cycles
		}
		images[name] = m
	}
	return measured
}

// runNotes are meta.json's notes.
func runNotes(emulated bool, clocks string) []string {
	notes := []string{
		"Times are from the RP2040's 1 MHz TIMER and clk_sys cycles from SysTick, at the firmware's " + clocks + " (12 MHz crystal, PLL set by the build; image.json's clock_mhz).",
		"Peak stack is measured by painting the stack before each operation and finding the lowest overwritten word.",
	}
	if emulated {
		notes = append(notes, "EMULATED: rp2040js executes the same RAM-only image cycle by cycle but models no bus contention, wait states or flash cache; label every result as emulated.")
	}
	return notes
}

// buildImages builds the images with the spec's seed and flags and the
// profile's counts, one folder per firmware configuration under
// .cache/pico/study (cached by firmware ID).
func buildImages(ctx context.Context, root string, s Spec, profile string, prof ProfileSpec, imgs []picoboard.BuildConfig, log io.Writer) ([]picoboard.Image, error) {
	built := make([]picoboard.Image, len(imgs))
	for i, c := range imgs {
		c.Root = root
		c.Profile = prof.Firmware(profile)
		c.Seed = s.Seed
		c.CFlags = slices.Clone(s.Build.CFlags)
		// One folder per firmware configuration: a run with other counts (a
		// test's) never overwrites the images this one is about to run.
		c.OutDir = filepath.Join(root, ".cache", "pico", "study", buildKey(c))
		c.Log = log
		img, err := picoboard.Build(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("build image %s: %w", c.Name, err)
		}
		fmt.Fprintf(log, "pico: built %s (firmware %s, %.1f s)\n", img.Name, img.FirmwareID, img.BuildTime.Seconds())
		built[i] = img
	}
	return built, nil
}

// imageEnv is what runImage needs besides the image.
type imageEnv struct {
	root, dir, modules string
	board              BoardSpec
	slot               Slot
	ids                *boardIDs
	idle, timeout      time.Duration
	log                io.Writer
	tamper             func(string, *picodata.Dataset)
	now                func() time.Time
	mounts             string
	bootselWait        time.Duration
}

// runImage runs one image and writes its files into env.dir.
func runImage(ctx context.Context, img picoboard.Image, env imageEnv) (ImageRecord, error) {
	start := env.now()
	if err := os.MkdirAll(env.dir, 0o755); err != nil {
		return ImageRecord{}, fmt.Errorf("create %s: %w", env.dir, err)
	}
	rawPath := filepath.Join(env.dir, picodata.SerialLogFile)
	var ds *picodata.Dataset
	var emu *EmulatorRecord
	if env.board.Kind == BoardEmulator {
		raw, err := os.Create(rawPath)
		if err != nil {
			return ImageRecord{}, fmt.Errorf("create serial log: %w", err)
		}
		run, err := picoboard.Emulate(ctx, img, picoboard.RunConfig{Root: env.root, Modules: env.modules,
			Timeout: env.timeout, IdleTimeout: env.idle, RawLog: raw, Log: env.log})
		if cerr := raw.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write serial log: %w", cerr)
		}
		if err != nil {
			return ImageRecord{}, err
		}
		ds = run.Dataset
		e := run.Emulator
		if hz := img.PLL.Hz(); hz != 0 && e.ClkSys != float64(hz) {
			return ImageRecord{}, fmt.Errorf("%w: rp2040js ran clk_sys at %v Hz, not the %d Hz the build's PLL setting makes", ErrCheck, e.ClkSys, hz)
		}
		emu = &EmulatorRecord{Reason: e.Reason, Cycles: e.Cycles, SimSeconds: e.SimSeconds,
			WallSeconds: e.WallSeconds, SimMHz: e.SimMHz, ClkSys: e.ClkSys, Warnings: e.Warnings}
	} else {
		var err error
		if ds, err = readBoard(ctx, img, env, rawPath); err != nil {
			return ImageRecord{}, err
		}
	}
	if env.tamper != nil {
		env.tamper(img.Name, ds)
	}
	if err := CheckDataset(img, ds); err != nil {
		return ImageRecord{}, err
	}
	boardID, err := env.ids.identify(env.slot, ds.Header.UID)
	if err != nil {
		return ImageRecord{}, err
	}
	checks, verr := picoboard.VerifyVectors(ds)
	if b, err := json.MarshalIndent(checks, "", "  "); err == nil {
		if err := os.WriteFile(filepath.Join(env.dir, picodata.VerifyFile), append(b, '\n'), 0o644); err != nil {
			return ImageRecord{}, fmt.Errorf("write %s: %w", picodata.VerifyFile, err)
		}
	}
	if err := checkVerification(checks, verr); err != nil {
		return ImageRecord{}, err
	}
	csvgz, err := picodata.EncodeMeasurements(ds.Measurements)
	if err != nil {
		return ImageRecord{}, fmt.Errorf("encode measurements: %w", err)
	}
	if err := os.WriteFile(filepath.Join(env.dir, picodata.MeasurementsFile), csvgz, 0o644); err != nil {
		return ImageRecord{}, fmt.Errorf("write %s: %w", picodata.MeasurementsFile, err)
	}
	size, err := picoboard.SizeReportFile(img.ELF)
	if err != nil {
		return ImageRecord{}, fmt.Errorf("size report: %w", err)
	}
	if err := writeJSON(filepath.Join(env.dir, picodata.SizeFile), size); err != nil {
		return ImageRecord{}, err
	}
	elfSum, err := repro.HashFile(img.ELF)
	if err != nil {
		return ImageRecord{}, err
	}
	uf2Sum, err := repro.HashFile(img.UF2)
	if err != nil {
		return ImageRecord{}, err
	}
	_, config, _ := strings.Cut(img.Name, configSep)
	rec := ImageRecord{Name: img.Name, Factors: Factors{Config: config, Runtime: img.Runtime, ClockMHz: img.ClockMHz, MessageBytes: img.MsgBytes,
		CodeIn: img.CodeIn, USBIRQMicros: img.USBIRQ}, Schemes: img.Schemes, Profile: img.Profile, FirmwareID: img.FirmwareID,
		Compiler: img.Compiler, CFlags: img.CFlags, Defines: img.Defines, Sources: img.Sources,
		ELFSHA256: elfSum, UF2SHA256: uf2Sum, Header: ds.Header, Measurements: len(ds.Measurements),
		Checks: len(checks), Skipped: ds.Skipped, EndMicros: ds.EndMicros, Board: boardID, Emulated: ds.Emulated,
		Emulator: emu, Provenance: img.Provenance(), BuildSeconds: img.BuildTime.Seconds(), WallSeconds: env.now().Sub(start).Seconds()}
	if err := writeJSON(filepath.Join(env.dir, picodata.ImageFile), rec); err != nil {
		return ImageRecord{}, err
	}
	return rec, nil
}

// readBoard flashes the image when configured and reads one whole run from
// the board's serial port. Flashing copies it to the board's BOOTSEL drive,
// waiting for the drive to appear. The firmware repeats its run, so the
// reader may start after the board did: it waits for the next start line.
func readBoard(ctx context.Context, img picoboard.Image, env imageEnv, rawPath string) (*picodata.Dataset, error) {
	if env.slot.Bootsel != "" {
		drive := env.slot.Bootsel
		if drive == "auto" {
			drive = ""
		}
		if err := flashWhenReady(ctx, img, drive, env); err != nil {
			return nil, err
		}
	}
	return picoboard.Read(ctx, env.slot.Port, picoboard.ReadConfig{Baud: env.board.Baud, IdleTimeout: env.idle, RawLogPath: rawPath})
}

// flashWhenReady retries picoboard.Flash while no BOOTSEL drive is mounted, for
// up to env.bootselWait, saying once what to do.
func flashWhenReady(ctx context.Context, img picoboard.Image, drive string, env imageEnv) error {
	deadline := time.Now().Add(env.bootselWait)
	told := false
	for {
		dst, err := picoboard.Flash(img.UF2, picoboard.FlashConfig{Drive: drive, MountsFile: env.mounts})
		if err == nil {
			fmt.Fprintf(env.log, "pico: %s: copied %s to %s; the board runs it from SRAM now\n", img.Name, filepath.Base(img.UF2), filepath.Dir(dst))
			return nil
		}
		if !errors.Is(err, picoboard.ErrNoBootselDrive) || time.Now().After(deadline) {
			return fmt.Errorf("flash %s: %w", img.Name, err)
		}
		if !told {
			fmt.Fprintf(env.log, "pico: %s: waiting up to %v for the RPI-RP2 drive: hold BOOTSEL while plugging the board in\n", img.Name, env.bootselWait)
			told = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// CheckDataset fails when a run is not whole and clean. That is an incomplete
// read, a problem on the line, a fault, a device check that failed (an
// "err" line or ok=0), a firmware that is not the image built, or a scheme
// of the image without measurements. The error names the scheme and check.
func CheckDataset(img picoboard.Image, ds *picodata.Dataset) error {
	if ds == nil {
		return fmt.Errorf("%w: no data", ErrCheck)
	}
	if ds.Fault != nil {
		return fmt.Errorf("%w: the firmware faulted (exception %d at pc=0x%08x, lr=0x%08x)", ErrCheck, ds.Fault.Exception, ds.Fault.PC, ds.Fault.LR)
	}
	for _, f := range ds.Failures {
		return fmt.Errorf("%w: device check failed: %s %s iteration %d: %s", ErrCheck, f.Scheme, f.Op, f.Iter, f.Msg)
	}
	for _, m := range ds.Measurements {
		if !m.OK {
			return fmt.Errorf("%w: device check failed: %s %s iteration %d reported ok=0", ErrCheck, m.Scheme, m.Op, m.Iter)
		}
	}
	if !ds.Complete || len(ds.Problems) > 0 {
		var ps []string
		for _, p := range ds.Problems {
			ps = append(ps, p.String())
		}
		return fmt.Errorf("%w: incomplete serial run (%s)", ErrCheck, strings.Join(ps, "; "))
	}
	if img.FirmwareID != "" && ds.Header.FirmwareID != img.FirmwareID {
		return fmt.Errorf("%w: the board ran firmware %s, not the image built (%s): flash it again", ErrCheck, ds.Header.FirmwareID, img.FirmwareID)
	}
	if err := checkClock(img, ds); err != nil {
		return err
	}
	for _, s := range img.Schemes {
		if !slices.ContainsFunc(ds.Measurements, func(m picodata.Measurement) bool { return m.Scheme == s }) {
			return fmt.Errorf("%w: scheme %s has no measurements", ErrCheck, s)
		}
	}
	return nil
}

// checkClock fails unless the firmware reports the clock its build's PLL
// setting makes and, emulated, every time is the operation's cycles at
// that clock. rp2040js advances the TIMER by cycles / clk_sys, so the
// microseconds may differ from cycles / clock only by the TIMER's 1 us
// steps and the few cycles between the two counters' reads (2 us), in
// flash by those reads' cache misses, with the USB interrupt by one tick,
// and by the emulator clock's float drift (picoboard.Image.TimeSlackFor).
func checkClock(img picoboard.Image, ds *picodata.Dataset) error {
	hz := img.PLL.Hz()
	if hz == 0 {
		return nil
	}
	if ds.Header.ClockHz != uint32(hz) {
		return fmt.Errorf("%w: the firmware reports clk_sys %d Hz, not the build's %d Hz", ErrCheck, ds.Header.ClockHz, hz)
	}
	if !ds.Emulated {
		return nil
	}
	for _, m := range ds.Measurements {
		if us := float64(m.Cycles) * 1e6 / float64(hz); math.Abs(us-float64(m.Micros)) > img.TimeSlackFor(us) {
			return fmt.Errorf("%w: %s %s iteration %d: %d us for %d cycles, not cycles / %d Hz (%.1f us)", ErrCheck, m.Scheme, m.Op, m.Iter, m.Micros, m.Cycles, hz, us)
		}
	}
	return nil
}

// checkVerification turns VerifyVectors' result into an error naming every
// failed check.
func checkVerification(checks []picodata.Check, verr error) error {
	var bad []string
	for _, c := range checks {
		if !c.OK {
			s := fmt.Sprintf("%s %s (%s)", c.Scheme, c.Name, c.Lib)
			if c.Detail != "" {
				s += ": " + c.Detail
			}
			bad = append(bad, s)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: host verification failed: %s", ErrCheck, strings.Join(bad, "; "))
	}
	if verr != nil {
		return fmt.Errorf("%w: host verification: %v", ErrCheck, verr)
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

func packageVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var p struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.Version == "" {
		return "", fmt.Errorf("%s has no version", path)
	}
	return p.Version, nil
}

// hashTree returns the SHA-256 of every file below dir, by slash path.
func hashTree(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		sum, err := repro.HashFile(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = sum
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hash run files: %w", err)
	}
	return out, nil
}

// buildKey names a firmware configuration: profile name, counts, seed,
// flags and (when not the default) run-time library, code placement,
// clock and message length, hashed.
func buildKey(c picoboard.BuildConfig) string {
	key := fmt.Sprintf("%+v|%d|%q", c.Profile, c.Seed, c.CFlags)
	if c.Runtime != "" && c.Runtime != picoboard.DefaultRuntime {
		key += "|runtime=" + c.Runtime
	}
	if c.CodeIn != "" && c.CodeIn != picoboard.DefaultCodeIn {
		key += "|code_in=" + c.CodeIn
	}
	if c.ClockMHz != 0 && c.ClockMHz != picoboard.DefaultClockMHz {
		key += fmt.Sprintf("|clock=%v", c.ClockMHz)
	}
	if c.MsgBytes != 0 && c.MsgBytes != picoboard.DefaultMessageBytes {
		key += fmt.Sprintf("|msg=%d", c.MsgBytes)
	}
	if c.USBIRQMicros != 0 {
		key += fmt.Sprintf("|usb_irq=%d", c.USBIRQMicros)
	}
	return c.Profile.Name + "-" + repro.HashBytes([]byte(key))[:12]
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// tracker makes the progress lines. It writes one per image started and
// finished, with the elapsed time and an ETA from the estimates, rescaled
// by how long the finished images took against their estimates.
type tracker struct {
	mu       sync.Mutex
	now      func() time.Time
	start    time.Time
	est      map[string]time.Duration
	started  map[string]time.Time
	done     map[string]bool
	workers  int
	total    int
	finished int
	actual   time.Duration
	planned  time.Duration
	scale    float64
	machine  func() string // the machine's latest figures (runlife.Life.MachineLine); nil prints none
}

// machineLine is "; " and the machine's figures, or "" without them.
func (t *tracker) machineLine() string {
	if t.machine == nil {
		return ""
	}
	return "; " + t.machine()
}

func (t *tracker) begin(name string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started[name] = t.now()
	return fmt.Sprintf("[%d/%d] %s started (elapsed %v, ETA %v)%s", len(t.started), t.total, name,
		t.now().Sub(t.start).Round(time.Second), t.eta().Round(time.Second), t.machineLine())
}

func (t *tracker) finish(name, detail string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	took := t.now().Sub(t.started[name])
	t.done[name] = true
	t.finished++
	t.actual += took
	t.planned += t.est[name]
	if t.planned > 0 {
		t.scale = float64(t.actual) / float64(t.planned)
	}
	return fmt.Sprintf("[%d/%d] %s finished in %v: %s (elapsed %v, ETA %v)%s", t.finished, t.total, name,
		took.Round(100*time.Millisecond), detail, t.now().Sub(t.start).Round(time.Second), t.eta().Round(time.Second), t.machineLine())
}

func (t *tracker) eta() time.Duration {
	var rem []time.Duration
	for name, e := range t.est {
		if t.done[name] {
			continue
		}
		d := time.Duration(float64(e) * t.scale)
		if s, ok := t.started[name]; ok {
			d -= t.now().Sub(s)
			if d < 0 {
				d = 0
			}
		}
		rem = append(rem, d)
	}
	if len(rem) == 0 {
		return 0
	}
	return makespan(rem, t.workers)
}
