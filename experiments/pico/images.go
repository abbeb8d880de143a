package pico

// StandardImages splits Study C into RAM-only images, each small enough to
// leave its largest operation's stack in the 264 KB of SRAM (ML-DSA-87
// signing needs ~120 KB), and independent so two can run at once on the
// two cores of this machine: all ML-KEM in one, each ML-DSA in its own (the
// longest runs). The mbedTLS baselines (RSA-2048, ECDSA/ECDH P-256) are
// not built yet: EnsureMbedTLS says so.
func StandardImages() []BuildConfig {
	return []BuildConfig{
		{Name: "mlkem", Schemes: KEMSchemes},
		{Name: "mldsa44", Schemes: []string{"ml-dsa-44"}},
		{Name: "mldsa65", Schemes: []string{"ml-dsa-65"}},
		{Name: "mldsa87", Schemes: []string{"ml-dsa-87"}},
	}
}
