package picostudy

// HandTyped are the numbers the paper may state literally about Study
// C's setup. They are facts of its setup, not measurements (the paper
// stage checks that every other number comes from a generated macro).
var HandTyped = []string{
	"2.28",  // Mbed TLS 2.28, the classical baselines' library
	"2~MB",  // the Pico's flash (RP2040 datasheet)
	"3.1",   // SPHINCS+ round 3.1, the version PQClean ships
	"16~KB", // the XIP cache (RP2040 datasheet 2.6.3)
	// The deadlines the original's advice is tested against (DeadlinesMs)
	// and the level of the Wilson intervals: choices of the analysis.
	"100~ms", "95\\,\\%",
}
