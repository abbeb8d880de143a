// Package tlsstudy is the analysis of Study A (the TLS 1.3 certificate
// signature x key-exchange matrix of Hara, Kawashima and Saito, IPSJ SIG
// Technical Report 2026-IOT-73 no. 15): it turns a pinned raw dataset
// data/tls/<run-id>/records.csv.gz (experiments/tls/tlsrun) into
// results/tls.json, and that into the study's figures, LaTeX tables and
// \newcommand numbers. It also holds the study's published values
// (published.go, the one copy) and its claims with their rules and
// tolerances (claims.go, Claims), which analysis/claims evaluates.
// Stages returns the three pipeline stages:
//
//	tls:analyze  <run>/records.csv.gz -> results/tls.json
//	tls:figures  results/tls.json     -> figures/tls-ths.{pdf,svg}, figures/tls-bytes.{pdf,svg}
//	tls:tables   results/tls.json     -> paper/generated/tls-{paper,matrix,bytes,numbers}.tex
//
// The handshake time Ths is the capture's: the first segment of the
// ClientHello to the first segment of the client's Finished (the first
// encrypted client record after the ServerHello), per connection. Warm-up
// connections are dropped; every measured connection must be complete,
// negotiate the configured group and have a HelloRetryRequest exactly when
// its configuration expects one, or the analysis refuses the dataset (a
// wrong connection is an error, never a sample).
//
// Statistics follow analysis/stats and its stated conventions (R type 7
// quantiles, SciPy 1.10 Mann-Whitney U, Holm as R's p.adjust, Cliff's delta
// with the Feng-Cliff interval, epsilon-squared = H/(N-1), a seeded
// percentile bootstrap); Methods in the results repeats them.
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
