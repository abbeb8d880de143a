// Package tlscrosshost makes Study A's increases comparable across hosts:
// each beside the host's own prediction from its `openssl speed`.
//
// NormalisedIncreases reads the results of analysis/tlsstudy (the paper
// family's round-level increases and the run's host_cost speeds) and
// returns, per role, observed / predicted or why the ratio must not be
// compared. The pipeline's cross-host judgement (`mage all`, `mage
// calibrate`) uses it; no stage does.
package tlscrosshost
