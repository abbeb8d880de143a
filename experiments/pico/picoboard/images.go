package picoboard

import "pqrepro/datasets/picodata"

// StandardImages splits Study C into RAM-only images that each fit the
// RP2040's SRAM and can run two at once.
//
// Each image is small enough to leave its largest operation's stack in the
// 264 KB of SRAM (ML-DSA-87 signing needs ~120 KB), and independent so two
// can run at once on the two cores of this machine: all ML-KEM in one, each
// ML-DSA in its own (the longest runs), and the mbedTLS baselines (RSA-2048,
// ECDSA P-256, ECDH P-256) together in "classic", which needs a 48 KiB heap
// and ~10 KB of stack instead. The SPHINCS+ sets (our extension) each get
// their own image: one signature is billions of cycles, so each image is a
// long, independent job for the scheduler.
func StandardImages() []BuildConfig {
	return []BuildConfig{
		{Name: "mlkem", Schemes: picodata.KEMSchemes},
		{Name: "mldsa44", Schemes: []string{"ml-dsa-44"}},
		{Name: "mldsa65", Schemes: []string{"ml-dsa-65"}},
		{Name: "mldsa87", Schemes: []string{"ml-dsa-87"}},
		{Name: "classic", Schemes: picodata.ClassicalSchemes},
		{Name: "sphincs-sha2-128f", Schemes: []string{"sphincs-sha2-128f"}},
		{Name: "sphincs-shake-128f", Schemes: []string{"sphincs-shake-128f"}},
		{Name: "sphincs-sha2-128s", Schemes: []string{"sphincs-sha2-128s"}},
	}
}
