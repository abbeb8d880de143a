package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// The S3 tests run against a real S3-compatible server started on
// loopback: versitygw with its posix backend, pinned as a tool of the
// module in testdata/s3server.
const (
	s3Access = "pqrepro-test"
	s3Secret = "pqrepro-test-secret"
	s3Bucket = "blobs"
)

var (
	buildOnce sync.Once
	gwBin     string
	gwErr     error
)

// versitygw returns the server's executable, built by `go tool` (which
// keeps it in the Go build cache, so only the first run of the tests on a
// machine pays for the build), or skips the test, saying why.
func versitygw(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		cmd := exec.Command(gobin, "-C", filepath.Join("testdata", "s3server"), "tool", "-n", "versitygw")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			gwErr = fmt.Errorf("go tool -n versitygw: %w\n%s", err, stderr.String())
			return
		}
		gwBin = strings.TrimSpace(string(out))
	})
	if gwErr != nil {
		t.Skipf("cannot build the S3 test server (needs the Go toolchain and the module proxy or a filled module cache): %v", gwErr)
	}
	return gwBin
}

// startS3 starts versitygw on a free loopback port with a fresh posix
// root and an empty bucket, and returns a remote on it.
func startS3(t testing.TB, prefix string) *S3 {
	t.Helper()
	bin := versitygw(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	root := t.TempDir()
	cmd := exec.Command(bin, "--access", s3Access, "--secret", s3Secret, "--port", addr, "posix", root)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("versitygw log:\n%s", log.String())
		}
	})
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i == 200 {
			t.Fatalf("versitygw did not listen on %s: %v\n%s", addr, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	s, err := OpenS3(Config{Kind: "s3", URL: "http://" + addr, Bucket: s3Bucket, Prefix: prefix,
		Creds: Credentials{AccessKeyID: s3Access, SecretAccessKey: s3Secret}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Client.MakeBucket(context.Background(), s3Bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestS3PushPull(t *testing.T) {
	ctx := context.Background()
	rem := startS3(t, "pqrepro/")
	local := newStore(t)
	small, _ := blob(1000, 30)
	big, _ := blob(12<<20, 31) // multipart with 5 MiB parts
	rem.PartSize = 5 << 20
	sums := []string{storeBlob(t, local, small), storeBlob(t, local, big)}
	if _, err := Push(ctx, local, rem, sums, fast(t)); err != nil {
		t.Fatal(err)
	}
	if res, err := Push(ctx, local, rem, sums, fast(t)); err != nil || res[1].Skipped != "on remote" {
		t.Errorf("second push %+v %v: want skipped", res, err)
	}
	list, err := rem.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("List = %v, %v", list, err)
	}
	if _, err := rem.Client.StatObject(ctx, s3Bucket, "pqrepro/sha256/"+sums[0][:2]+"/"+sums[0][2:], minio.StatObjectOptions{}); err != nil {
		t.Errorf("object not at <prefix>sha256/<2>/<62>: %v", err)
	}
	fresh := newStore(t)
	if _, err := Pull(ctx, fresh, rem, sums, fast(t)); err != nil {
		t.Fatal(err)
	}
	assertStored(t, fresh, sums[0], small)
	assertStored(t, fresh, sums[1], big)

	_, missing := blob(10, 32)
	if _, err := Pull(ctx, fresh, rem, []string{missing}, fast(t)); !errors.Is(err, ErrNotFound) {
		t.Errorf("pull of a missing blob: %v, want ErrNotFound", err)
	}
	sts := Survey(ctx, newStore(t), rem, []Ref{{Sum: sums[0], By: []string{"a"}}, {Sum: missing, By: []string{"b"}}})
	if sts[0].State != RemoteOnly || sts[0].Size != 1000 || sts[1].State != Absent {
		t.Errorf("Survey = %+v", sts)
	}
}

// TestS3PushInterrupted: a multipart upload that dies after its first
// part leaves no object and no unfinished upload in the bucket.
func TestS3PushInterrupted(t *testing.T) {
	ctx := context.Background()
	rem := startS3(t, "")
	rem.PartSize = 5 << 20
	b, sum := blob(12<<20, 33)
	if err := rem.Put(ctx, sum, &failAfter{bytes.NewReader(b), 7 << 20}, int64(len(b))); err == nil {
		t.Fatal("interrupted Put succeeded")
	}
	if _, err := rem.Stat(ctx, sum); !errors.Is(err, ErrNotFound) {
		t.Fatalf("object visible after an interrupted upload: %v", err)
	}
	for u := range rem.Client.ListIncompleteUploads(ctx, s3Bucket, "", true) {
		t.Errorf("unfinished upload left behind: %+v", u)
	}
	// A single-PUT upload cut short is refused by the server as well.
	small, ssum := blob(1<<20, 34)
	if err := rem.Put(ctx, ssum, &failAfter{bytes.NewReader(small), 1000}, int64(len(small))); err == nil {
		t.Fatal("short single PUT succeeded")
	}
	if _, err := rem.Stat(ctx, ssum); !errors.Is(err, ErrNotFound) {
		t.Fatalf("object visible after a failed PUT: %v", err)
	}
}

// TestS3Resume: a pull interrupted mid-blob continues with a ranged GET.
func TestS3Resume(t *testing.T) {
	ctx := context.Background()
	rem := startS3(t, "")
	local := newStore(t)
	b, _ := blob(4<<20, 35)
	sum := storeBlob(t, local, b)
	if _, err := Push(ctx, local, rem, []string{sum}, fast(t)); err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	cctx, cancel := context.WithCancel(ctx)
	if _, err := Pull(cctx, st, cancelAfter(rem, 1<<20, cancel), []string{sum}, fast(t)); !errors.Is(err, context.Canceled) {
		t.Fatalf("pull: %v, want context.Canceled", err)
	}
	assertNotStored(t, st, sum)
	res, err := Pull(ctx, st, rem, []string{sum}, fast(t))
	if err != nil {
		t.Fatal(err)
	}
	assertStored(t, st, sum, b)
	if res[0].Resumed != 1<<20 || res[0].Bytes != int64(len(b)-1<<20) {
		t.Errorf("result %+v: want 1 MiB resumed, the rest fetched", res[0])
	}
}

func TestS3Credentials(t *testing.T) {
	ctx := context.Background()
	rem := startS3(t, "")
	bad, err := OpenS3(Config{Kind: "s3", URL: "http://" + rem.Client.EndpointURL().Host, Bucket: s3Bucket,
		Creds: Credentials{AccessKeyID: s3Access, SecretAccessKey: "wrong"}})
	if err != nil {
		t.Fatal(err)
	}
	b, sum := blob(100, 36)
	err = bad.Put(ctx, sum, bytes.NewReader(b), 100)
	if err == nil || !strings.Contains(err.Error(), "PQREPRO_S3_SECRET_ACCESS_KEY") {
		t.Fatalf("Put with a wrong secret: %v, want advice on the credentials", err)
	}
}

// TestS3PushCorruptRemote: an object overwritten with zeros of the same
// size on the real S3 server is uploaded again, not trusted.
func TestS3PushCorruptRemote(t *testing.T) {
	ctx := context.Background()
	rem := startS3(t, "p/")
	local := newStore(t)
	b, _ := blob(300_000, 35)
	sum := storeBlob(t, local, b)
	if _, err := Push(ctx, local, rem, []string{sum}, fast(t)); err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, len(b))
	if _, err := rem.Client.PutObject(ctx, s3Bucket, rem.key(sum), bytes.NewReader(zeros), int64(len(zeros)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := Push(ctx, local, rem, []string{sum}, fast(t))
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Skipped != "" {
		t.Fatalf("push trusted the corrupt object: %+v", res[0])
	}
	fresh := newStore(t)
	if _, err := Pull(ctx, fresh, rem, []string{sum}, fast(t)); err != nil {
		t.Fatal(err)
	}
	assertStored(t, fresh, sum, b)
}

// TestS3PushLeftovers: a push killed mid-multipart-upload leaves an
// unfinished upload on the real S3 server; Leftovers lists it once it is
// older than LeftoverAge, and the next push aborts it.
func TestS3PushLeftovers(t *testing.T) {
	ctx := context.Background()
	rem := startS3(t, "p/")
	local := newStore(t)
	b, _ := blob(1000, 36)
	sum := storeBlob(t, local, b)
	id, err := (minio.Core{Client: rem.Client}).NewMultipartUpload(ctx, s3Bucket, rem.key(sum), minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rem.LeftoverAge = time.Hour
	if left, err := rem.Leftovers(ctx); err != nil || len(left) != 0 {
		t.Fatalf("Leftovers = %v, %v: a young upload may be running", left, err)
	}
	rem.LeftoverAge = time.Nanosecond
	left, err := rem.Leftovers(ctx)
	if err != nil || len(left) != 1 || !strings.Contains(left[0], id) {
		t.Fatalf("Leftovers = %v, %v; want the killed upload %s", left, err, id)
	}
	if _, err := Push(ctx, local, rem, []string{sum}, fast(t)); err != nil {
		t.Fatal(err)
	}
	for u := range rem.Client.ListIncompleteUploads(ctx, s3Bucket, "", true) {
		t.Errorf("unfinished upload left after the next push: %+v", u)
	}
}
