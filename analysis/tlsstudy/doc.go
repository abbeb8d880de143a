// Package tlsstudy is Study A's analysis, from a pinned raw dataset to
// results, figures, tables and numbers.
//
// Study A is the TLS 1.3 certificate signature x key-exchange matrix of
// Hara, Kawashima and Saito (IPSJ SIG Technical Report 2026-IOT-73 no.
// 15). The package turns a pinned raw dataset
// data/tls/<run-id>/records.csv.gz (experiments/tls/tlsrun) into
// results/tls.json, and that into the study's figures, LaTeX tables and
// \newcommand numbers. It also holds the study's published values
// (published.go, the one copy) and its claims with their rules and
// tolerances (claims.go, Claims), which analysis/claims evaluates.
// Stages returns the three pipeline stages:
//
//	tls:analyze  <run>/records.csv.gz, <run>/meta.json -> results/tls.json
//	tls:figures  results/tls.json     -> figures/tls-{ths,bytes,gap,drift}.{pdf,svg}
//	tls:tables   results/tls.json     -> paper/generated/tls-{paper,matrix,bytes,gap,factors,drift,serial,numbers}.tex
//
// The handshake time Ths is the capture's: the first segment of the
// ClientHello to the first segment of the client's Finished (the first
// encrypted client record after the ServerHello), per connection. Warm-up
// connections are dropped; every measured connection must be complete,
// negotiate the configured group and have a HelloRetryRequest exactly when
// its configuration expects one, or the analysis refuses the dataset (a
// wrong connection is an error, never a sample).
//
// The unit of replication is the round (analysis/tlscompare): the runner runs
// every configuration's blocks in rounds, shuffled per round, and the
// handshakes of a block are serially dependent while the host drifts
// between rounds. A configuration's increase is therefore the median over
// rounds of the paired differences of block medians (its block minus the
// baseline's in the same round), with a cluster-bootstrap interval over
// rounds, the Wilcoxon signed-rank test over rounds (Holm over a family)
// and Friedman's test over rounds; the gap analysis's factor effects use
// the same rounds. Mann-Whitney, Kruskal-Wallis, Cliff's delta,
// Hodges-Lehmann and the independent-sample bootstrap treat handshakes as
// independent and are kept as descriptive only. Dependence (dependence.go)
// reports each configuration's rank ACF at lag 1 and runs test, and the
// run's drift by fifths of ClientHello time.
//
// The gap analysis (gap.go) sets the paper's four configurations of
// every cell (stack x path x key-share mode) beside the published
// increases and estimates five factors one at a time, the others held:
// stack, process model, path, runtime and key share. The claims are
// judged on the first of Params.Cell and Params.Fallback the run has
// (PrimaryChoice), never on another cell. meta.json adds the host's
// cryptography, for a primitive-cost account of the hybrid
// (analysis/tlshost), and each stack's socket options beside the per-cell
// stall account (stalls.go).
//
// Statistics follow analysis/stats and its stated conventions (R type 7
// quantiles, SciPy 1.10 Mann-Whitney U and Wilcoxon signed-rank, Friedman
// as scipy.stats.friedmanchisquare, Holm as R's p.adjust, Cliff's delta
// with the Feng-Cliff interval, epsilon-squared = H/(N-1), seeded
// percentile and cluster bootstraps; p-values printed no smaller than
// stats.PFloor); Methods in the results repeats them.
//
// The dataset format, the config IDs (<cert_key>/<group>[/chain][/hrr])
// and the reader are defined in datasets/tlsdata. The
// pipeline passes the pinned run folder and Params (DefaultParams gives the
// paper's four configurations with the Ed25519 + X25519 baseline).
//
// Results JSON (Results, schema 1) has sorted keys at every level and
// numbers rounded to NumDigits significant digits; figures and tables are
// rendered only from it, never from the raw data.
package tlsstudy
