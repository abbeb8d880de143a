package pipeline

import (
	"context"
	"fmt"
	"time"

	"pqrepro/experiments/openssl"
)

// TLSOpenSSL builds Study A's OpenSSL stack into .cache/openssl: Debian
// trixie's OpenSSL 3.5 source package (pinned, verified), Configure and
// make once (minutes; a later call reuses the build), then the C harness.
// It prints what meta.json will record about the build.
func TLSOpenSSL(ctx context.Context, cfg Config) error {
	if err := cfg.installer().Ensure(ctx, openssl.Requirements()); err != nil {
		return fmt.Errorf("tls:openssl: %w", err)
	}
	t0 := time.Now()
	b, err := openssl.Ensure(ctx, cfg.Root, cfg.log())
	if err != nil {
		return fmt.Errorf("tls:openssl: %w", err)
	}
	bin, err := b.Harness(ctx, cfg.log())
	if err != nil {
		return fmt.Errorf("tls:openssl: %w", err)
	}
	cfg.printf("tls:openssl: OpenSSL %s from Debian %s %s (.dsc sha256 %s), %s && make %s: built once in %.0f s; harness %s; this call %s",
		b.OpenSSLVersion, b.Suite, b.Version, b.DscSHA256, b.Configure, b.MakeTarget, b.BuildSeconds, bin, time.Since(t0).Round(time.Millisecond))
	return nil
}
