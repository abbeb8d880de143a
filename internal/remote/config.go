package remote

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
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
// returns an error wrapping os.ErrNotExist when there is none.
func LoadConfig(root, file string) (Config, string, error) {
	p := filepath.Join(root, ConfigFile)
	if file != "" {
		p = file
	}
	var c Config
	md, err := toml.DecodeFile(p, &c)
	if err != nil {
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
			idx, err := ReadIndex(filepath.Join(root, c.Index), c.URL)
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
