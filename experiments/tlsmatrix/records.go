package tlsmatrix

import "pqrepro/experiments/tlsrecords"

// The dataset format lives in experiments/tlsrecords; these names keep the
// runner's API as it was.
type (
	Record     = tlsrecords.Record
	ConfigID   = tlsrecords.ConfigID
	ParseError = tlsrecords.ParseError
)

// RecordsFile is the name of the records file inside a run folder.
const RecordsFile = tlsrecords.RecordsFile

var (
	Columns       = tlsrecords.Columns
	KnownCertKeys = tlsrecords.KnownCertKeys
	KnownGroups   = tlsrecords.KnownGroups
	ErrNoRecords  = tlsrecords.ErrNoRecords
)

// ParseConfigID, WriteRecords, ReadRecords and MarshalRecords are those of
// experiments/tlsrecords.
var (
	ParseConfigID  = tlsrecords.ParseConfigID
	WriteRecords   = tlsrecords.WriteRecords
	ReadRecords    = tlsrecords.ReadRecords
	MarshalRecords = tlsrecords.MarshalRecords
)
