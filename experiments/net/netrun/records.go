package netrun

import "pqrepro/datasets/netdata"

// The dataset format lives in datasets/netdata, shared with the analysis;
// these names keep the runner's API as it was.
type Row = netdata.Row

// RecordsFile is the dataset's table, one row per recorded handshake attempt.
const RecordsFile = netdata.RecordsFile

// Columns are the header of records.csv.gz (netdata.Columns); ColumnsV1
// is the header of runs whose every row is LegacyToolchain's.
var (
	Columns   = netdata.Columns
	ColumnsV1 = netdata.ColumnsV1
)

// LegacyToolchain is the toolchain of rows of runs recorded before the
// toolchain column (netdata.LegacyToolchain).
const LegacyToolchain = netdata.LegacyToolchain
