package agreement

import (
	"strings"
	"testing"
)

// TestFingerprintCPUFlags: two synthetic meta.json, the second's host
// with or without the CPU flags: the same flags match; another crypto
// flag or another flags line is a difference; flags recorded on one side
// only are unknown (said by Unknown), not a difference.
func TestFingerprintCPUFlags(t *testing.T) {
	const host = `"cpu_model":"Intel(R) Xeon(R) Processor","cores":2,"kernel":"Linux 6.18","arch":"amd64","memory_kb":24683584`
	flags := func(avx512f, sum string) string {
		return `,"cpu_flags":{"adx":true,"aes":true,"avx":true,"avx2":true,"avx512f":` + avx512f + `,"bmi2":true,"pclmulqdq":true,"sha_ni":false},"cpu_flags_sha256":"` + sum + `"`
	}
	meta := func(extra string) []byte {
		return []byte(`{"host":{` + host + extra + `},"go":{"version":"go1.27.3"}}`)
	}
	withFlags := flags("true", "aaaaaaaaaaaaaaaa")
	for _, tc := range []struct {
		name     string
		ref, now string
		differs  string // a phrase of Differences; "" for none
		unknown  string // a phrase of Unknown; "" for none
	}{
		{"the same flags", withFlags, withFlags, "", ""},
		{"avx512f absent", withFlags, flags("false", "bbbbbbbbbbbbbbbb"), "CPU flag avx512f present vs absent", ""},
		{"another flags line only", withFlags, flags("true", "bbbbbbbbbbbbbbbb"), "CPU flags line differs (sha256 aaaaaaaaaaaa vs bbbbbbbbbbbb)", ""},
		{"a reference run without flags", "", withFlags, "", "cpu flags not recorded in the reference run"},
		{"a new run without flags", withFlags, "", "", "cpu flags not recorded in the new run"},
		{"neither records them", "", "", "", "cpu flags not recorded in either run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ReadFingerprint(meta(tc.ref))
			if err != nil {
				t.Fatal(err)
			}
			b, err := ReadFingerprint(meta(tc.now))
			if err != nil {
				t.Fatal(err)
			}
			d, u := strings.Join(a.Differences(b), "; "), strings.Join(a.Unknown(b), "; ")
			if (tc.differs == "") != (d == "") || !strings.Contains(d, tc.differs) {
				t.Errorf("differences %q, want %q", d, tc.differs)
			}
			if u != tc.unknown {
				t.Errorf("unknown %q, want %q", u, tc.unknown)
			}
		})
	}
}

// TestKernelBuildStringIsNoDifference: two VMs of one kind that differ
// only in the kernel's build suffix are one host; another release is not.
func TestKernelBuildStringIsNoDifference(t *testing.T) {
	fp := func(kernel string) Fingerprint {
		return Fingerprint{CPUModel: "AMD EPYC", Cores: 2, Kernel: kernel, Arch: "amd64", MemoryKB: 24683748, Go: "go1.27.3"}
	}
	for _, tc := range []struct {
		a, b, want string
	}{
		{"Linux 6.18.44-fc-v1272", "Linux 6.18.44-fc-v669", ""},
		{"Linux 6.18.44-fc-v1272", "Linux 6.18.44", ""},
		{"Linux 6.18.44-fc-v1272", "Linux 6.18.45-fc-v1272", `kernel release "Linux 6.18.44" vs "Linux 6.18.45"`},
		{"Linux 6.1.0-13-amd64", "Linux 6.12.0-13-amd64", `kernel release "Linux 6.1.0" vs "Linux 6.12.0"`},
		{"", "Linux 6.18.44", `kernel release "" vs "Linux 6.18.44"`},
	} {
		got := strings.Join(fp(tc.a).Differences(fp(tc.b)), "; ")
		if got != tc.want {
			t.Errorf("%q vs %q: differences %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
