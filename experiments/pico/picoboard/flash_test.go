package picoboard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fakeDrive(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	info := "UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: RPI-RP2\n"
	if err := os.WriteFile(filepath.Join(dir, "INFO_UF2.TXT"), []byte(info), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeUF2(t *testing.T) string {
	t.Helper()
	b, err := EncodeUF2([]Segment{{0x20000000, []byte("firmware")}}, UF2FamilyRP2040)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "fw.uf2")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFlashAutoDetect(t *testing.T) {
	drive := fakeDrive(t)
	mounts := filepath.Join(t.TempDir(), "mounts")
	os.WriteFile(mounts, []byte("proc /proc proc rw 0 0\n/dev/sdb1 "+drive+" vfat rw 0 0\n"), 0o644)
	uf2 := writeUF2(t)
	dst, err := Flash(uf2, FlashConfig{MountsFile: mounts})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	want, _ := os.ReadFile(uf2)
	if filepath.Dir(dst) != drive || string(got) != string(want) {
		t.Fatalf("copied to %s, %d bytes", dst, len(got))
	}
}

func TestFlashErrors(t *testing.T) {
	uf2 := writeUF2(t)
	empty := filepath.Join(t.TempDir(), "mounts")
	os.WriteFile(empty, []byte("proc /proc proc rw 0 0\n"), 0o644)
	_, err := Flash(uf2, FlashConfig{MountsFile: empty})
	if !errors.Is(err, ErrNoBootselDrive) || !strings.Contains(err.Error(), "BOOTSEL button") || !strings.Contains(err.Error(), "INFO_UF2.TXT") {
		t.Errorf("no drive: %v", err)
	}
	if _, err := Flash(uf2, FlashConfig{Drive: t.TempDir()}); !errors.Is(err, ErrNoBootselDrive) {
		t.Errorf("drive without INFO_UF2.TXT: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.uf2")
	os.WriteFile(bad, []byte("not a uf2"), 0o644)
	if _, err := Flash(bad, FlashConfig{Drive: fakeDrive(t)}); err == nil || !strings.Contains(err.Error(), "not a valid UF2") {
		t.Errorf("bad uf2: %v", err)
	}
	other, _ := EncodeUF2([]Segment{{0, []byte{1}}}, 0x68ed2b88) // SAMD21
	op := filepath.Join(t.TempDir(), "other.uf2")
	os.WriteFile(op, other, 0o644)
	if _, err := Flash(op, FlashConfig{Drive: fakeDrive(t)}); err == nil || !strings.Contains(err.Error(), "not for the RP2040") {
		t.Errorf("other family: %v", err)
	}
	two := filepath.Join(t.TempDir(), "mounts2")
	os.WriteFile(two, []byte("a "+fakeDrive(t)+" vfat rw 0 0\nb "+fakeDrive(t)+" vfat rw 0 0\n"), 0o644)
	if _, err := Flash(uf2, FlashConfig{MountsFile: two}); err == nil || !strings.Contains(err.Error(), "choose one") {
		t.Errorf("two drives: %v", err)
	}
}
