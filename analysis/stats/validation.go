package stats

// The validation of the block bootstrap (blockboot_test.go,
// TestBlockBootstrapValidation): the design the seeded simulation uses and
// the rates it must reach. They are exported so that the paper states the
// test's own numbers (netstudy's \NetValidation... macros).
const (
	// ValidationN is the length of each simulated series (Study B's
	// smallest round); ValidationSims the number of simulations.
	ValidationN    = 1000
	ValidationSims = 1000
	// ValidationPhi is the AR(1) coefficient of the simulated series,
	// ValidationStep the step drift at the middle, in innovation SDs.
	ValidationPhi  = 0.8
	ValidationStep = 1.0
	// ValidationMinCoverage and the next two constants are the thresholds
	// of the bootstrap's validation.
	//
	// ValidationMinCoverage is the least share of the 95 % block
	// bootstrap intervals that must cover the true difference,
	// ValidationMaxIndependent the share the independent bootstrap's must
	// stay under (the dependence must matter), ValidationMaxFalsePositive
	// the most intervals that may exclude a null difference.
	ValidationMinCoverage      = 0.93
	ValidationMaxIndependent   = 0.70
	ValidationMaxFalsePositive = 0.06
)
