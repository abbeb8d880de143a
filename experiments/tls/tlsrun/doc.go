// Package tlsrun runs Study A: the TLS 1.3 certificate-key x
// key-exchange-group matrix of experiments/tls.toml, captured, on one host.
//
// It writes the raw dataset data/tls/<run-id>/ (inproc.csv.gz,
// records.csv.gz, configs.json, meta.json); each path's pcapng is kept
// gzip'd in the run folder when the captures are small together
// (rederive.InRepoMaxBytes), else in the content store, referenced by its
// SHA-256 either way. The run's lifecycle (defaults, run folder,
// meta.json's provenance, commit, pin) is experiments/instruments/runlife's,
// shared with the other studies.
//
// # A run
//
// Run validates the spec and checks the permission to capture, builds
// the OpenSSL stacks a configuration uses (stack.go, clistack.go), starts
// every path a configuration runs on, makes the certificates and starts
// one server per configuration and path on its own port, all up for the
// whole run. Then it creates the run folder, starts one capture per path,
// makes every connection of Plan one after another (one client,
// sequential, like the paper's repeated connections), stops the captures,
// writes what the process measured (inproc.csv.gz, with each
// connection's path) and configs.json, and derives records.csv.gz from
// them and the captures with tlsjoin.DeriveRecords: the function the
// build's tls:records stage calls again, each path's connections joined
// with that path's capture. The pcapngs carry the key log as a
// Decryption Secrets Block.
//
// # Paths and stacks
//
// Each network path is a type of its own behind the path interface
// (paths.go), the way each stack's ends are made by its own code:
//
//   - loopback (loopback.go): servers on 127.0.0.1, the capture on lo;
//   - bridge (bridgepath.go): two namespaces through a Linux bridge
//     (experiments/tls/bridgenet), the capture on the client's veth;
//   - docker (dockerpath.go): a private Docker daemon's two containers on
//     a Compose network (experiments/tls/dockernet), the openssl-cli
//     stack only;
//   - remote (remotepath.go): the servers on a second host over SSH
//     (experiments/instruments/sshhost), the client and capture here;
//   - emulated-<delay>ms (emulated.go): two namespaces joined by the
//     link emulator of Study B's links (experiments/instruments/linkemu)
//     with that one-way delay, self-tested before use, the capture on
//     the client's TUN device and a second on the server's (issue 42,
//     tlsjoin.ServerCaptureFor); the openssl-cli stack only, the paper's
//     configurations under each [emulated] client group list and chain,
//     for the gap model (issue 30).
//
// A path says where its servers listen, where its clients dial from,
// where its capture runs, what meta.json records about it and, when it
// can break mid-run (watchedPath), why it broke. The openssl-cli stack
// (clistack.go, cliStack) asks a path where s_server and s_client start
// (cliPath). The runner keeps the orchestration: plan, servers,
// connections, records, captures, meta.json.
//
// The design choices the paper leaves open, and how this package settles
// them, are stated in experiments/tls.toml and in the doc comments of
// Plan (the interleaved block order), Run (one capture per path, one
// server per configuration) and tlsjoin.Join (matching capture and
// in-process records).
package tlsrun
