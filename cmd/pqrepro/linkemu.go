package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/internal/interrupt"
)

func init() {
	register("linkemu", "run, self-test or clean up the emulated link (Study B)", runLinkemu)
}

const linkemuUsage = `usage:
  pqrepro linkemu [flags]            run a link until Ctrl-C, printing counters
  pqrepro linkemu selftest [flags]   measure a link's RTT and loss, print the JSON report
  pqrepro linkemu clean [flags]      remove namespaces left by dead processes

Delay, jitter, loss, rate and queue apply to both directions; the -ba-*
flags override the b->a direction. Rates: "unlimited" or a number with
unit bit, kbit, mbit or gbit (powers of 1000, as tc uses them).
`

func runLinkemu(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "selftest":
			return linkemuSelfTest(args[1:], stdout, stderr)
		case "clean":
			return linkemuClean(args[1:], stdout, stderr)
		}
	}
	return linkemuRun(args, stdout, stderr)
}

// linkFlags are the flags shared by run and selftest.
type linkFlags struct {
	fs        *flag.FlagSet
	name      string
	dir       [2]dirFlags
	seed      uint64
	mtu       int
	netnsDir  string
	prefix    string
	anonymous bool
	probes    int
	tolerance time.Duration
}

type dirFlags struct {
	delay, jitter time.Duration
	loss          float64
	rate          string
	queue         int
}

func newLinkFlags(cmd string, stderr io.Writer) *linkFlags {
	f := &linkFlags{fs: flag.NewFlagSet("pqrepro linkemu "+cmd, flag.ContinueOnError)}
	fs := f.fs
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, linkemuUsage)
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&f.name, "name", "cli", "scenario name (reports only)")
	d := &f.dir[0]
	fs.DurationVar(&d.delay, "delay", 25*time.Millisecond, "one-way delay")
	fs.DurationVar(&d.jitter, "jitter", 0, "uniform jitter ± around the delay (no reordering)")
	fs.Float64Var(&d.loss, "loss", 0, "random loss in percent (0..100)")
	fs.StringVar(&d.rate, "rate", "unlimited", "rate limit")
	fs.IntVar(&d.queue, "queue", 64000, "drop-tail queue limit in bytes (with a rate limit)")
	b := &f.dir[1]
	*b = dirFlags{delay: -1, jitter: -1, loss: -1, queue: -1}
	fs.DurationVar(&b.delay, "ba-delay", -1, "b->a delay (default: -delay)")
	fs.DurationVar(&b.jitter, "ba-jitter", -1, "b->a jitter (default: -jitter)")
	fs.Float64Var(&b.loss, "ba-loss", -1, "b->a loss in percent (default: -loss)")
	fs.StringVar(&b.rate, "ba-rate", "", "b->a rate (default: -rate)")
	fs.IntVar(&b.queue, "ba-queue", -1, "b->a queue bytes (default: -queue)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the loss and jitter generators")
	fs.IntVar(&f.mtu, "mtu", linkemu.DefaultMTU, "MTU of both TUN devices")
	fs.StringVar(&f.netnsDir, "netns-dir", linkemu.DefaultNetnsDir, "directory of named network namespaces")
	fs.StringVar(&f.prefix, "prefix", linkemu.DefaultPrefix, "namespace name prefix")
	fs.BoolVar(&f.anonymous, "anonymous", false, "unnamed namespaces (no bind mounts; for user namespaces without a writable -netns-dir)")
	fs.IntVar(&f.probes, "probes", 200, "self-test probes")
	fs.DurationVar(&f.tolerance, "tolerance", linkemu.DefaultTolerance, "self-test tolerance on the median RTT")
	return f
}

// parse reads the flags into a validated scenario; its errors are usage
// errors (exit status 2) and nothing has been created yet.
func (f *linkFlags) parse(args []string) (linkemu.Scenario, linkemu.Options, error) {
	if err := f.fs.Parse(args); err != nil {
		return linkemu.Scenario{}, linkemu.Options{}, err
	}
	if f.fs.NArg() > 0 {
		return linkemu.Scenario{}, linkemu.Options{}, fmt.Errorf("unexpected arguments %q", f.fs.Args())
	}
	a, b := f.dir[0], f.dir[1]
	if b.delay == -1 {
		b.delay = a.delay
	}
	if b.jitter == -1 {
		b.jitter = a.jitter
	}
	if b.loss == -1 {
		b.loss = a.loss
	}
	if b.rate == "" {
		b.rate = a.rate
	}
	if b.queue == -1 {
		b.queue = a.queue
	}
	sc := linkemu.Scenario{Name: f.name, Seed: f.seed, MTU: f.mtu}
	for i, d := range []dirFlags{a, b} {
		rate, err := linkemu.ParseRate(d.rate)
		if err != nil {
			return sc, linkemu.Options{}, err
		}
		dir := linkemu.Direction{Delay: d.delay, Jitter: d.jitter, Loss: d.loss, Rate: rate, Queue: d.queue}
		if i == 0 {
			sc.AtoB = dir
		} else {
			sc.BtoA = dir
		}
	}
	if err := sc.Validate(); err != nil {
		return sc, linkemu.Options{}, err
	}
	return sc, linkemu.Options{Prefix: f.prefix, NetnsDir: f.netnsDir, Anonymous: f.anonymous}, nil
}

func signalContext() (context.Context, context.CancelFunc) {
	return interrupt.Context(context.Background())
}

func linkemuRun(args []string, stdout, stderr io.Writer) int {
	f := newLinkFlags("run", stderr)
	every := f.fs.Duration("every", 5*time.Second, "print counters this often")
	selftest := f.fs.Bool("selftest", true, "self-test the link before announcing it; refuse to run when it fails")
	sc, opts, err := f.parse(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "pqrepro linkemu: %v\n", err)
		return 2
	}
	if *every <= 0 {
		fmt.Fprintln(stderr, "pqrepro linkemu: -every must be positive")
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	var l *linkemu.Link
	if *selftest {
		var rep linkemu.SelfTestReport
		l, rep, err = linkemu.StartVerified(ctx, sc, opts, linkemu.SelfTestConfig{Probes: f.probes, Tolerance: f.tolerance})
		if err == nil {
			fmt.Fprintf(stdout, "self-test: rtt p50 %.3f ms p99 %.3f ms (expected %.3f ms), loss %.2f %%\n",
				rep.P50Ms, rep.P99Ms, rep.ExpectedRTTms, 100*rep.Loss)
		}
	} else {
		l, err = linkemu.StartWith(ctx, sc, opts)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro linkemu: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "link %s\n", sc)
	for _, s := range []linkemu.Side{linkemu.A, linkemu.B} {
		e := l.Endpoint(s)
		fmt.Fprintf(stdout, "  %s: netns %s iface %s addr %s\n", s, e.Namespace, e.Iface, e.Addr)
	}
	fmt.Fprintln(stdout, "running; Ctrl-C stops and removes the namespaces")
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			printStats(stdout, l.Stats())
		case <-l.Done():
			printStats(stdout, l.Stats())
			if err := l.Err(); err != nil && ctx.Err() == nil {
				fmt.Fprintf(stderr, "pqrepro linkemu: %v\n", err)
				return 1
			}
			fmt.Fprintln(stdout, "stopped; namespaces removed")
			return 0
		}
	}
}

func printStats(w io.Writer, s linkemu.Stats) {
	for _, d := range []struct {
		name string
		s    linkemu.DirStats
	}{{"a->b", s.AtoB}, {"b->a", s.BtoA}} {
		fmt.Fprintf(w, "%s rx %d pkt %d B, tx %d pkt %d B, drop loss %d queue %d overflow %d, late p50 %v p99 %v max %v\n",
			d.name, d.s.RxPackets, d.s.RxBytes, d.s.TxPackets, d.s.TxBytes, d.s.DropLoss, d.s.DropQueue, d.s.DropOverflow,
			d.s.LateP50, d.s.LateP99, d.s.LateMax)
	}
}

func linkemuSelfTest(args []string, stdout, stderr io.Writer) int {
	f := newLinkFlags("selftest", stderr)
	sc, opts, err := f.parse(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "pqrepro linkemu selftest: %v\n", err)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	fmt.Fprintf(stderr, "self-testing %s with %d probes\n", sc, f.probes)
	l, rep, err := linkemu.StartVerified(ctx, sc, opts, linkemu.SelfTestConfig{Probes: f.probes, Tolerance: f.tolerance})
	if l != nil {
		err = errors.Join(err, l.Close())
	}
	var acc *linkemu.AccuracyError
	if err != nil && !errors.As(err, &acc) {
		fmt.Fprintf(stderr, "pqrepro linkemu selftest: %v\n", err)
		return 1
	}
	out, jerr := json.MarshalIndent(rep, "", "  ")
	if jerr != nil {
		fmt.Fprintf(stderr, "pqrepro linkemu selftest: %v\n", jerr)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", out)
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro linkemu selftest: %v\n", err)
		return 1
	}
	return 0
}

func linkemuClean(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pqrepro linkemu clean", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("netns-dir", linkemu.DefaultNetnsDir, "directory of named network namespaces")
	prefix := fs.String("prefix", linkemu.DefaultPrefix, "namespace name prefix")
	force := fs.Bool("force", false, "also remove namespaces of running processes")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pqrepro linkemu clean: unexpected arguments %q\n", fs.Args())
		return 2
	}
	rep, err := linkemu.Clean(*dir, *prefix, *force)
	for _, n := range rep.Removed {
		fmt.Fprintf(stdout, "removed %s\n", n)
	}
	for _, n := range rep.InUse {
		fmt.Fprintf(stdout, "kept %s (its process is running; -force removes it)\n", n)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro linkemu clean: %v\n", err)
		return 1
	}
	if len(rep.Removed)+len(rep.InUse) == 0 {
		fmt.Fprintln(stdout, "nothing to clean")
	}
	return 0
}
