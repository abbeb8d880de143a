package pico

import (
	"context"
	"errors"
	"io"
)

// mbedtlsFiles are the mbedTLS library sources the classical baselines need.
var mbedtlsFiles = []string{}

// EnsureMbedTLS is to fetch the mbedTLS sources into .cache and return
// their root. Not implemented: it always fails, saying so.
func EnsureMbedTLS(ctx context.Context, root string, log io.Writer) (string, error) {
	return "", errors.New("pico: the mbedTLS baselines (rsa-2048, ecdsa-p256, ecdh-p256) are not implemented yet: " +
		"the firmware driver (classic.c), the apt-get source fetch of mbedtls 2.28.3 and its config are still to be written")
}
