package netstudy

import "pqrepro/experiments/netjoin"

// The dataset format and the capture join live in experiments/netjoin, so
// that the build's net:records stage re-derives the records with the same
// code; these names keep the runner's API as it was.
type Row = netjoin.Row

// RecordsFile is the dataset's table, one row per recorded handshake attempt.
const RecordsFile = netjoin.RecordsFile

// Columns are the header of records.csv.gz (netjoin.Columns); ColumnsV1
// is the header of runs whose every row is LegacyToolchain's.
var (
	Columns   = netjoin.Columns
	ColumnsV1 = netjoin.ColumnsV1
)

// LegacyToolchain is the toolchain of rows of runs recorded before the
// toolchain column (netjoin.LegacyToolchain).
const LegacyToolchain = netjoin.LegacyToolchain
