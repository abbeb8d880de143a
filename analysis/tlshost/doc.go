// Package tlshost is the host's primitive costs for Study A: the `openssl
// speed` figures of meta.json and the cryptographic time they predict.
//
// The runner measures the host's own primitives before and after the
// handshakes (meta.json measured.host_crypto, CryptoMeta); MsPerOp takes
// their mean, and ConfigCPUMs turns them into the cryptographic time
// inside Ths of one configuration. By the account: an ECDH part costs
// P384Ops operations of its curve (the server's key generation and each
// side's derivation, and the client's second key generation after a
// HelloRetryRequest; a key generation assumed as dear as one `openssl
// speed` derivation), a KEM part its encapsulation and decapsulation
// (and its key generation after an HRR), and the certificate's signature
// one signing and one verification per signature checked.
//
// NewAccount is the host's account of the hybrid's increase in every cell
// of Study A's gap analysis (account.go, whose comment derives the model):
// analysis/tlsstudy passes each cell's per-round increases in and keeps
// the Account in results/tls.json. analysis/tlsgapmodel's CPU term and
// analysis/tlscrosshost's predictions use the speeds too. It knows no
// study type: its cells are datasets/tlsdata's.
package tlshost
