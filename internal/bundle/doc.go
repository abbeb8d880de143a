// Package bundle writes the artifact bundle. That is, one deterministic
// archive of a commit for an archival repository, holding the code, the raw
// data, the large captures from the content store, SHA256SUMS,
// CITATION.cff, a machine-readable manifest (BUNDLE.json), a checksum list
// of everything in it (BUNDLE.SHA256SUMS) and the artifact appendix
// (ARTIFACT.md: hardware and software needed, time and disk per target, and
// which published claims each target bears on).
//
// A clone has no content store: blobs the runs refer to that are not in
// the store are left out, not an error. The bundle is still written; its
// ARTIFACT.md and BUNDLE.json list each absent blob, the runs that refer to
// it and how to fetch it (FetchCommand). A blob that is present but does
// not hash to its name is an error. Captures committed gzip'd in a run
// folder (experiments/instruments/rederive) are files of the commit, not blobs.
//
// Determinism follows reproducible-builds.org's archive guidance: entries
// sorted by path; owner and group 0 without names; modes reduced to 0644,
// or 0755 for directories and files Git records as executable (mode
// 100755); every mtime SOURCE_DATE_EPOCH; ustar headers (POSIX.1-1988),
// with pax extended headers (POSIX.1-2001) only for paths ustar cannot
// hold; no access or change times; gzip (RFC 1952) with a fixed level, no
// file name and a zero time in its header. Two bundles of the same commit,
// blobs, SOURCE_DATE_EPOCH and Go version are byte-identical; check with
// cmp or by their SHA-256.
//
// The timing of build, verify and paper is read from a committed file
// (DefaultTimingsFile, written by Measure) rather than measured while
// bundling, because a wall time would make the bytes differ per run.
package bundle
