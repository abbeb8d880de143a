// Package gapmodel fits Study A's handshake time as fixed cost, round
// trips times the path's RTT, and the host's cryptography, and tests it.
//
// Issue 30 asks whether the original's increases (baseline about 3.9 ms,
// ML-DSA-87 +4.651 ms, ML-KEM-1024 +5.072 ms, hybrid +9.048 ms) come from
// round trips on a slower path (a HelloRetryRequest when one client group
// list serves every configuration, RFC 8446 4.1.4; a server flight beyond
// TCP's initial window when the chain holds a CA certificate, RFC 6928)
// rather than from the CPU. The model of one cell i is
//
//	Ths_i = c0 + k_i x RTT_i + s x CPU_i,
//
// where Ths_i is the median over rounds of the cell's per-round median
// Ths (ms), k_i the cell's median measured round trips before the
// client's Finished, RTT_i the link's self-tested round-trip time (ms),
// and CPU_i the host's predicted cryptographic time of the configuration
// (analysis/tlshost/account.go: 3 P-384 operations with a direct key
// share, 4 after an HRR). k x RTT is not fitted. c0 and s are ordinary
// least squares of y_i = Ths_i - k_i x RTT_i on CPU_i:
//
//	s  = sum (CPU_i - mean CPU)(y_i - mean y) / sum (CPU_i - mean CPU)^2
//	c0 = mean y - s x mean CPU
//
// on the cells of the registered fit levels (registration.txt, committed
// before the run: the lowest and the highest delay level); the other
// levels are predicted and each |error| is held against the registered
// bound. Intervals on c0 and s are a percentile cluster bootstrap over
// rounds (the unit of replication), the same drawn rounds in every cell
// (analysis/stats.ClusterBootstrap).
//
// Only when the prediction passes does Explain solve, per combination of
// client group list and chain, the path RTT R >= 0 that best explains the
// four published medians P_j (least squares, closed form):
//
//	R = sum k_j (P_j - c0 - s CPU_j) / sum k_j^2,
//
// and, if a residual then exceeds the registered bound, R and a CPU-speed
// factor f jointly from P_j - c0 = k_j R + (s f) CPU_j. A fit with as many
// free parameters as numbers explains nothing and is reported as such.
// The package is pure computation: no I/O, deterministic output.
package gapmodel
