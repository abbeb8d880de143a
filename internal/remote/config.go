package remote

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"pqrepro/internal/settings"
)

// ConfigFile is where the repository names its data remote, relative to
// the repository root. It is not under data/, whose every file is raw
// data listed in SHA256SUMS. The setting PQREPRO_REMOTE (LoadConfig's
// file) names another (a personal mirror, a test server) without editing
// it.
const ConfigFile = "remote.toml"

// A Config names a data remote. Its file is committed, so it never holds
// credentials: S3 keys come from the settings into Creds (see [OpenS3]).
//
//	kind      = "dir" | "http" | "s3"
//	url       = dir: a path (relative to the repository root, or absolute)
//	            http: the base URL; a blob is at url + prefix + sha256/<2>/<62>
//	            s3: the endpoint, e.g. "https://s3.example.org"
//	bucket    = s3 only: the bucket
//	prefix    = optional folder inside the remote, e.g. "pqrepro/"
//	region    = s3 only, optional
//	read_only = optional, dir only: refuse push (an archive's mirror)
//	index     = optional, http only: a committed file (relative to the
//	            repository root) of lines "<sha256>  <url>", for archives
//	            whose file names are not hashes (a Zenodo record's
//	            https://zenodo.org/records/<id>/files/<name>); relative
//	            URLs are resolved against url
type Config struct {
	Kind     string `toml:"kind"`
	URL      string `toml:"url"`
	Bucket   string `toml:"bucket"`
	Prefix   string `toml:"prefix"`
	Region   string `toml:"region"`
	ReadOnly bool   `toml:"read_only"`
	Index    string `toml:"index"`
	// Creds are the S3 keys, set by the caller from the settings
	// (PQREPRO_S3_* or AWS_*); never read from the file.
	Creds Credentials `toml:"-"`
}

// LoadConfig reads the remote configuration of the repository at root:
// file (the setting PQREPRO_REMOTE) if not "", else remote.toml. It
// returns an error wrapping os.ErrNotExist when there is none, saying
// which: a file the setting names that does not exist is a mistake to
// fix, not "no remote".
func LoadConfig(root, file string) (Config, string, error) {
	p := filepath.Join(root, ConfigFile)
	if file != "" {
		p = file
	}
	var c Config
	md, err := decodeConfig(p, &c)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && file != "" {
			return c, p, fmt.Errorf("remote: %s names %s: %w; fix the path, or unset %s to use %s", settings.Remote, file, os.ErrNotExist, settings.Remote, ConfigFile)
		}
		if errors.Is(err, os.ErrNotExist) {
			return c, p, fmt.Errorf("remote: no data remote configured: %w (write %s, see docs/data-remote.md)", err, ConfigFile)
		}
		return c, p, fmt.Errorf("remote: %s: %w", p, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		return c, p, fmt.Errorf("remote: %s: unknown key %q (known: kind, url, bucket, prefix, region, read_only, index)", p, un[0].String())
	}
	return c, p, c.validate(p)
}

// MaxIndexBytes bounds an http remote's index file: 16 MiB is some
// 100,000 lines of "<sha256>  <url>", 250 times the blobs the runs refer
// to today.
const MaxIndexBytes = 16 << 20

// MaxConfigBytes bounds a remote configuration file. A remote.toml is a
// few lines, and PQREPRO_REMOTE=/dev/zero (or a log file named by
// mistake) must not be read into memory whole.
const MaxConfigBytes = 64 << 10

// decodeConfig is toml.DecodeFile reading at most MaxConfigBytes of a
// regular file.
func decodeConfig(p string, c *Config) (toml.MetaData, error) {
	b, err := readSmallFile(p, MaxConfigBytes)
	if err != nil {
		return toml.MetaData{}, err
	}
	return toml.Decode(string(b), c)
}

// readSmallFile reads the regular file p if it holds at most max bytes.
// A device, a FIFO or a folder is refused before it is read.
func readSmallFile(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return readSmall(f, max)
}

// readSmall reads the regular file f (and closes it) if it holds at most
// max bytes.
func readSmall(f *os.File, max int64) ([]byte, error) {
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%v): name a file", fi.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("larger than %d bytes: not a remote configuration or index", max)
	}
	return b, nil
}

func (c Config) validate(p string) error {
	bad := func(f string, a ...any) error { return fmt.Errorf("remote: %s: "+f, append([]any{p}, a...)...) }
	switch c.Kind {
	case "dir", "http", "s3":
	case "":
		return bad("kind is missing: say kind = \"dir\", \"http\" or \"s3\"")
	default:
		return bad("kind = %q: want \"dir\", \"http\" or \"s3\"", c.Kind)
	}
	if c.URL == "" {
		return bad("url is missing (dir: a path, http: a base URL, s3: the endpoint)")
	}
	if c.Kind == "s3" && c.Bucket == "" {
		return bad("bucket is missing for kind = \"s3\"")
	}
	if c.Kind != "s3" && (c.Bucket != "" || c.Region != "") {
		return bad("bucket and region are for kind = \"s3\" only")
	}
	if c.Index != "" && c.Kind != "http" {
		return bad("index is for kind = \"http\" only")
	}
	if c.ReadOnly && c.Kind != "dir" {
		return bad("read_only is for kind = \"dir\" (http is always read-only; an S3 remote is read-only through its credentials)")
	}
	if strings.Contains(c.URL, "@") && c.Kind != "dir" {
		return bad("url must not carry credentials; S3 keys come from the environment")
	}
	if err := checkPrefix(c.Prefix); err != nil {
		return bad("%v", err)
	}
	if c.Kind != "dir" {
		if err := checkBaseURL(c.URL); err != nil {
			return bad("url = %q: %v", c.URL, err)
		}
	}
	if c.Index != "" && !filepath.IsLocal(c.Index) {
		return bad("index = %q: want a committed file inside the repository, as a relative path without \"..\"", c.Index)
	}
	return nil
}

// checkBaseURL holds an http or s3 remote's url to what is fetched. It wants
// http(s), a host, a port in 1-65535 if one is given, no credentials, no query
// or fragment. It runs before any request, so that an ftp:// or mistyped url
// fails once, at once, not once per blob after retries.
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("scheme %q: a remote is reached over http:// or https:// only: %w", u.Scheme, ErrUnsupported)
	case u.Host == "" || u.Opaque != "":
		return fmt.Errorf("no host: write http(s)://host[:port]/...: %w", ErrUnsupported)
	case u.User != nil:
		return fmt.Errorf("credentials in the URL are refused: %w", ErrUnsupported)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("a query or fragment is refused (a blob's path is appended to the url): %w", ErrUnsupported)
	}
	return checkPort(u)
}

// checkPort refuses a URL whose port is given but empty or not in
// 1-65535. (Port 0 asks the system for any port; it names no server.)
func checkPort(u *url.URL) error {
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q: want 1-65535: %w", port, ErrUnsupported)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return fmt.Errorf("empty port: %w", ErrUnsupported)
	}
	return nil
}

// checkPrefix refuses a prefix that would leave the remote's root: an
// absolute one, one with a ".." element, a backslash or a control
// character.
func checkPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if strings.HasPrefix(prefix, "/") || strings.ContainsAny(prefix, "\\") {
		return fmt.Errorf("prefix = %q: want a relative folder inside the remote, like \"pqrepro/\"", prefix)
	}
	// A server or object store decodes %2e%2e/ to ../ (and %2f to /),
	// so an escaped prefix could leave the remote's folder unseen.
	if strings.ContainsAny(prefix, "%?#") {
		return fmt.Errorf("prefix = %q: '%%', '?' and '#' are refused (a percent-escape such as %%2e%%2e is decoded by the server); write the folder's name plainly", prefix)
	}
	for _, r := range prefix {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("prefix = %q: a control character is refused", prefix)
		}
	}
	for _, el := range strings.Split(prefix, "/") {
		if el == ".." || el == "." {
			return fmt.Errorf("prefix = %q: a %q element would leave the remote's folder; name a folder inside it", prefix, el)
		}
	}
	return nil
}

// Open returns the remote a Config names; root is the repository root,
// against which relative paths are resolved.
func Open(root string, c Config) (Remote, error) {
	switch c.Kind {
	case "dir":
		dir := c.URL
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		return &Dir{Root: dir, Prefix: c.Prefix, ReadOnly: c.ReadOnly}, nil
	case "http":
		h := &HTTP{Base: c.URL, Prefix: c.Prefix}
		if c.Index != "" {
			// Opened through os.OpenInRoot: a symbolic link that leaves
			// the repository is refused like a "../" path.
			f, err := os.OpenInRoot(root, c.Index)
			if err != nil {
				return nil, fmt.Errorf("remote: index %s: %w (the index is a committed file inside the repository)", c.Index, err)
			}
			b, err := readSmall(f, MaxIndexBytes)
			if err != nil {
				return nil, fmt.Errorf("remote: index %s: %w", c.Index, err)
			}
			idx, err := parseIndex(strings.NewReader(string(b)), c.Index, c.URL)
			if err != nil {
				return nil, err
			}
			h.Index = idx
		}
		return h, nil
	case "s3":
		return OpenS3(c)
	}
	return nil, fmt.Errorf("remote: unknown kind %q", c.Kind)
}
