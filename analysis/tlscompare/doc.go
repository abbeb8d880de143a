// Package tlscompare is Study A's comparison of a target with its
// baseline by round: per-round differences, their interval and test, Holm
// over a family, and Friedman's test.
//
// It sits below the study's analyses so that each of them (the families
// and the claims in analysis/tlsstudy, the gap analysis's cells and
// factors) compares configurations the one same way, from per-round block
// medians it is passed; it knows no record, cell or parameter of the
// study. rounds.go says why the round is the unit of replication.
package tlscompare
