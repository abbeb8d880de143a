package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/internal/remote"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
)

// dataRepo makes a repository root with one run that refers to a stored
// capture, a dir remote configured in remote.toml, and returns the root,
// the remote's folder and the capture's hash and bytes.
func dataRepo(t *testing.T) (root, remoteDir, sum string, capture []byte) {
	t.Helper()
	root = t.TempDir()
	remoteDir = filepath.Join(t.TempDir(), "share")
	os.MkdirAll(remoteDir, 0o755)
	capture = bytes.Repeat([]byte("pcapng "), 50_000)
	h := sha256.Sum256(capture)
	sum = hex.EncodeToString(h[:])
	run := filepath.Join(root, "data", "tls", "20260101T000000Z-quick")
	os.MkdirAll(run, 0o755)
	meta, _ := json.Marshal(map[string]any{"study": "tls", "files": map[string]string{"capture.pcapng": sum}})
	os.WriteFile(filepath.Join(run, "meta.json"), meta, 0o644)
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644)
	os.WriteFile(filepath.Join(root, "remote.toml"), []byte("kind = \"dir\"\nurl = \""+remoteDir+"\"\n"), 0o644)
	return root, remoteDir, sum, capture
}

func TestDataPushPullStatus(t *testing.T) {
	root, remoteDir, sum, capture := dataRepo(t)
	ctx := context.Background()
	var out bytes.Buffer
	cfg := Config{Root: root, Log: &out}

	printDataStatus(ctx, cfg)
	if !strings.Contains(out.String(), "1 blobs: 1 absent") {
		t.Errorf("status before anything:\n%s", out.String())
	}

	src := filepath.Join(t.TempDir(), "capture")
	os.WriteFile(src, capture, 0o644)
	store := repro.OpenStore(root, "")
	if _, err := store.Put(src); err != nil {
		t.Fatal(err)
	}
	if err := DataPush(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(remoteDir, "sha256", sum[:2], sum[2:])); err != nil {
		t.Fatalf("not pushed: %v", err)
	}

	os.RemoveAll(store.Dir) // a fresh clone
	out.Reset()
	printDataStatus(ctx, cfg)
	if s := out.String(); !strings.Contains(s, "1 remote-only") || !strings.Contains(s, "data/tls/20260101T000000Z-quick: capture.pcapng") || !strings.Contains(s, "mage data:pull") {
		t.Errorf("status after push, store emptied:\n%s", s)
	}
	out.Reset()
	if err := DataPull(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := store.Check(sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "pulled "+sum[:12]) {
		t.Errorf("pull printed no line for the blob:\n%s", out.String())
	}
	out.Reset()
	printDataStatus(ctx, cfg)
	if !strings.Contains(out.String(), "1 blobs: 1 present") {
		t.Errorf("status after pull:\n%s", out.String())
	}
}

func TestDataNoRemote(t *testing.T) {
	root, _, _, _ := dataRepo(t)
	os.Remove(filepath.Join(root, "remote.toml"))
	var out bytes.Buffer
	cfg := Config{Root: root, Log: &out}
	printDataStatus(context.Background(), cfg)
	if !strings.Contains(out.String(), "none configured") {
		t.Errorf("status without remote.toml:\n%s", out.String())
	}
	err := DataPull(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "remote.toml") {
		t.Errorf("pull without remote.toml: %v, want it to name the file to write", err)
	}
}

// TestDataRemoteFolderAbsent: on a fresh clone the folder remote.toml
// names does not exist; status says so and how to fix it, once.
func TestDataRemoteFolderAbsent(t *testing.T) {
	root, remoteDir, _, _ := dataRepo(t)
	os.RemoveAll(remoteDir)
	var out bytes.Buffer
	printDataStatus(context.Background(), Config{Root: root, Log: &out})
	s := out.String()
	if !strings.Contains(s, "remote folder absent: name a real one in remote.toml") || strings.Contains(s, "[remote: dir") {
		t.Errorf("status with the remote's folder missing:\n%s", s)
	}
	if strings.Count(s, remoteDir) != 1 {
		t.Errorf("the missing folder should be named once:\n%s", s)
	}
}

// TestDataPushLeftovers: a push killed mid-upload leaves an .incoming-*
// file on the dir remote; status lists it and clean removes it.
func TestDataPushLeftovers(t *testing.T) {
	root, remoteDir, sum, _ := dataRepo(t)
	dir := filepath.Join(remoteDir, "sha256", sum[:2])
	os.MkdirAll(dir, 0o755)
	left := filepath.Join(dir, ".incoming-4242")
	os.WriteFile(left, []byte("half a blob"), 0o644)
	lines := strings.Join(FindLeftovers(Config{Root: root}).Lines(), "\n")
	if !strings.Contains(lines, ".incoming-4242") || !strings.Contains(lines, "data:push") {
		t.Errorf("status does not list the killed push's leftover:\n%s", lines)
	}
	var out bytes.Buffer
	if err := Clean(Config{Root: root, Log: &out}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("clean left %s: %v\n%s", left, err, out.String())
	}
	if lines := FindLeftovers(Config{Root: root}).Lines(); strings.Contains(strings.Join(lines, "\n"), ".incoming-") {
		t.Errorf("still listed after clean: %v", lines)
	}
}

// TestDataStatusUnreachableRemoteSaysItOnce: 40 blobs on a remote whose
// port refuses connections give a few lines, not one (or two) per blob:
// after three lookups fail alike the remote is asked no more.
func TestDataStatusUnreachableRemoteSaysItOnce(t *testing.T) {
	root, _, _, _ := dataRepo(t)
	runWithMissingBlobs(t, root, 40)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: every connection is refused
	os.WriteFile(filepath.Join(root, "remote.toml"), []byte("kind = \"http\"\nurl = \"http://"+addr+"/\"\n"), 0o644)
	var out bytes.Buffer
	printDataStatus(context.Background(), Config{Root: root, Log: &out})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	t.Logf("%d lines:\n%s", len(lines), out.String())
	if len(lines) > 6 || !strings.Contains(out.String(), "41 blobs: 41 unknown") || !strings.Contains(out.String(), "unknown (38 blobs)") {
		t.Errorf("%d lines for 41 blobs on an unreachable remote, want at most 6 and one for the 38 not asked:\n%s", len(lines), out.String())
	}
}

// TestDataPullChecksRecordedSize: a blob whose size the run's manifest
// records is not fetched from a remote that holds another size under
// its name.
func TestDataPullChecksRecordedSize(t *testing.T) {
	root, remoteDir, sum, capture := dataRepo(t)
	dst := filepath.Join(remoteDir, "sha256", sum[:2], sum[2:])
	os.MkdirAll(filepath.Dir(dst), 0o755)
	os.WriteFile(dst, capture, 0o644)
	run := filepath.Join(root, "data", "tls", "20260101T000000Z-quick")
	man := "# pqrepro run manifest tls/20260101T000000Z-quick\n# blob " + sum + "  capture.pcapng\n" +
		fmt.Sprintf("# blob-size %s %d\n", sum, len(capture)-1)
	os.WriteFile(filepath.Join(run, repro.ManifestFile), []byte(man), 0o644)
	var out bytes.Buffer
	err := DataPull(context.Background(), Config{Root: root, Log: &out})
	if !errors.Is(err, remote.ErrSizeMismatch) {
		t.Fatalf("pull of a blob the remote holds at another size than recorded: %v\n%s", err, out.String())
	}
	if repro.OpenStore(root, "").Has(sum) {
		t.Error("the blob was stored")
	}
}

// TestDataPullAbandonSaidOnce: a pull from a refusing port names each
// failed blob once and the abandonment once, not every error twice.
func TestDataPullAbandonSaidOnce(t *testing.T) {
	root, _, _, _ := dataRepo(t)
	runWithMissingBlobs(t, root, 10)
	os.WriteFile(filepath.Join(root, "remote.toml"), []byte("kind = \"http\"\nurl = \"http://127.0.0.1:1/\"\n"), 0o644)
	var out bytes.Buffer
	cfg := Config{Root: root, Log: &out}
	err := dataTransfer(context.Background(), cfg, "pull", func(ctx context.Context, st *repro.Store, rem remote.Remote, sums []string, o remote.Options) ([]remote.Result, error) {
		o.Retries, o.Backoff = -1, time.Millisecond
		return remote.Pull(ctx, st, rem, sums, o)
	})
	if !errors.Is(err, remote.ErrAbandoned) {
		t.Fatalf("error %v, want %v", err, remote.ErrAbandoned)
	}
	msg := err.Error()
	if n := strings.Count(msg, "connection refused"); n != 3+1 { // 3 blobs, and the abandonment's cause
		t.Errorf("%d mentions of the refusal, want 4:\n%s", n, msg)
	}
	if n := strings.Count(msg, remote.ErrAbandoned.Error()); n != 1 {
		t.Errorf("the abandonment said %d times:\n%s", n, msg)
	}
	if !strings.Contains(out.String(), "8 not tried: the remote was abandoned") {
		t.Errorf("output does not count the blobs not tried:\n%s", out.String())
	}
}

// runWithMissingBlobs adds a Study B run folder to the repository at root
// whose meta.json names n stored blobs that the store does not hold.
func runWithMissingBlobs(t *testing.T, root string, n int) {
	t.Helper()
	files := map[string]string{}
	for i := range n {
		h := sha256.Sum256([]byte{byte(i)})
		files[fmt.Sprintf("c%02d.pcapng", i)] = hex.EncodeToString(h[:])
	}
	run := filepath.Join(root, "data", "net", "20260101T000000Z-quick")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(map[string]any{"study": "net", "files": files})
	if err := os.WriteFile(filepath.Join(run, "meta.json"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDataRemoteSettingNamesNoFile is issue 44's item 7: with
// PQREPRO_REMOTE naming a file that does not exist, status says so and
// what to do, not "none configured", and a pull names the variable.
func TestDataRemoteSettingNamesNoFile(t *testing.T) {
	root, _, _, _ := dataRepo(t)
	s := settings.Defaults()
	s.Remote = filepath.Join(root, "mirror.toml")
	var out bytes.Buffer
	cfg := Config{Root: root, Log: &out, Settings: &s}
	printDataStatus(context.Background(), cfg)
	got := out.String()
	if strings.Contains(got, "none configured") || !strings.Contains(got, "PQREPRO_REMOTE") || !strings.Contains(got, "mirror.toml") || !strings.Contains(got, "unset") {
		t.Errorf("status with PQREPRO_REMOTE naming no file:\n%s", got)
	}
	err := DataPull(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "PQREPRO_REMOTE") || !strings.Contains(err.Error(), "mirror.toml") {
		t.Errorf("pull with PQREPRO_REMOTE naming no file: %v", err)
	}
}
