package dockernet

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var timeZero = time.Unix(0, 0)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestParseLdd(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      []string
		err       string
	}{
		{"dynamic", "\tlinux-vdso.so.1 (0x00007ffd1b1f2000)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2b8a000000)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f2b8a3a0000)\n",
			[]string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}, ""},
		{"static", "\tnot a dynamic executable\n", nil, ""},
		{"static-pie", "\tstatically linked\n", nil, ""},
		{"duplicates", "libc.so.6 => /lib/libc.so.6 (0x1)\nlibc.so.6 => /lib/libc.so.6 (0x1)\n", []string{"/lib/libc.so.6"}, ""},
		{"no address", "libz.so.1 => /lib/libz.so.1\n", []string{"/lib/libz.so.1"}, ""},
		{"missing", "libssl.so.3 => not found\n", nil, "libssl.so.3 => not found"},
		{"vdso only", "linux-vdso.so.1 =>  (0x00007ffd)\n", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLdd(tc.out)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("parseLdd = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// FuzzParseLdd: any output gives absolute, distinct paths or an error,
// never a panic.
func FuzzParseLdd(f *testing.F) {
	f.Add("\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x1)\n\t/lib64/ld-linux-x86-64.so.2 (0x2)\n")
	f.Add("not a dynamic executable")
	f.Add("x => not found\n=> (\n(")
	f.Fuzz(func(t *testing.T, out string) {
		libs, err := parseLdd(out)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, l := range libs {
			if !strings.HasPrefix(l, "/") || seen[l] || strings.ContainsAny(l, "\n") {
				t.Fatalf("bad path %q in %q", l, libs)
			}
			seen[l] = true
		}
	})
}

// listing is a tar's entries, one line each: type, mode, size, time, name.
func listing(t *testing.T, b []byte) string {
	var sb strings.Builder
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return sb.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sb, "%c %o %d %d %d/%d %s\n", h.Typeflag, h.Mode, h.Size, h.ModTime.Unix(), h.Uid, h.Gid, h.Name)
	}
}

// TestImageTar: the image tar is the same bytes whatever the files'
// order and times on the host, parents come before their files, a link is
// stored as its target's bytes; the listing is
// testdata/image-listing.golden (go test ./experiments/tls/dockernet -run
// TestImageTar -update).
func TestImageTar(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o700)
		return p
	}
	prog, lib, pause := write("prog", "program"), write("lib", "library"), write("pause", "idle")
	link := filepath.Join(dir, "ld")
	os.Symlink(lib, link)
	files := []imageFile{{name: ProgramPath, src: prog}, {name: "/lib64/ld-linux-x86-64.so.2", src: link}, {name: "/lib/x86_64-linux-gnu/libc.so.6", src: lib}, {name: PausePath, src: pause}}
	var a, b bytes.Buffer
	names, err := writeImageTar(&a, append([]imageFile(nil), files...))
	if err != nil {
		t.Fatal(err)
	}
	os.Chtimes(prog, timeZero.AddDate(30, 0, 0), timeZero.AddDate(30, 0, 0))
	rev := []imageFile{files[3], files[2], files[1], files[0]}
	if _, err := writeImageTar(&b, rev); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two writes of the same files differ")
	}
	if want := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2", PausePath, ProgramPath}; !reflect.DeepEqual(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
	got := listing(t, a.Bytes())
	golden := filepath.Join("testdata", "image-listing.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./experiments/tls/dockernet -run TestImageTar -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("listing:\n%s\nwant:\n%s", got, want)
	}
	if _, err := writeImageTar(io.Discard, []imageFile{files[0], files[0]}); err == nil {
		t.Error("a file listed twice was accepted")
	}
	if _, err := writeImageTar(io.Discard, []imageFile{{name: "/x", src: filepath.Join(dir, "missing")}}); err == nil {
		t.Error("a missing file was accepted")
	}
}

func TestProjectPID(t *testing.T) {
	for _, tc := range []struct {
		prefix, name, project string
		pid                   int
	}{
		{"pqrd", "pqrd1234-1-567", "pqrd1234-1", 1234},
		{"pqrd", "pqrd1234-12", "pqrd1234-12", 1234},
		{"pqrd", "pqrdt1234-1-5", "", 0},
		{"pqrdt", "pqrdt99-3-x", "pqrdt99-3", 99},
		{"pqrd", "pqrd-1-2", "", 0},
		{"pqrd", "xpqrd12-1", "", 0},
		{"pqrd", "pqrd12", "", 0},
	} {
		p, pid := projectPID(tc.prefix, tc.name)
		if p != tc.project || pid != tc.pid {
			t.Errorf("projectPID(%q, %q) = %q, %d; want %q, %d", tc.prefix, tc.name, p, pid, tc.project, tc.pid)
		}
	}
}
