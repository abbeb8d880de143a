// Package netrun runs Study B: TLS 1.3 handshakes over emulated networks.
//
// The handshakes are Go crypto/tls's with X25519 and X25519MLKEM768 over
// links of experiments/instruments/linkemu, captured on the emulated link
// with the same reader as Study A (experiments/instruments/capture), as
// the spec experiments/net.toml says.
//
// # Series
//
// A series is one (scenario, round, group): its warm-up connections, then
// its n recorded handshakes, one after the other, on a link of its own —
// its own pair of namespaces and TUN devices (linkemu.StartVerified, with
// the link self-test before the first handshake), its own forwarder with
// its own loss and jitter streams, its own server in namespace B and its
// own capture on namespace A's TUN device. With order = "interleaved" a
// series is one (scenario, round) whose groups alternate on that link.
// What a series measures is the same whatever else runs: the paper's serial
// measurement, handshake after handshake, on one link.
//
// Each link's seed is SeriesSeed(scenario seed, round, group code point),
// a SplitMix64 hash, so a series sees the same loss and jitter draws for
// the same packet sequence whether it ran alone or next to others, and in
// whatever order the scheduler started it. meta.json lists every derived
// seed (seeds.link-<series>).
//
// # Schedule
//
// Series are independent, so they may run at the same time: the profile's
// parallel_series caps how many do (0 or 1: one at a time, in record
// order, the serial behaviour). A scenario with exclusive = true has its
// series run alone, with nothing else on the machine's cores: the LAN
// scenario, whose 1 ms RTT makes the handshake's CPU time a visible part of
// the latency. The runner starts the exclusive series first, one by one,
// then the others longest first (LPT list scheduling), each as soon as a
// slot is free. A link's self-test holds every other series between two
// handshakes (runner.quiet), so that the achieved RTT is measured on a
// quiet machine, as in a serial run; the pause never falls inside a
// handshake.
//
// Estimate models the same schedule: each series' expected duration
// (3 RTT per connection, PerConnectionOverhead, the expected cost of
// retransmissions under loss, the self-test and PerSeriesOverhead), the
// exclusive series back to back, the rest list-scheduled on
// parallel_series slots. The longest series bounds the wall time: far's
// 10,000 handshakes x 3 RTT x 78.7 ms = 39 min 22 s at the least, about
// 46.6 min expected with 1 % loss; with lan's exclusive 2.8 min first, the
// full profile takes about 49 min instead of 3 h 25 min serially (run
// `go test -run ExampleEstimate -v` for the plan).
//
// # Toolchain
//
// The original measured Go 1.24's crypto/tls. The spec's toolchains (per
// profile) list Go releases whose builds of the endpoint program
// (EndpointDir: a module of its own, go 1.24, standard library only) run
// the handshakes; each toolchain is a series of its own with the same link
// seed as the other toolchains' series of that (scenario, round, group),
// so both see the same loss and jitter draws. BuildEndpoint builds the
// same source with `GOTOOLCHAIN=<release> go build` (the go command fetches
// the release from the module proxy) into .cache/netstudy-endpoint/,
// keyed by release and source hash, and checks the binary's build info.
// The server process is started on a thread in namespace B and the client
// process on one in namespace A (a child inherits the forking thread's
// network namespace); the runner drives them over a CSV line protocol
// (endpoint/main.go), one dial per recorded attempt, so warm-ups, order,
// progress and the quiet lock work as in process. The endpoint reads the
// negotiated group and HelloRetryRequest from the ServerHello on the wire
// (Go 1.24's ConnectionState has neither); a group other than configured
// fails the run like in process. Without toolchains the handshakes run in
// process (experiments/instruments/handshake), as before the factor.
//
// # Outputs
//
// records.csv.gz has one row per recorded attempt in record order —
// scenario, round, group (in the spec's order), seq — whatever order the
// series finished in; index is the attempt's position within its scenario
// in that order (within an interleaved series, in time order). The
// analysis (analysis/netstudy) reads it and measured.design unchanged.
// meta.json's measured.selftest, measured.link_stats and measured.capture
// are keyed by series ID ("far-10000-X25519"), one capture per series is
// kept (captures/<series>.pcapng: gzip'd in the run folder when the run's
// captures are small, else in the content store), and measured.schedule
// says which series ran when (seconds from the first series' start), with
// which others their handshake phases overlapped, how many ran at once, and
// each series' handshake time against its theoretical minimum.
// measured.wall_to_theoretical_ratio is the run's wall time over the serial
// theoretical minimum (below 1 when series overlap);
// wall_to_scheduled_min_ratio is over the schedule's makespan at that
// minimum (at least 1), work_to_theoretical_ratio the sum of the series'
// handshake phases over the serial minimum.
//
// # Measurement hygiene
//
// Two records say how far the machine, not the emulated network, shaped
// the handshakes (hygiene.go; the file formats are in datasets/netdata).
// With late_bound_ms > 0 every link keeps each packet its forwarder wrote
// more than that bound after its due time (linkemu.Options.LateBound) and
// the run writes them all to late.csv.gz: series, direction, ports, due and
// write time, so the analysis can flag the handshakes they touched.
// A profile's serial_control lists series that are run a second time
// after all the others, each alone (Plan.ControlSeries: same seed, ID
// <id>-alone); their rows go to control.csv.gz (and control-inproc.csv.gz),
// never records.csv.gz, and the analysis compares their medians with the
// concurrent runs'. Estimate and the schedule count them; in the full
// profile they add about 8 min.
//
// # Transfer block (our extension)
//
// A profile's transfer_sizes and transfer_round add series whose
// connections, after the handshake, ask for a response of that many bytes
// (Plan.TransferSeries, endpoint/request.go): the time to last byte of
// issue 34, not the original's design. They run after every round's
// series has ended (a barrier in runAll and in the schedule) and before
// the serial controls; their rows go to transfer.csv.gz and
// transfer-inproc.csv.gz, derived by netjoin like records.csv.gz, with the
// time to last byte from the ClientHello and from the SYN, the server's
// flights and stalls (docs/studies.md defines them). Estimate models them
// (transferTime); transfer_parallel caps how many run at once (a
// response crosses the forwarder packet by packet, so concurrent
// transfers compete for the cores); in the full profile, 2 at once, they
// add about 23 min by the model, and took 8.9 min in the pinned full run
// (20261206T173741Z: the model overestimates far's lossy transfers).
//
// Since issue 41 the block's captures are also kept trimmed
// (trimTransfer, capture.Trim: handshakes whole, headers after them) as
// trimmed/<series>.pcapng.pqcol (capture.EncodeCapture: lossless
// columns; runs recorded before it kept trimmed/<series>.pcapng.gz, which
// the records stage still reads), after checking that, read back as
// kept, they give the same transfer.csv.gz, so that the records stage
// re-derives it in a clone whose full captures are in the content store.
// They are committed when their files fit in what the in-repo limit
// (rederive.InRepoLimit) leaves beside the full captures, else they go
// to the content store: a quick run's are 0.40 MB in columns (0.62 MB
// gzip'd); a full run of about 5,760 connections and 2 million packets
// would be about 27 MB in columns (2,330 bytes a connection, mostly
// encrypted handshake, and 6.9 bytes a packet, by the quick run's),
// against about 80 MB gzip'd.
//
// # The controlled block (issue 41)
//
// Two profile keys, absent from the committed spec (whose design hash,
// spec_design_sha256, the pinned runs are matched by: any byte of the
// spec changes it), make the block a controlled one (Plan.Controlled).
// transfer_order = "interleaved" measures both groups in one series per
// (scenario, size, congestion control, toolchain), each pair of
// connections in a random order from PCG(seeds.order, the series' link
// seed), and lets transfer_sizes start with 0, the handshake-only
// connection, inside the block. Why random pairs rather than strict
// alternation: with alternation each group always follows the other, so
// whatever one connection leaves for the next (the kernel's TCP metrics
// cache per destination, the CPU's caches) would be confounded with the
// group; random pairs keep the groups balanced in time as alternation
// does, and vary the predecessor. transfer_cc lists congestion controls,
// each set on every socket of its series by the endpoint (TCP_CONGESTION,
// endpoint -cc; per socket, because Linux lets a namespace other than the
// initial one default only to an allowed one), checked against the
// kernel before anything is built (checkTransferCC). Rows then carry cc,
// read back from the socket, and position, their place in the series'
// time order (datasets/netdata ControlledColumns). With CUBIC and BBR and
// size 0 added, the model puts the full profile at 1 h 47 min (+24 min);
// scaled by the pinned run's block (0.39 of its model), about +9 min.
//
// # The padded arm (analysis/ttlb/mechanism2.txt)
//
// transfer_padded_arm = true, only with transfer_order = "interleaved",
// adds a third arm to every transfer series (padded.go): X25519 whose
// server, an endpoint listener of its own at port + len(groups), staples
// an OCSP response of PadBytes (1,080) zero bytes, so that its first
// flight carries the hybrid's bytes; its client offers X25519 with the
// same server name, so no arm's ClientHello changes. Its rows have group
// PaddedArm; each triple of positions holds the three arms in a random
// order (seriesSteps). A run on a 5 ms link measured median size-0
// server payloads of 838 (X25519), 1,926 (padded) and 1,926 bytes
// (hybrid). The model puts the full profile with the controlled block and
// the arm at 2 h 10 min with transfer_round 60 (its block 1 h 10 min),
// 1 h 49 min with 40 (49 min), 1 h 38 min with 30 (38 min)
// (go test -run TestPaddedArmEstimate -v).
//
// # The cost of running series side by side
//
// On the 2-core reference machine (shared, load average about 13 from
// other work), the quick profile (n = 70 handshakes per scenario and group,
// median ths in ms; lan exclusive in the first two runs):
//
//	scenario   group             parallel 1   parallel 6   parallel 6, lan not exclusive
//	lan        X25519              2.119        1.798        2.089
//	lan        X25519MLKEM768      2.131        2.038        2.367
//	wan-quick  X25519             11.393       11.402       11.555
//	wan-quick  X25519MLKEM768     12.076       11.878       11.963
//	far-quick  X25519             22.292       22.182       22.185
//	far-quick  X25519MLKEM768     24.050       24.244       24.331
//
// For the 10 and 20 ms scenarios the medians of parallel 1 and 6 agree
// within 0.2 ms (1 to 2 %), the size of the run-to-run spread of this
// machine; all self-tests passed with 6 links up (p50 errors +0.1 to
// +0.3 ms, tolerance 1 ms). The LAN run concurrently with five other series
// put the hybrid's median 0.24 ms (11 %) above the serial one, the same
// order as the difference the study measures at 1 ms RTT; hence lan is
// exclusive. Re-measure with
//
//	PQREPRO_NET_QUICK=1 PQREPRO_NET_PARALLEL=1 go test -run TestQuickProfile -v ./experiments/net/netrun
//	PQREPRO_NET_QUICK=1 go test -run TestQuickProfile -v ./experiments/net/netrun
//	PQREPRO_NET_QUICK=1 PQREPRO_NET_NOEXCLUSIVE=1 go test -run TestQuickProfile -v ./experiments/net/netrun
package netrun
