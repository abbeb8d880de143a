package handshake

import (
	"crypto/tls"
	"fmt"
	"slices"
)

// KeyShare says how a client offers the configured group: Direct sends its
// key share for it in the ClientHello. HRR offers a decoy group's key
// share first, so the server (which supports only the configured group)
// must answer with a HelloRetryRequest (RFC 8446 4.1.4) and the client
// sends a second ClientHello with the configured group's share.
type KeyShare string

const (
	Direct KeyShare = "direct"
	HRR    KeyShare = "hrr"
)

// KeyShares lists the key-share modes in a fixed order.
var KeyShares = []KeyShare{Direct, HRR}

// decoys is the group offered beside each target to provoke a
// HelloRetryRequest. It is a group the server lacks whose key share the client
// sends instead of the target's.
var decoys = map[tls.CurveID]tls.CurveID{
	tls.X25519:             tls.SecP256r1MLKEM768,
	tls.X25519MLKEM768:     tls.SecP256r1MLKEM768,
	tls.SecP256r1MLKEM768:  tls.X25519MLKEM768,
	tls.SecP384r1MLKEM1024: tls.X25519MLKEM768,
	tls.MLKEM1024:          tls.X25519MLKEM768,
}

// goKeyShareOrder is Go 1.27's fixed client preference order. The client
// sends one key share, for the first group of this order it offers (plus
// a hybrid's classical share when that classical group is offered too).
var goKeyShareOrder = []tls.CurveID{
	tls.X25519MLKEM768, tls.SecP256r1MLKEM768, tls.SecP384r1MLKEM1024, tls.MLKEM1024,
	tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521,
}

// Decoy returns the group a client offers beside target for the HRR key
// share mode (any client that can choose its key share, OpenSSL's
// included).
func Decoy(target tls.CurveID) (tls.CurveID, error) {
	d, ok := decoys[target]
	if !ok {
		return 0, fmt.Errorf("no HelloRetryRequest decoy for group %s", target)
	}
	return d, nil
}

// GoHRRGroups returns what Go's client offers to be sent a
// HelloRetryRequest for target: the decoy and target. Go chooses its key
// share by its own fixed order, so this works only when the decoy comes
// first in that order; for X25519MLKEM768, the first of the order, Go 1.27
// cannot be made to send another share, and GoHRRGroups says so.
func GoHRRGroups(target tls.CurveID) ([]tls.CurveID, error) {
	d, err := Decoy(target)
	if err != nil {
		return nil, err
	}
	if slices.Index(goKeyShareOrder, d) > slices.Index(goKeyShareOrder, target) {
		return nil, fmt.Errorf("Go 1.27's client always sends its key share for %s when it offers it (the first group of its fixed order), so it cannot take the HelloRetryRequest path for %s; measure it with keyshare direct or with the openssl stack", target, target)
	}
	return []tls.CurveID{d, target}, nil
}
