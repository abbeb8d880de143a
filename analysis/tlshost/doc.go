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
// analysis/tlsstudy's host account (hostcost.go, whose comment derives
// the model), analysis/tlsgapmodel's CPU term and analysis/tlscrosshost's
// predictions use it. It knows no study type.
package tlshost
