// Package capture is the packet instrument of Studies A and B: it captures
// TLS handshakes and reads captures back into per-connection records.
//
// Both studies measure a handshake on the wire, from the first segment of
// the ClientHello to the first segment of the client's Finished, so one
// reader times every TLS stack (Go's crypto/tls, OpenSSL) the same way. A
// live [Capture] reads an AF_PACKET socket with nanosecond kernel
// timestamps and writes pcapng, with the TLS secrets in a Decryption
// Secrets Block so that the Finished can be confirmed by decryption.
// [Read] turns a pcap or pcapng stream into [Record]s, one per TCP
// connection that carried a TLS handshake; one it could not see in full
// is kept, marked incomplete with the reason, instead of dropped.
// [Trim] cuts a capture down to what the reader parses (each connection's
// handshake whole, later packets' headers only) without changing its
// records, so that long transfers' captures can travel with a run;
// [EncodeCapture] stores such a capture losslessly in columns, in less
// than two thirds of its gzip'd size, and [DecodeCapture] gives it back
// byte for byte.
//
// The reader is the one the runners call, the one the records stage runs
// again on the runs' captures (experiments/instruments/rederive), and the
// one `pqrepro pcap` runs on anyone's capture: one instrument, under a
// code hash like the analysis.
package capture
