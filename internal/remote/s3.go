package remote

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"pqrepro/internal/settings"
)

// An S3 remote keeps blobs as objects <Prefix>sha256/<2>/<62> in a bucket
// of any S3-compatible object store, through minio-go. S3 makes an object
// visible only when its PUT (or the completion of its multipart upload)
// succeeds, so no partial blob is ever visible; each part carries a
// CRC32C checksum the server checks, and Put confirms the stored size
// afterwards.
type S3 struct {
	Client   *minio.Client
	Bucket   string
	Prefix   string
	PartSize uint64 // multipart part size; 0: minio-go's default (16 MiB minimum)
	// LeftoverAge is how old an unfinished multipart upload must be to
	// count as the leftover of a killed push (RemoveLeftovers aborts it);
	// a younger one may be another clone's push running now. 0 means a
	// day, the period S3 lifecycle rules commonly use for the same.
	LeftoverAge time.Duration
	endpoint    string
}

// Credentials are an S3 remote's keys. internal/settings fills them from
// PQREPRO_S3_ACCESS_KEY_ID and PQREPRO_S3_SECRET_ACCESS_KEY, else the
// AWS_* variables (with AWS_SESSION_TOKEN); the secrets print as "(set)".
type Credentials = settings.S3Credentials

// OpenS3 connects to the S3 remote a Config names, with c.Creds. With no
// access key, requests are anonymous, which is enough to pull from a
// public bucket.
func OpenS3(c Config) (*S3, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("remote: s3 url %q: want http(s)://host[:port]", c.URL)
	}
	if u.Path != "" && u.Path != "/" {
		return nil, fmt.Errorf("remote: s3 url %q: the endpoint has no path; put the folder in prefix", c.URL)
	}
	creds := credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	if k := c.Creds; k.AccessKeyID != "" {
		creds = credentials.NewStaticV4(k.AccessKeyID, k.SecretAccessKey.Reveal(), k.SessionToken.Reveal())
	}
	cl, err := minio.New(u.Host, &minio.Options{Creds: creds, Secure: u.Scheme == "https", Region: c.Region})
	if err != nil {
		return nil, fmt.Errorf("remote: s3 %s: %w", c.URL, err)
	}
	return &S3{Client: cl, Bucket: c.Bucket, Prefix: c.Prefix, endpoint: c.URL}, nil
}

func (s *S3) String() string { return "s3 " + s.endpoint + "/" + s.Bucket + "/" + s.Prefix }

func (s *S3) key(sum string) string { return Key(s.Prefix, sum) }

// wrap turns minio-go's errors into this package's: 404 becomes
// ErrNotFound, 403 says which credentials to set, 5xx is temporary.
func (s *S3) wrap(op, sum string, err error) error {
	if err == nil {
		return nil
	}
	r := minio.ToErrorResponse(err)
	switch {
	case r.StatusCode == http.StatusNotFound || r.Code == "NoSuchKey":
		if r.Code == "NoSuchBucket" {
			return fmt.Errorf("%s: %s %s: bucket %q does not exist (create it, or fix bucket in the remote's configuration): %w", s, op, short(sum), s.Bucket, err)
		}
		return fmt.Errorf("%s: %s %s: %w", s, op, short(sum), ErrNotFound)
	case r.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s: %s %s: %w (set PQREPRO_S3_ACCESS_KEY_ID and PQREPRO_S3_SECRET_ACCESS_KEY)", s, op, short(sum), err)
	case r.StatusCode >= 500 || r.StatusCode == http.StatusTooManyRequests:
		return &statusError{remote: s.String(), sum: sum, status: fmt.Sprintf("%d %s (%s)", r.StatusCode, r.Code, r.Message), code: r.StatusCode}
	}
	return fmt.Errorf("%s: %s %s: %w", s, op, short(sum), err)
}

// Stat implements Remote.
func (s *S3) Stat(ctx context.Context, sum string) (int64, error) {
	if err := checkSum(sum); err != nil {
		return 0, err
	}
	info, err := s.Client.StatObject(ctx, s.Bucket, s.key(sum), minio.StatObjectOptions{})
	if err != nil {
		return 0, s.wrap("stat", sum, err)
	}
	return info.Size, nil
}

// Get implements Remote with a ranged GET from off.
func (s *S3) Get(ctx context.Context, sum string, off int64) (io.ReadCloser, int64, error) {
	if err := checkSum(sum); err != nil {
		return nil, 0, err
	}
	opts := minio.GetObjectOptions{}
	if off > 0 {
		if err := opts.SetRange(off, 0); err != nil {
			return nil, 0, err
		}
	}
	rc, _, _, err := minio.Core{Client: s.Client}.GetObject(ctx, s.Bucket, s.key(sum), opts)
	if err != nil {
		return nil, 0, s.wrap("get", sum, err)
	}
	return rc, off, nil
}

// Put implements Remote. An interrupted multipart upload is aborted, so
// it leaves neither an object nor stored parts behind.
func (s *S3) Put(ctx context.Context, sum string, r io.Reader, size int64) error {
	if err := checkSum(sum); err != nil {
		return err
	}
	_, err := s.Client.PutObject(ctx, s.Bucket, s.key(sum), r, size, minio.PutObjectOptions{
		ContentType:  "application/octet-stream",
		PartSize:     s.PartSize,
		UserMetadata: map[string]string{"Sha256": sum},
	})
	if err != nil {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = s.Client.RemoveIncompleteUpload(actx, s.Bucket, s.key(sum)) // best effort: invisible anyway
		return s.wrap("put", sum, err)
	}
	got, err := s.Stat(ctx, sum)
	if err != nil {
		return fmt.Errorf("%s: put %s: uploaded but cannot be read back: %w", s, short(sum), err)
	}
	if got != size {
		return fmt.Errorf("%s: put %s: the remote holds %d bytes, want %d", s, short(sum), got, size)
	}
	return nil
}

// Leftovers implements LeftoverRemover: the unfinished multipart
// uploads under the prefix's blobs older than LeftoverAge, as
// "<key> (upload <id>)". A push aborts its upload on any error it sees;
// only a killed one (SIGKILL, a crash) leaves one, invisible but stored.
func (s *S3) Leftovers(ctx context.Context) ([]string, error) {
	return s.leftovers(ctx, false)
}

// RemoveLeftovers implements LeftoverRemover: it aborts what Leftovers
// lists.
func (s *S3) RemoveLeftovers(ctx context.Context) ([]string, error) {
	return s.leftovers(ctx, true)
}

func (s *S3) leftovers(ctx context.Context, remove bool) ([]string, error) {
	age := s.LeftoverAge
	if age <= 0 {
		age = 24 * time.Hour
	}
	var out []string
	for u := range s.Client.ListIncompleteUploads(ctx, s.Bucket, path.Join(s.Prefix, "sha256")+"/", true) {
		if u.Err != nil {
			return out, s.wrap("list unfinished uploads", "", u.Err)
		}
		if time.Since(u.Initiated) < age {
			continue
		}
		if remove {
			if err := (minio.Core{Client: s.Client}).AbortMultipartUpload(ctx, s.Bucket, u.Key, u.UploadID); err != nil {
				return out, s.wrap("abort unfinished upload", "", err)
			}
		}
		out = append(out, u.Key+" (upload "+u.UploadID+")")
	}
	sort.Strings(out)
	return out, nil
}

// List implements Remote.
func (s *S3) List(ctx context.Context) ([]string, error) {
	dir := path.Join(s.Prefix, "sha256") + "/"
	var sums []string
	for o := range s.Client.ListObjects(ctx, s.Bucket, minio.ListObjectsOptions{Prefix: dir, Recursive: true}) {
		if o.Err != nil {
			return nil, s.wrap("list", "", o.Err)
		}
		if sum, ok := sumFromKey("sha256/" + strings.TrimPrefix(o.Key, dir)); ok {
			sums = append(sums, sum)
		}
	}
	sort.Strings(sums)
	return sums, nil
}
