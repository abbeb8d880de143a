package quiet

import (
	"os"
	"testing"
)

// The /proc parsers never panic, and what they accept is in range.

func FuzzParsePidStat(f *testing.F) {
	for _, p := range []string{"testdata/proc/busy-1/300/stat", "testdata/proc/busy-0/100/stat"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("1 (a) b) S 0"))
	f.Add([]byte(")("))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePidStat(b)
		if err == nil && p.ppid < 0 {
			t.Errorf("accepted ppid %d", p.ppid)
		}
	})
}

func FuzzParseStat(f *testing.F) {
	if b, err := os.ReadFile("testdata/proc/busy-0/stat"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("cpu 1 2 3 4\n"))
	f.Add([]byte("cpu0 1 2 3 4\ncpux\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, n, err := parseStat(b)
		if err == nil && (n < 1 || c.total() < c.process()) {
			t.Errorf("accepted %+v on %d CPUs", c, n)
		}
	})
}

func FuzzParseLoadavg(f *testing.F) {
	f.Add([]byte("0.52 0.58 0.59 1/467 12345\n"))
	f.Add([]byte("NaN 1 1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseLoadavg(b)
		if err == nil {
			for _, v := range l {
				if !(v >= 0 && v <= 1e9) {
					t.Errorf("accepted load %v", v)
				}
			}
		}
	})
}

func FuzzParseCPUInfoMHz(f *testing.F) {
	if b, err := os.ReadFile("testdata/proc/busy-0/cpuinfo"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range parseCPUInfoMHz(b) {
			if !(v > 0 && v < 1e6) {
				t.Errorf("accepted %v MHz", v)
			}
		}
	})
}
