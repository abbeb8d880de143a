package tlsrun

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"pqrepro/internal/treelock"
)

// certDirPrefix begins the name of the temporary folder that holds the
// OpenSSL stacks' PEM files during a run: certDirPrefix<PID>-<random>,
// in os.TempDir(). It is outside the run's folder because the docker
// path mounts it into containers whose user cannot traverse the run's
// private (0700) folder. A run removes it when it ends (stopStacks); a
// run killed by SIGKILL cannot, and CertLeftovers finds it by its dead
// PID.
const certDirPrefix = "pqrepro-tls-openssl-"

// makeCertDir creates the run's PEM folder, named after this process.
func makeCertDir() (string, error) {
	return os.MkdirTemp("", certDirPrefix+strconv.Itoa(os.Getpid())+"-*")
}

// CertLeftovers lists the PEM folders in os.TempDir() whose run is dead.
// Those are the folders named after a PID that no longer runs, and those of
// runs from before the folder carried its PID (no owner to ask).
func CertLeftovers() []string {
	m, _ := filepath.Glob(filepath.Join(os.TempDir(), certDirPrefix+"*"))
	var out []string
	for _, d := range m {
		rest := strings.TrimPrefix(filepath.Base(d), certDirPrefix)
		pidText, _, found := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if found && err == nil && treelock.ProcessAlive(pid) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// RemoveCertLeftovers removes what CertLeftovers lists and returns what
// it removed.
func RemoveCertLeftovers() ([]string, error) {
	var gone []string
	for _, d := range CertLeftovers() {
		if err := os.RemoveAll(d); err != nil {
			return gone, fmt.Errorf("remove the PEM folder of a killed Study A run: %w", err)
		}
		gone = append(gone, d)
	}
	return gone, nil
}
