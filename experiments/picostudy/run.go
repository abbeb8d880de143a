package picostudy

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/experiments/pico"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

// RunConfig says which profile to run and where.
type RunConfig struct {
	// Root is the repository root; "" finds it from the working directory.
	Root string
	// Git is the state of the repository the run was started from
	// (provenance.RepoGit at the repository root, taken by the pipeline
	// when the run starts); nil means the state of Root.
	Git *provenance.Git
	// Profile names a [profiles.*] table of the spec ("quick" or "full").
	Profile string
	// SpecPath is the spec; "" means <Root>/experiments/pico.toml. The run
	// is pinned in this file.
	SpecPath string
	// DataDir holds the runs (<DataDir>/pico/<run-id>/); "" means
	// <Root>/data.
	DataDir string
	// Images, when set, replaces the profile's image list (tests).
	Images []string
	// Workers, when positive, replaces the spec's worker count.
	Workers int
	// Now is the clock (run ID, start and end, progress); nil is time.Now.
	Now func() time.Time
	// Log receives the plan and one line per image started and finished;
	// nil discards.
	Log io.Writer

	// tamper, in tests, changes a dataset after it is read and before it
	// is checked, to prove that a failed check fails the run.
	tamper func(image string, ds *picodata.Dataset)
	// mountsFile replaces /proc/self/mounts when looking for the BOOTSEL
	// drive; bootselWait how long to wait for it (0: DefaultBootselWait);
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
	Name         string            `json:"name"`
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
	// Board is the ID of the board that ran the image: the unique ID the
	// firmware reported (Header.UID), else the USB serial number of the
	// board's serial port, else pico-<n> (the n-th board of the spec); an
	// emulator instance is rp2040js-<n>. Runs made before boards were
	// recorded lack it: they ran on one board (analysis/pico).
	Board    string          `json:"board,omitempty"`
	Emulated bool            `json:"emulated"`
	Emulator *EmulatorRecord `json:"emulator,omitempty"`
	// Provenance is pico.Image.Provenance: firmware ID, output hashes,
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

// Run runs the profile's firmware images and records a raw dataset:
//
//  1. load the spec strictly, start a run folder with repro.NewRun;
//  2. build every image (cached by firmware ID);
//  3. run the images on the boards (Spec.Board.Slots: Workers emulator
//     instances, or the real boards, one image at a time each), longest
//     first; spread (each image once, on the next free board) or, with
//     replicate, every image on every board into <image>@<board number>;
//     write per image the serial log verbatim, measurements.csv.gz,
//     verify.json (host checks with circl and Go's crypto), size.json and
//     image.json, which names the board (ImageRecord.Board);
//  4. write meta.json, commit the run, and pin it in the spec for the
//     profile.
//
// An incomplete read, a device check that failed ("err" line), a fault or
// a host verification that failed fails the run with the image, scheme and
// check named, as do a board that disappears, a BOOTSEL drive that does
// not appear or cannot be written, and two boards reporting one ID
// (ErrSameBoard); the run folder is then removed (never registered), as it
// is when ctx is cancelled.
func Run(ctx context.Context, cfg RunConfig) (err error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	logf := func(format string, args ...any) { fmt.Fprintf(log, "pico: "+format+"\n", args...) }

	root, err := pico.FindRoot(cfg.Root)
	if err != nil {
		return err
	}
	specPath := cfg.SpecPath
	if specPath == "" {
		specPath = filepath.Join(root, spec.Path(Study))
	}
	s, err := LoadSpec(specPath)
	if err != nil {
		return err
	}
	prof, err := s.Profile(cfg.Profile)
	if err != nil {
		return err
	}
	specSHA, err := repro.HashFile(specPath)
	if err != nil {
		return fmt.Errorf("hash spec: %w", err)
	}
	names := prof.Images
	if len(cfg.Images) > 0 {
		names = cfg.Images
	}
	all := pico.StandardImages()
	for _, n := range names {
		if !slices.ContainsFunc(all, func(c pico.BuildConfig) bool { return c.Name == n }) {
			return fmt.Errorf("unknown image %q (standard images: %s)", n, strings.Join(imageNames(all), ", "))
		}
	}
	imgs := selectImages(all, names)
	workers := s.Workers
	if cfg.Workers > 0 {
		workers = cfg.Workers
	}
	board := s.Board
	slots := board.Slots(workers)
	if board.Kind == BoardSerial {
		workers = len(slots) // one image at a time per board
		for _, sl := range slots {
			// Spread, a free board takes any image: each one needs a way
			// to load it unless only one image runs.
			if sl.Bootsel == "" && len(imgs) > 1 {
				return fmt.Errorf(`board %d (%s) has no bootsel and runs only the image it already has; set its bootsel (the RPI-RP2 mount point, or "auto" with one board) or run one image (%d selected)`, sl.N, sl.Port, len(imgs))
			}
		}
	}
	idle, _ := parsePositive(board.IdleTimeout)
	timeout, _ := parsePositive(prof.ImageTimeout)
	dataDir := cfg.DataDir
	if dataDir == "" {
		dataDir = filepath.Join(root, "data")
	}
	// Replicating on one board is spreading: plain <image> folders.
	replicate := board.Replicate && len(slots) > 1
	// Order longest first, so the boards finish close together.
	est := map[string]time.Duration{}
	for _, c := range imgs {
		est[c.Name] = imageEstimate(c, prof)
	}
	slices.SortStableFunc(imgs, func(a, b pico.BuildConfig) int { return int(est[b.Name] - est[a.Name]) })
	planImgs := imgs
	if replicate {
		planImgs = nil
		for range slots {
			planImgs = append(planImgs, imgs...)
		}
	}
	sched := "spread over"
	if replicate {
		sched = "each on every one of"
	}
	logf("plan: profile %s, %d images (%s) on %s, %s %d board(s) (%s), about %v",
		cfg.Profile, len(imgs), strings.Join(imageNames(imgs), ", "), board.Kind, sched, len(slots),
		strings.Join(slotNames(slots), ", "), estimateFor(planImgs, prof, workers).Round(time.Second))
	start := now()
	r, err := repro.NewRun(dataDir, Study, cfg.Profile, start)
	if err != nil {
		return err
	}
	defer r.Abort() // no-op after Commit
	defer func() {
		if err != nil {
			logf("run %s failed, nothing recorded: %v", r.ID, firstLine(err))
		}
	}()

	// Tools and the board label first: a missing emulator fails early.
	tools := map[string]string{}
	var boardLabel, modules string
	if board.Kind == BoardEmulator {
		if modules, err = pico.EnsureEmulator(ctx, root, log); err != nil {
			return err
		}
		ver, err := packageVersion(filepath.Join(modules, "rp2040js", "package.json"))
		if err != nil {
			return fmt.Errorf("rp2040js version: %w (delete .cache/pico/npm-emu and retry)", err)
		}
		tools["rp2040js"] = ver
		boardLabel = "rp2040js " + ver + " (emulated)"
	} else {
		var ports []string
		for _, sl := range slots {
			ports = append(ports, strings.TrimPrefix(sl.Port, "/dev/"))
		}
		boardLabel = "Raspberry Pi Pico (RP2040) on " + strings.Join(ports, ", ")
		if len(slots) > 1 {
			boardLabel = fmt.Sprintf("%d Raspberry Pi Picos (RP2040) on %s", len(slots), strings.Join(ports, ", "))
		}
	}
	ids := newBoardIDs(slots, cfg.sysRoot)
	if err := ids.preflight(); err != nil {
		return err
	}

	// Build every image before running any: a compile error stops the run
	// before minutes of emulation.
	built, err := buildImages(ctx, root, s, cfg.Profile, prof, imgs, log)
	if err != nil {
		return err
	}

	// The jobs: every image once (spread: any free board takes the next),
	// or every image on every board (replicate: one queue per board, run
	// folders <image>@<board number>).
	type job struct {
		key string // run folder and progress name
		img pico.Image
	}
	jobEst := map[string]time.Duration{}
	queues := make([]chan job, len(slots))
	shared := make(chan job)
	for i := range slots {
		queues[i] = shared
		if replicate {
			queues[i] = make(chan job)
		}
	}
	var plan [][]job // per queue, in order
	if replicate {
		for _, sl := range slots {
			var q []job
			for _, img := range built {
				j := job{key: fmt.Sprintf("%s@%d", img.Name, sl.N), img: img}
				jobEst[j.key] = est[img.Name]
				q = append(q, j)
			}
			plan = append(plan, q)
		}
	} else {
		var q []job
		for _, img := range built {
			q = append(q, job{key: img.Name, img: img})
			jobEst[img.Name] = est[img.Name]
		}
		plan = [][]job{q}
	}
	tr := &tracker{now: now, start: now(), est: jobEst, workers: workers, total: len(jobEst),
		started: map[string]time.Time{}, done: map[string]bool{}, scale: 1}
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
				img := j.img
				if runCtx.Err() != nil {
					continue
				}
				logf("%s on %s", tr.begin(j.key), sl.Name())
				imgIdle := idle
				if prof.RSAKeygen > 0 && slices.Contains(img.Schemes, "rsa-2048") {
					// An RSA-2048 keygen is silent for minutes in rp2040js:
					// only the image's time limit bounds it.
					imgIdle = max(idle, timeout)
				}
				rec, err := runImage(runCtx, img, imageEnv{root: root, dir: filepath.Join(r.Dir, j.key),
					board: board, slot: sl, ids: ids, modules: modules, idle: imgIdle, timeout: timeout, log: log, tamper: cfg.tamper, now: now,
					mounts: cfg.mountsFile, bootselWait: cmp.Or(cfg.bootselWait, DefaultBootselWait)})
				if err != nil {
					if runCtx.Err() != nil && context.Cause(runCtx) != err {
						continue // stopped because another image failed or ctx ended
					}
					fail(fmt.Errorf("image %s on board %d (%s): %w", img.Name, sl.N, sl.describe(), err))
					continue
				}
				mu.Lock()
				records[j.key] = rec
				mu.Unlock()
				detail := fmt.Sprintf("%d measurements, %d host checks passed, board %s", rec.Measurements, rec.Checks, rec.Board)
				if rec.Emulator != nil {
					detail += fmt.Sprintf(", %.1f simulated MHz", rec.Emulator.SimMHz)
				}
				logf("%s", tr.finish(j.key, detail))
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
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("pico run interrupted: %w", err)
	}

	hostRows := 0
	if s.HostTimings {
		var schemes []string
		for _, img := range built { // each image once, also when replicated
			schemes = append(schemes, img.Schemes...)
		}
		logf("timing %s on the host CPU (circl and Go crypto, the profile's counts)", strings.Join(schemes, ", "))
		t0 := now()
		hs, err := pico.HostTimings(ctx, pico.HostConfig{Profile: prof.Firmware(cfg.Profile), Schemes: schemes, Seed: s.Seed})
		if err != nil {
			return fmt.Errorf("host timings: %w", err)
		}
		b, err := picodata.EncodeHostTimings(hs)
		if err != nil {
			return fmt.Errorf("encode host timings: %w", err)
		}
		if err := os.WriteFile(filepath.Join(r.Dir, picodata.HostTimingsFile), b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", picodata.HostTimingsFile, err)
		}
		hostRows = len(hs)
		logf("host timings: %d scheme/operation/library series in %v", len(hs), now().Sub(t0).Round(100*time.Millisecond))
	}

	end := now()
	meta := provenance.Collect(ctx, provenance.Options{Root: root, Git: cfg.Git, Tools: map[string][]string{
		"arm-none-eabi-gcc": {"arm-none-eabi-gcc", "--version"},
		"node":              {"node", "--version"},
		"npm":               {"npm", "--version"},
	}})
	if meta.Tools == nil {
		meta.Tools = map[string]string{}
	}
	for k, v := range tools {
		meta.Tools[k] = v
	}
	meta.Study = Study
	meta.RunID = r.ID
	meta.Spec = specRel(root, specPath)
	meta.SpecSHA = specSHA
	meta.Profile = cfg.Profile
	meta.Seeds = map[string]uint64{"firmware_randombytes": s.Seed}
	meta.Start = start.UTC()
	meta.End = end.UTC()
	meta.Board = boardLabel
	measured := map[string]any{"wall_seconds": end.Sub(start).Seconds(), "workers": workers, "host_timing_series": hostRows,
		"emulated": board.Kind == BoardEmulator, "images": map[string]any{}, "replicate": replicate, "boards": ids.record(slots, records)}
	for name, rec := range records {
		m := map[string]any{"wall_seconds": rec.WallSeconds, "build_seconds": rec.BuildSeconds,
			"measurements": rec.Measurements, "clock_hz": rec.Header.ClockHz, "provenance": rec.Provenance, "board": rec.Board}
		if e := rec.Emulator; e != nil {
			m["simulated_mhz"] = e.SimMHz
			m["simulated_seconds"] = e.SimSeconds
			m["cycles"] = e.Cycles
		}
		measured["images"].(map[string]any)[name] = m
	}
	meta.Measured = measured
	meta.Notes = []string{
		"Times are from the RP2040's 1 MHz TIMER and clk_sys cycles from SysTick, at the firmware's 133 MHz (12 MHz crystal, PLL).",
		"Peak stack is measured by painting the stack before each operation and finding the lowest overwritten word.",
	}
	if board.Kind == BoardEmulator {
		meta.Notes = append(meta.Notes, "EMULATED: rp2040js executes the same RAM-only image cycle by cycle but models no bus contention, wait states or flash cache; label every result as emulated.")
	}
	files, err := hashTree(r.Dir)
	if err != nil {
		return err
	}
	meta.Files = files
	if err := provenance.Write(r.Dir, meta); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil { // the last moment to stop: after this the run is published
		return fmt.Errorf("pico run interrupted: %w", err)
	}
	if err := r.Commit(); err != nil {
		return err
	}
	if err := spec.Pin(specPath, cfg.Profile, spec.Sealed(r.ID, r.Manifest)); err != nil {
		return fmt.Errorf("run %s is recorded in %s but could not be pinned: %w (add %s = %q under [runs] by hand)", r.ID, r.Final, err, cfg.Profile, spec.Sealed(r.ID, r.Manifest))
	}
	logf("run %s recorded (%d images, %v) and pinned for the %s profile in %s", r.ID, len(records),
		end.Sub(start).Round(time.Second), cfg.Profile, meta.Spec)
	return nil
}

// buildImages builds the images with the spec's seed and flags and the
// profile's counts, one folder per firmware configuration under
// .cache/pico/study (cached by firmware ID).
func buildImages(ctx context.Context, root string, s Spec, profile string, prof ProfileSpec, imgs []pico.BuildConfig, log io.Writer) ([]pico.Image, error) {
	built := make([]pico.Image, len(imgs))
	for i, c := range imgs {
		c.Root = root
		c.Profile = prof.Firmware(profile)
		c.Seed = s.Seed
		c.CFlags = slices.Clone(s.Build.CFlags)
		// One folder per firmware configuration: a run with other counts (a
		// test's) never overwrites the images this one is about to run.
		c.OutDir = filepath.Join(root, ".cache", "pico", "study", buildKey(c))
		c.Log = log
		img, err := pico.Build(ctx, c)
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
func runImage(ctx context.Context, img pico.Image, env imageEnv) (ImageRecord, error) {
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
		run, err := pico.Emulate(ctx, img, pico.RunConfig{Root: env.root, Modules: env.modules,
			Timeout: env.timeout, IdleTimeout: env.idle, RawLog: raw, Log: env.log})
		if cerr := raw.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("write serial log: %w", cerr)
		}
		if err != nil {
			return ImageRecord{}, err
		}
		ds = run.Dataset
		e := run.Emulator
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
	checks, verr := pico.VerifyVectors(ds)
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
	size, err := pico.SizeReportFile(img.ELF)
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
	rec := ImageRecord{Name: img.Name, Schemes: img.Schemes, Profile: img.Profile, FirmwareID: img.FirmwareID,
		Compiler: img.Compiler, CFlags: img.CFlags, Defines: img.Defines, Sources: img.Sources,
		ELFSHA256: elfSum, UF2SHA256: uf2Sum, Header: ds.Header, Measurements: len(ds.Measurements),
		Checks: len(checks), Skipped: ds.Skipped, EndMicros: ds.EndMicros, Board: boardID, Emulated: ds.Emulated,
		Emulator: emu, Provenance: img.Provenance(), BuildSeconds: img.BuildTime.Seconds(), WallSeconds: env.now().Sub(start).Seconds()}
	if err := writeJSON(filepath.Join(env.dir, picodata.ImageFile), rec); err != nil {
		return ImageRecord{}, err
	}
	return rec, nil
}

// readBoard copies the image to the board's BOOTSEL drive when configured
// (waiting for the drive to appear) and reads one whole run from the
// board's serial port. The firmware repeats its run, so the reader may
// start after the board did: it waits for the next start line.
func readBoard(ctx context.Context, img pico.Image, env imageEnv, rawPath string) (*picodata.Dataset, error) {
	if env.slot.Bootsel != "" {
		drive := env.slot.Bootsel
		if drive == "auto" {
			drive = ""
		}
		if err := flashWhenReady(ctx, img, drive, env); err != nil {
			return nil, err
		}
	}
	return pico.Read(ctx, env.slot.Port, pico.ReadConfig{Baud: env.board.Baud, IdleTimeout: env.idle, RawLogPath: rawPath})
}

// flashWhenReady retries pico.Flash while no BOOTSEL drive is mounted, for
// up to env.bootselWait, saying once what to do.
func flashWhenReady(ctx context.Context, img pico.Image, drive string, env imageEnv) error {
	deadline := time.Now().Add(env.bootselWait)
	told := false
	for {
		dst, err := pico.Flash(img.UF2, pico.FlashConfig{Drive: drive, MountsFile: env.mounts})
		if err == nil {
			fmt.Fprintf(env.log, "pico: %s: copied %s to %s; the board runs it from SRAM now\n", img.Name, filepath.Base(img.UF2), filepath.Dir(dst))
			return nil
		}
		if !errors.Is(err, pico.ErrNoBootselDrive) || time.Now().After(deadline) {
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

// CheckDataset fails when a run is not whole and clean: an incomplete
// read, a problem on the line, a fault, a device check that failed (an
// "err" line or ok=0), a firmware that is not the image built, or a scheme
// of the image without measurements. The error names the scheme and check.
func CheckDataset(img pico.Image, ds *picodata.Dataset) error {
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
	for _, s := range img.Schemes {
		if !slices.ContainsFunc(ds.Measurements, func(m picodata.Measurement) bool { return m.Scheme == s }) {
			return fmt.Errorf("%w: scheme %s has no measurements", ErrCheck, s)
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

// buildKey names a firmware configuration: profile name, counts, seed and
// flags, hashed.
func buildKey(c pico.BuildConfig) string {
	return c.Profile.Name + "-" + repro.HashBytes([]byte(fmt.Sprintf("%+v|%d|%q", c.Profile, c.Seed, c.CFlags)))[:12]
}

// specRel names the spec in meta.json without a path of this machine.
func specRel(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return filepath.Base(path)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// tracker makes the progress lines: one per image started and finished,
// with the elapsed time and an ETA from the estimates, rescaled by how
// long the finished images took against their estimates.
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
}

func (t *tracker) begin(name string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started[name] = t.now()
	return fmt.Sprintf("[%d/%d] %s started (elapsed %v, ETA %v)", len(t.started), t.total, name,
		t.now().Sub(t.start).Round(time.Second), t.eta().Round(time.Second))
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
	return fmt.Sprintf("[%d/%d] %s finished in %v: %s (elapsed %v, ETA %v)", t.finished, t.total, name,
		took.Round(100*time.Millisecond), detail, t.now().Sub(t.start).Round(time.Second), t.eta().Round(time.Second))
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
