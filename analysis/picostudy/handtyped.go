package picostudy

// HandTyped are the numbers the paper's text may state literally about
// Study C: facts of its setup, not measurements (the paper stage checks
// that every other number comes from a generated macro).
var HandTyped = []string{
	"2.28", // Mbed TLS 2.28, the classical baselines' library
	"2~MB", // the Pico's flash (RP2040 datasheet)
}
