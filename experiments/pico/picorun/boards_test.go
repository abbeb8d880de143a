package picorun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/experiments/instruments/readonly"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/pico/picoboard"
	"pqrepro/internal/provenance"
)

// boardsSpec is the committed spec on real boards: the first at port0 and
// drive0, the others as [[board.devices]].
func boardsSpec(t testing.TB, replicate bool, ports, drives []string) string {
	t.Helper()
	body := strings.Replace(committedSpec(t), "kem = 5", "kem = 2", 1)
	body = strings.Replace(body, `kind = "emulator"`, `kind = "serial"`, 1)
	body = strings.Replace(body, `port = ""`, fmt.Sprintf("port = %q", ports[0]), 1)
	body = strings.Replace(body, `bootsel = ""`, fmt.Sprintf("bootsel = %q", drives[0]), 1)
	body = strings.Replace(body, `idle_timeout = "120s"`, `idle_timeout = "5s"`, 1)
	devs := fmt.Sprintf("replicate = %v\n", replicate)
	for i := 1; i < len(ports); i++ {
		devs += fmt.Sprintf("[[board.devices]]\nport = %q\nbootsel = %q\n", ports[i], drives[i])
	}
	return strings.Replace(body, "replicate = false\n", devs, 1)
}

func TestLoadSpecBoards(t *testing.T) {
	good := boardsSpec(t, true, []string{"/dev/ttyUSB0", "/dev/ttyUSB1"}, []string{"/media/a", "/media/b"})
	s, err := LoadSpec(writeSpec(t, good))
	if err != nil {
		t.Fatal(err)
	}
	slots := s.Board.Slots(s.Workers)
	if len(slots) != 2 || slots[1].Port != "/dev/ttyUSB1" || slots[1].Bootsel != "/media/b" || slots[1].Name() != "pico-2" || !s.Board.Replicate {
		t.Errorf("slots %+v, replicate %v", slots, s.Board.Replicate)
	}
	if got := DefaultSpec().Board.Slots(2); len(got) != 2 || got[1].Name() != "rp2040js-2" {
		t.Errorf("emulator slots %+v", got)
	}
	cases := []struct{ name, old, new, want string }{
		{"typo in the table name", "\n[[board.devices]]", "\n[[board.device]]", "unknown key(s) board.device,"},
		{"typo in a device key", `port = "/dev/ttyUSB1"`, `prot = "/dev/ttyUSB1"`, "board.devices.prot"},
		{"typo in replicate", "replicate = true", "replicated = true", "board.replicated"},
		{"same port twice", `"/dev/ttyUSB1"`, `"/dev/ttyUSB0"`, "port /dev/ttyUSB0 is already board 1's"},
		{"same drive twice", `"/media/b"`, `"/media/a/"`, "bootsel /media/a/ is already board 1's"},
		{"auto with two boards", `"/media/b"`, `"auto"`, `bootsel = "auto" cannot tell 2 boards' drives apart`},
		{"device without port", `port = "/dev/ttyUSB1"`, `port = ""`, "[[board.devices]] #1: port is empty"},
		{"devices on the emulator", `kind = "serial"`, `kind = "emulator"`, `[[board.devices]] lists real boards, but [board] kind = "emulator"`},
		{"wrong type", "replicate = true", `replicate = "yes"`, "replicate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.old) {
				t.Fatalf("spec lacks %q", c.old)
			}
			_, err := LoadSpec(writeSpec(t, strings.Replace(good, c.old, c.new, 1)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestBoardIDs: a board is named by the ID its firmware reports, else its
// port's USB serial number, else its slot; two slots with one ID fail.
func TestBoardIDs(t *testing.T) {
	sys := t.TempDir()
	for i, serial := range []string{"A1", "A1", ""} {
		usb := filepath.Join(sys, "devices", fmt.Sprintf("usb%d", i))
		intf := filepath.Join(usb, "1.0")
		tty := filepath.Join(sys, "class", "tty", fmt.Sprintf("ttyACM%d", i))
		os.MkdirAll(intf, 0o755)
		os.MkdirAll(tty, 0o755)
		if serial != "" {
			os.WriteFile(filepath.Join(usb, "serial"), []byte(serial+"\n"), 0o644)
		}
		os.Symlink(intf, filepath.Join(tty, "device"))
	}
	slots := []Slot{{N: 1, Kind: BoardSerial, Port: "/dev/ttyACM0"}, {N: 2, Kind: BoardSerial, Port: "/dev/ttyACM1"}}
	if err := newBoardIDs(slots, sys).preflight(); !errors.Is(err, ErrSameBoard) || !strings.Contains(err.Error(), "same USB serial number A1") {
		t.Errorf("preflight of one adapter listed twice: %v", err)
	}
	slots[1].Port = "/dev/ttyACM2"
	ids := newBoardIDs(slots, sys)
	if err := ids.preflight(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		slot      Slot
		uid, want string
	}{
		{slots[0], "", "A1"},                               // USB serial number
		{slots[1], "", "pico-2"},                           // nothing reported: the slot
		{slots[1], "e661410403593b2b", "e661410403593b2b"}, // the firmware's ID wins
	} {
		if got, err := ids.identify(c.slot, c.uid); err != nil || got != c.want {
			t.Errorf("identify(%d, %q) = %q, %v; want %q", c.slot.N, c.uid, got, err, c.want)
		}
	}
	if _, err := ids.identify(slots[0], "e661410403593b2b"); !errors.Is(err, ErrSameBoard) || !strings.Contains(err.Error(), "board 2 (/dev/ttyACM2) and board 1 (/dev/ttyACM0) both report e661410403593b2b") {
		t.Errorf("two slots, one ID: %v", err)
	}
}

// withUID returns the serial log with uid=<uid> added to its start lines
// (checksums recomputed), as a firmware that reports its flash ID sends it.
func withUID(t testing.TB, raw []byte, uid string) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, s := range strings.SplitAfter(string(raw), "\n") {
		l, err := picodata.ParseLine(strings.TrimRight(s, "\r\n"))
		if err != nil || l.Kind != picodata.KindStart {
			out.WriteString(s)
			continue
		}
		out.WriteString(picodata.FormatLine(l.Seq, l.Kind, append(l.Fields, picodata.Field{Key: "uid", Value: uid})...) + "\r\n")
	}
	return out.Bytes()
}

// fakeBoard is a pseudo-terminal standing in for a board's serial port
// and a directory holding INFO_UF2.TXT for its BOOTSEL drive.
type fakeBoard struct {
	master *os.File
	port   string
	drive  string
	send   []byte // written to the port once the image is copied to the drive
	cut    bool   // send only half, then close the port: the board disappears
}

func newFakeBoards(t *testing.T, n int) []*fakeBoard {
	t.Helper()
	var out []*fakeBoard
	for i := 0; i < n; i++ {
		master, slave, err := picoboard.OpenPTY()
		if err != nil {
			t.Skipf("no pseudo-terminal: %v", err)
		}
		t.Cleanup(func() { master.Close() })
		// Raw mode before anything is written, as a USB-UART adapter is.
		hold, err := picoboard.OpenSerial(slave, picoboard.DefaultBaud)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hold.Close() })
		drive := t.TempDir()
		os.WriteFile(filepath.Join(drive, "INFO_UF2.TXT"), []byte("UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: RPI-RP2\n"), 0o644)
		out = append(out, &fakeBoard{master: master, port: slave, drive: drive})
	}
	return out
}

// runBoards runs the mlkem image on the fake boards: when the log says an
// image was copied to a board's drive, that board "starts" and sends its
// serial log.
func runBoards(t *testing.T, boards []*fakeBoard, replicate bool) (string, string, error) {
	t.Helper()
	var ports, drives []string
	for _, b := range boards {
		ports = append(ports, b.port)
		drives = append(drives, b.drive)
	}
	cfg := RunConfig{Config: runlife.Config{Profile: "quick", SpecPath: writeSpec(t, boardsSpec(t, replicate, ports, drives)), DataDir: t.TempDir()},
		Images: []string{"mlkem"}, bootselWait: time.Second}
	var log syncBuffer
	var once sync.Map
	log.on = func(line string) {
		for _, b := range boards {
			if !strings.Contains(line, "copied mlkem.uf2 to "+b.drive+";") {
				continue
			}
			if _, dup := once.LoadOrStore(b, true); dup {
				continue
			}
			go func() {
				if b.cut {
					b.master.Write(b.send[:len(b.send)/2])
					b.master.Close()
					return
				}
				b.master.Write(b.send)
			}()
		}
	}
	cfg.Log = &log
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := Run(ctx, cfg)
	return cfg.DataDir, log.String(), err
}

// testSeveralBoards runs the real-board path on several pseudo-terminals
// and BOOTSEL directories, with the serial log of an emulator run; raw is
// that log. Untested on hardware: no board is attached here.
func testSeveralBoards(t *testing.T, raw []byte) {
	t.Run("replicated on two boards", func(t *testing.T) {
		boards := newFakeBoards(t, 2)
		boards[0].send = withUID(t, raw, "e6614103e73f2c2a")
		boards[1].send = raw // a firmware that reports no ID: named by its slot
		dataDir, log, err := runBoards(t, boards, true)
		if err != nil {
			t.Fatalf("%v\n%s", err, log)
		}
		runs := runDirs(t, dataDir)
		if len(runs) != 1 {
			t.Fatalf("runs %v", runs)
		}
		dir := filepath.Join(dataDir, Study, runs[0])
		for dirName, want := range map[string]string{"mlkem@1": "e6614103e73f2c2a", "mlkem@2": "pico-2"} {
			var rec ImageRecord
			b, err := os.ReadFile(filepath.Join(dir, dirName, picodata.ImageFile))
			if err != nil || json.Unmarshal(b, &rec) != nil || rec.Board != want || rec.Name != "mlkem" {
				t.Errorf("%s: board %q, want %q (%v)", dirName, rec.Board, want, err)
			}
		}
		meta, err := provenance.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		bs, _ := meta.Measured["boards"].(map[string]any)
		b2, _ := bs["pico-2"].(map[string]any)
		if len(bs) != 2 || b2 == nil || fmt.Sprint(b2["images"]) != "[mlkem@2]" || meta.Measured["replicate"] != true ||
			!strings.HasPrefix(meta.Board, "2 Raspberry Pi Picos (RP2040) on pts/") {
			t.Errorf("meta board %q, boards %v", meta.Board, meta.Measured["boards"])
		}
		if !strings.Contains(log, "each on every one of 2 board(s) (pico-1 on pts/") {
			t.Errorf("plan line:\n%s", log)
		}
	})
	// faults: each fails the replicated run naming the board, and leaves
	// no run folder.
	faults := []struct {
		name   string
		setup  func(t *testing.T, boards []*fakeBoard)
		target error
		want   []string
	}{
		{"a board disappears mid-run", func(t *testing.T, b []*fakeBoard) {
			b[0].send = raw
			b[1].send, b[1].cut = raw, true
		}, nil, []string{"image mlkem on board 2 (", "Port has been closed"}},
		{"two boards report the same ID", func(t *testing.T, b []*fakeBoard) {
			b[0].send = withUID(t, raw, "e6614103e73f2c2a")
			b[1].send = b[0].send
		}, ErrSameBoard, []string{"both report e6614103e73f2c2a"}},
		{"a BOOTSEL directory is missing", func(t *testing.T, b []*fakeBoard) {
			b[0].send, b[1].send = raw, raw
			b[1].drive = filepath.Join(t.TempDir(), "not-mounted")
		}, picoboard.ErrNoBootselDrive, []string{"on board 2 (", "not-mounted holds no INFO_UF2.TXT"}},
		{"a BOOTSEL directory is read-only", func(t *testing.T, b []*fakeBoard) {
			b[0].send, b[1].send = raw, raw
			readonly.Dir(t, b[1].drive)
		}, nil, []string{"on board 2 (", "is not writable", "remount it read-write"}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			boards := newFakeBoards(t, 2)
			f.setup(t, boards)
			dataDir, log, err := runBoards(t, boards, true)
			if err == nil || (f.target != nil && !errors.Is(err, f.target)) {
				t.Fatalf("error %v, want %v\n%s", err, f.target, log)
			}
			for _, w := range f.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %v lacks %q", err, w)
				}
			}
			t.Logf("error: %.300v", err)
			if runs := runDirs(t, dataDir); len(runs) != 0 {
				t.Errorf("a failed run left %v", runs)
			}
		})
	}
	t.Run("spread over two boards", func(t *testing.T) {
		boards := newFakeBoards(t, 2)
		boards[0].send, boards[1].send = raw, raw
		dataDir, log, err := runBoards(t, boards, false)
		if err != nil {
			t.Fatalf("%v\n%s", err, log)
		}
		runs := runDirs(t, dataDir)
		es, _ := os.ReadDir(filepath.Join(dataDir, Study, runs[0]))
		var names []string
		for _, e := range es {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
		if strings.Join(names, ",") != "mlkem" {
			t.Errorf("a spread run of one image wrote %v, want [mlkem]", names)
		}
	})
}

// TestRunReplicatedEmulator runs the ML-KEM image on two rp2040js
// instances with replicate = true: the records are tagged rp2040js-1 and
// rp2040js-2 and, the emulator being deterministic, identical.
func TestRunReplicatedEmulator(t *testing.T) {
	needTools(t)
	body := strings.Replace(committedSpec(t), "kem = 5", "kem = 2", 1)
	body = strings.Replace(body, "replicate = false", "replicate = true", 1)
	body = strings.Replace(body, "host_timings = true", "host_timings = false", 1)
	dataDir := t.TempDir()
	var log syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := Run(ctx, RunConfig{Config: runlife.Config{Profile: "quick", SpecPath: writeSpec(t, body), DataDir: dataDir, Log: &log}, Images: []string{"mlkem"}, Workers: 2})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	dir := filepath.Join(dataDir, Study, runDirs(t, dataDir)[0])
	var ms [2][]byte
	for i := range 2 {
		sub := filepath.Join(dir, fmt.Sprintf("mlkem@%d", i+1))
		var rec ImageRecord
		b, _ := os.ReadFile(filepath.Join(sub, picodata.ImageFile))
		if err := json.Unmarshal(b, &rec); err != nil || rec.Board != fmt.Sprintf("rp2040js-%d", i+1) {
			t.Errorf("%s: board %q (%v)", sub, rec.Board, err)
		}
		ms[i], _ = os.ReadFile(filepath.Join(sub, picodata.MeasurementsFile))
	}
	if len(ms[0]) == 0 || !bytes.Equal(ms[0], ms[1]) {
		t.Error("two emulator instances recorded different measurements of one image")
	}
}

// TestRunRejectsBoardWithoutBootsel: a board without a BOOTSEL drive can
// run only the image it already has, so a run of several images is
// refused before anything is built.
func TestRunRejectsBoardWithoutBootsel(t *testing.T) {
	body := boardsSpec(t, false, []string{"/dev/ttyUSB0", "/dev/ttyUSB1"}, []string{"/media/a", ""})
	_, err := Run(context.Background(), RunConfig{Config: runlife.Config{Profile: "quick", SpecPath: writeSpec(t, body), DataDir: t.TempDir()}, Images: []string{"mlkem", "classic"}})
	if err == nil || !strings.Contains(err.Error(), "board 2 (/dev/ttyUSB1) has no bootsel") {
		t.Errorf("error %v", err)
	}
}
