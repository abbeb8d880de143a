package tlsrun

import "pqrepro/datasets/tlsdata"

// The dataset format lives in datasets/tlsdata; these names keep the
// runner's API as it was.
type (
	Record     = tlsdata.Record
	ConfigID   = tlsdata.ConfigID
	ParseError = tlsdata.ParseError
)

// RecordsFile is the name of the records file inside a run folder.
const RecordsFile = tlsdata.RecordsFile

var (
	Columns       = tlsdata.Columns
	KnownCertKeys = tlsdata.KnownCertKeys
	KnownGroups   = tlsdata.KnownGroups
	ErrNoRecords  = tlsdata.ErrNoRecords
)

// ParseConfigID, WriteRecords, ReadRecords and MarshalRecords are those of
// datasets/tlsdata.
var (
	ParseConfigID  = tlsdata.ParseConfigID
	WriteRecords   = tlsdata.WriteRecords
	ReadRecords    = tlsdata.ReadRecords
	MarshalRecords = tlsdata.MarshalRecords
)
