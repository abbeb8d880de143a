package tlsstudy

// HandTyped are the numbers the paper may state literally about Study
// A's setup. They are facts of its setup, not measurements (the paper
// stage checks that every other number comes from a generated macro).
var HandTyped = []string{
	"1.3",   // TLS 1.3, the protocol measured
	"3.5.2", // OpenSSL 3.5.2, the original's stack
	"3.5",   // OpenSSL 3.5, our second stack (tls:openssl)
}
