package ttlb

import (
	_ "embed"

	"pqrepro/datasets/netdata"
)

// MechanismText is mechanism.txt, the registration of the transfer
// block's mechanism, committed before any data it judges.
//
// It is here because go:embed reads only files of the package's own
// folder; analysis/ttlbmechanism parses and implements it.
//
//go:embed mechanism.txt
var MechanismText []byte

// MechanismFile is mechanism.txt's path from the repository root, for a
// stage that declares it as an input.
const MechanismFile = "analysis/ttlb/mechanism.txt"

// Mechanism2Text is mechanism2.txt, the mechanism's second registration.
//
// It supersedes mechanism.txt's prediction 2 with an intervention (a
// padded X25519 arm), committed before any run of that design;
// analysis/ttlbmechanism parses and implements it.
//
//go:embed mechanism2.txt
var Mechanism2Text []byte

// Mechanism2File is mechanism2.txt's path from the repository root.
const Mechanism2File = "analysis/ttlb/mechanism2.txt"

// ReadTransfer returns the rows of the run's transfer.csv.gz, or none when
// the stage's inputs lack it.
//
// The stage's glob <run>/*.csv.gz matches it when the run has one; this
// is the reading net:ttlb does, for the mechanism's stage.
func ReadTransfer(inputs []string, read func(string) ([]byte, error), runDir string) ([]netdata.Row, error) {
	return readTransfer(inputs, read, runDir)
}
