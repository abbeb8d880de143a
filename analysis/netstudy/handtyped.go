package netstudy

// HandTyped are the numbers the paper may state literally about Study
// B's setup. They are facts of its setup, not measurements (the paper
// stage checks that every other number comes from a generated macro).
var HandTyped = []string{
	"1.3",  // TLS 1.3, the protocol measured
	"1.24", // Go 1.24, the original's toolchain
}
