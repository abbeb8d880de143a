// Package remote moves content-store blobs (internal/repro.Store) between
// the local store and a data remote: a directory (local disk or a mounted
// share), a read-only HTTP(S) archive (a static server, or an archive
// record such as Zenodo's through a committed index) or S3-compatible
// object storage. It plays the part of DVC remotes and of showyourwork's
// Zenodo caches: the repository commits the hashes (meta.json "files"),
// the remote holds the bytes, and every byte that arrives is checked
// against the committed hash before it is stored.
//
// On every remote a blob is addressed the way the store addresses it:
// <prefix>sha256/<first two hex digits>/<other 62 hex digits>. An HTTP
// remote may instead map hashes to arbitrary URLs through an index file
// (see [Config]).
//
// Transfers ([Pull], [Push]) are atomic: a download is hashed while it is
// written to a partial file and renamed into the store only when the hash
// matches; an upload is renamed (directory) or completed (S3 multipart)
// only when whole. Downloads resume from the partial file with an HTTP
// Range request (RFC 9110 §14) or an S3 ranged GET.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// A Remote stores blobs by SHA-256 (lower-case hex).
type Remote interface {
	// Stat returns the size of the blob on the remote, or -1 when the
	// remote does not say; an error wrapping ErrNotFound if it has none.
	Stat(ctx context.Context, sum string) (int64, error)
	// Get returns the blob's bytes from offset off on. A remote that cannot
	// start there starts at 0 and says so in the offset it returns.
	Get(ctx context.Context, sum string, off int64) (rc io.ReadCloser, from int64, err error)
	// Put stores size bytes from r as the blob sum. No partial blob is
	// ever visible: on any error the remote holds the blob whole or not
	// at all. A read-only remote returns an error wrapping ErrReadOnly.
	Put(ctx context.Context, sum string, r io.Reader, size int64) error
	// List returns the hashes of the blobs on the remote, sorted, or an
	// error wrapping ErrUnsupported when the remote cannot be listed.
	List(ctx context.Context) ([]string, error)
	// String names the remote for messages (no credentials).
	String() string
}

var (
	// ErrNotFound means the remote has no blob with that hash.
	ErrNotFound = errors.New("blob not on the remote")
	// ErrReadOnly means the remote cannot be written.
	ErrReadOnly = errors.New("remote is read-only")
	// ErrRemoteAbsent means the remote itself is not there: a dir
	// remote's folder that does not exist (a fresh clone without the
	// share, an unmounted disk).
	ErrRemoteAbsent = errors.New("remote folder absent")
	// ErrUnsupported means the remote cannot do what was asked.
	ErrUnsupported = errors.New("not supported by this remote")
)

// IsSHA256 reports whether s is a lower-case hex SHA-256.
func IsSHA256(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

// Key is the blob's address relative to a remote's root: the store's own
// layout, under prefix.
func Key(prefix, sum string) string {
	return path.Join(prefix, "sha256", sum[:2], sum[2:])
}

// sumFromKey is Key's inverse for listing: it returns the hash if rel (the
// part after the prefix) is sha256/<2>/<62>.
func sumFromKey(rel string) (string, bool) {
	parts := strings.Split(strings.TrimPrefix(rel, "/"), "/")
	if len(parts) != 3 || parts[0] != "sha256" || len(parts[1]) != 2 {
		return "", false
	}
	s := parts[1] + parts[2]
	return s, IsSHA256(s)
}

func checkSum(sum string) error {
	if !IsSHA256(sum) {
		return fmt.Errorf("remote: %q is not a SHA-256 (64 lower-case hex digits)", sum)
	}
	return nil
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}
