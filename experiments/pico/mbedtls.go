package pico

import (
	"context"
	"errors"
	"io"
)

// mbedtlsFiles are the mbedTLS library sources the classical baselines need.
var mbedtlsFiles = []string{}

// EnsureMbedTLS fetches the mbedTLS sources into .cache and returns their root.
func EnsureMbedTLS(ctx context.Context, root string, log io.Writer) (string, error) {
	return "", errors.New("mbedTLS baselines are not built yet")
}
