package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadConfig(t *testing.T) {
	_, sum := blob(1, 1)
	tests := []struct {
		name, toml string
		want       Config
		wantErr    string
	}{
		{"dir", `kind = "dir"` + "\n" + `url = "../mirror"` + "\n" + `read_only = true`, Config{Kind: "dir", URL: "../mirror", ReadOnly: true}, ""},
		{"s3", "kind = \"s3\"\nurl = \"https://s3.example.org\"\nbucket = \"b\"\nprefix = \"p/\"\nregion = \"eu\"", Config{Kind: "s3", URL: "https://s3.example.org", Bucket: "b", Prefix: "p/", Region: "eu"}, ""},
		{"http index", "kind = \"http\"\nurl = \"https://zenodo.org/records/1/files/\"\nindex = \"idx.txt\"", Config{Kind: "http", URL: "https://zenodo.org/records/1/files/", Index: "idx.txt"}, ""},
		{"no kind", `url = "x"`, Config{}, "kind is missing"},
		{"bad kind", "kind = \"ftp\"\nurl = \"x\"", Config{}, `kind = "ftp"`},
		{"no url", `kind = "dir"`, Config{}, "url is missing"},
		{"s3 no bucket", "kind = \"s3\"\nurl = \"http://h\"", Config{}, "bucket is missing"},
		{"secret key", "kind = \"s3\"\nurl = \"http://h\"\nbucket = \"b\"\nsecret = \"x\"", Config{}, "unknown key"},
		{"credentials in url", "kind = \"http\"\nurl = \"https://u:p@h/\"", Config{}, "credentials"},
		{"index on dir", "kind = \"dir\"\nurl = \"x\"\nindex = \"i\"", Config{}, "index is for"},
		{"read_only on s3", "kind = \"s3\"\nurl = \"http://h\"\nbucket = \"b\"\nread_only = true", Config{}, "read_only is for"},
		{"bad toml", "kind = ", Config{}, "remote.toml"},
		{"prefix leaves the root", "kind = \"dir\"\nurl = \"x\"\nprefix = \"a/../../etc\"", Config{}, "leave the remote"},
		{"prefix dotdot", "kind = \"dir\"\nurl = \"x\"\nprefix = \"..\"", Config{}, "leave the remote"},
		{"absolute prefix", "kind = \"s3\"\nurl = \"http://h\"\nbucket = \"b\"\nprefix = \"/etc/\"", Config{}, "relative folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			os.WriteFile(filepath.Join(root, ConfigFile), []byte(tt.toml), 0o644)
			os.WriteFile(filepath.Join(root, "idx.txt"), []byte(sum+"  a.pcapng?download=1\n"), 0o644)
			got, _, err := LoadConfig(root, "")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			rem, err := Open(root, got)
			if err != nil {
				t.Fatal(err)
			}
			if h, ok := rem.(*HTTP); ok {
				if u, _ := h.URL(sum); u != "https://zenodo.org/records/1/files/a.pcapng?download=1" {
					t.Errorf("index URL %q", u)
				}
			}
		})
	}
}

func TestLoadConfigMissingAndOther(t *testing.T) {
	root := t.TempDir()
	if _, _, err := LoadConfig(root, ""); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no config: %v, want os.ErrNotExist", err)
	}
	other := filepath.Join(t.TempDir(), "mine.toml")
	os.WriteFile(other, []byte("kind = \"dir\"\nurl = \"/mnt/x\"\n"), 0o644)
	c, p, err := LoadConfig(root, other)
	if err != nil || p != other || c.URL != "/mnt/x" {
		t.Fatalf("another file (PQREPRO_REMOTE): %+v %s %v", c, p, err)
	}
}

// TestCommittedConfig: the repository's own remote.toml parses.
func TestCommittedConfig(t *testing.T) {
	if _, _, err := LoadConfig(filepath.Join("..", ".."), ""); err != nil {
		t.Fatal(err)
	}
}

func TestDirMissingRoot(t *testing.T) {
	d := &Dir{Root: filepath.Join(t.TempDir(), "not-mounted")}
	_, sum := blob(1, 1)
	if _, err := d.Stat(context.Background(), sum); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "mount") {
		t.Errorf("Stat on a missing folder: %v, want advice to mount it (not ErrNotFound)", err)
	}
	if err := d.Put(context.Background(), sum, strings.NewReader("x"), 1); err == nil {
		t.Error("Put created the remote's missing folder")
	}
}
