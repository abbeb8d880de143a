package picoboard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrNoBootselDrive is returned when no RPI-RP2 drive is mounted.
var ErrNoBootselDrive = errors.New("pico: no RP2040 BOOTSEL drive found")

// FlashConfig configures Flash.
type FlashConfig struct {
	// Drive is the mount point of the RPI-RP2 drive; "" searches the mount
	// table (MountsFile) for a mount holding INFO_UF2.TXT.
	Drive string
	// MountsFile lists mounted file systems; "" means /proc/self/mounts.
	MountsFile string
}

// bootselHelp says how to get a board into BOOTSEL mode.
const bootselHelp = "hold the BOOTSEL button while plugging the Pico in over USB (or while pressing RUN), " +
	"so it mounts as a USB drive named RPI-RP2 holding INFO_UF2.TXT; mount it if your system does not (e.g. mount /dev/sdX1 /mnt), or give its mount point with -drive"

// IsBootselDrive reports whether dir looks like an RP2040 bootrom drive:
// it holds INFO_UF2.TXT whose Board-ID names an RP2 (datasheet 2.8.4.1
// lists INFO_UF2.TXT and INDEX.HTM).
func IsBootselDrive(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "INFO_UF2.TXT"))
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte("RP2")) || bytes.Contains(b, []byte("UF2 Bootloader"))
}

// FindBootselDrive lists the mount points of mounted RPI-RP2 drives.
func FindBootselDrive(mountsFile string) ([]string, error) {
	if mountsFile == "" {
		mountsFile = "/proc/self/mounts"
	}
	f, err := os.Open(mountsFile)
	if err != nil {
		return nil, fmt.Errorf("read mount table %s: %w", mountsFile, err)
	}
	defer f.Close()
	var found []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		// /proc/mounts escapes spaces as \040.
		mp := strings.ReplaceAll(fields[1], `\040`, " ")
		if IsBootselDrive(mp) {
			found = append(found, mp)
		}
	}
	return found, sc.Err()
}

// Flash copies a UF2 file to the BOOTSEL drive. The firmware is a RAM-only
// UF2: the bootrom loads it into SRAM and runs it at once, with no boot2
// and no flash write (datasheet 2.8.4.2), so the board is unchanged after a
// power cycle. The UF2 is checked first and written in one piece, then
// synced; the drive disappears when the board starts the image. Returns the
// destination path. Untested on hardware here (no board attached).
func Flash(uf2Path string, cfg FlashConfig) (string, error) {
	data, err := os.ReadFile(uf2Path)
	if err != nil {
		return "", fmt.Errorf("flash: read %s: %w", uf2Path, err)
	}
	blocks, err := DecodeUF2(data)
	if err != nil {
		return "", fmt.Errorf("flash: %s is not a valid UF2: %w", uf2Path, err)
	}
	if blocks[0].Flags&UF2FlagFamilyID == 0 || blocks[0].Family != UF2FamilyRP2040 {
		return "", fmt.Errorf("flash: %s is not for the RP2040 (family 0x%08x)", uf2Path, blocks[0].Family)
	}
	drive := cfg.Drive
	if drive == "" {
		drives, err := FindBootselDrive(cfg.MountsFile)
		if err != nil {
			return "", err
		}
		switch len(drives) {
		case 0:
			return "", fmt.Errorf("%w: looked for a mounted file system holding INFO_UF2.TXT; %s", ErrNoBootselDrive, bootselHelp)
		case 1:
			drive = drives[0]
		default:
			return "", fmt.Errorf("flash: %d BOOTSEL drives mounted (%s): choose one with -drive", len(drives), strings.Join(drives, ", "))
		}
	} else if !IsBootselDrive(drive) {
		return "", fmt.Errorf("%w: %s holds no INFO_UF2.TXT; %s", ErrNoBootselDrive, drive, bootselHelp)
	}
	dst := filepath.Join(drive, filepath.Base(uf2Path))
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
			return "", fmt.Errorf("flash: %s is not writable (%w): the RPI-RP2 drive is mounted read-only or for another user; remount it read-write (e.g. mount -o remount,rw %s)", drive, err, drive)
		}
		return "", fmt.Errorf("flash: open %s: %w", dst, err)
	}
	if _, err := io.Copy(out, bytes.NewReader(data)); err != nil {
		out.Close()
		return "", fmt.Errorf("flash: write %s: %w", dst, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return "", fmt.Errorf("flash: sync %s: %w", dst, err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("flash: close %s: %w", dst, err)
	}
	return dst, nil
}
