// Package repro is the reproducibility core of pqrepro: content-hashed
// stages, the lock file, SHA256SUMS, staleness reports and verification.
//
// A paper is a build. A Stage turns declared input files, parameters and
// its own code into declared output files. The Engine runs a stage only
// when the SHA-256 of something it declared changed (never because of a
// modification time), writes its outputs atomically, and records the
// hashes in a committed lock file (pqrepro.lock). Verify re-derives every
// output from the committed raw data in a temporary tree and compares the
// bytes, so a reviewer can prove that each number follows from the data.
//
// Raw datasets are not stages: experiments write them once into a new run
// folder (see NewRun), they are never overwritten, and the study's spec
// pins which run the paper uses.
package repro
