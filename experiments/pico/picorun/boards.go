package picorun

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"pqrepro/experiments/pico/picoboard"
)

// ErrSameBoard is wrapped by the error of a run whose two boards are one.
// The two boards of the spec report the same unique ID or their
// ports have the same USB serial number.
var ErrSameBoard = errors.New("two boards report the same ID")

// boardIDs names the boards of a run and checks that they are distinct.
// A board's ID is, in order of preference, the unique ID its firmware
// reports (picoboard.Header.UID), the USB serial number of its serial port
// (picoboard.PortSerial), or its slot name (pico-<n>, rp2040js-<n>).
type boardIDs struct {
	mu     sync.Mutex
	usb    map[int]string // slot -> USB serial number of its port
	seen   map[string]int // ID -> the slot that reported it
	slots  map[int]Slot
	bySlot map[int][]string // slot -> IDs it reported, in order
}

func newBoardIDs(slots []Slot, sysRoot string) *boardIDs {
	b := &boardIDs{usb: map[int]string{}, seen: map[string]int{}, slots: map[int]Slot{}, bySlot: map[int][]string{}}
	for _, sl := range slots {
		b.slots[sl.N] = sl
		if sl.Kind == BoardSerial {
			b.usb[sl.N] = picoboard.PortSerial(sl.Port, sysRoot)
		}
	}
	return b
}

// describe names a slot for messages: its number and port.
func (s Slot) describe() string {
	if s.Kind == BoardEmulator {
		return s.Name()
	}
	return s.Port
}

// preflight fails when two ports have the same USB serial number. That is
// one adapter listed twice through different device names (a by-id link
// and /dev/ttyUSB0, say); it runs before anything is built or run.
func (b *boardIDs) preflight() error {
	ns := make([]int, 0, len(b.usb))
	for n := range b.usb {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	first := map[string]int{}
	for _, n := range ns {
		s := b.usb[n]
		if s == "" {
			continue
		}
		if m, ok := first[s]; ok {
			return fmt.Errorf("%w: boards %d (%s) and %d (%s) have the same USB serial number %s: the same adapter is listed twice; remove one from [board]/[[board.devices]]",
				ErrSameBoard, m, b.slots[m].Port, n, b.slots[n].Port, s)
		}
		first[s] = n
	}
	return nil
}

// identify returns the ID of the board in slot sl that just ran an image.
// The image's start line carried uid (maybe ""); identify fails when
// another slot already reported the same ID: two ports wired to one board,
// or two boards with one ID.
func (b *boardIDs) identify(sl Slot, uid string) (string, error) {
	id := sl.Name()
	switch {
	case uid != "":
		id = uid
	case b.usb[sl.N] != "":
		id = b.usb[sl.N]
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if n, ok := b.seen[id]; ok && n != sl.N {
		return "", fmt.Errorf("%w: board %d (%s) and board %d (%s) both report %s: one board is wired to two ports, or two boards share an ID; fix the board list in experiments/pico.toml",
			ErrSameBoard, n, b.slots[n].describe(), sl.N, sl.describe(), id)
	}
	b.seen[id] = sl.N
	if !slices.Contains(b.bySlot[sl.N], id) {
		b.bySlot[sl.N] = append(b.bySlot[sl.N], id)
	}
	return id, nil
}

// record is meta.json's measured.boards: per board ID, its slot, kind,
// port (without /dev/) and the run folders it wrote, sorted.
func (b *boardIDs) record(slots []Slot, records map[string]ImageRecord) map[string]any {
	out := map[string]any{}
	for _, sl := range slots {
		for _, id := range b.bySlot[sl.N] {
			var dirs []string
			for key, rec := range records {
				if rec.Board == id {
					dirs = append(dirs, key)
				}
			}
			slices.Sort(dirs)
			m := map[string]any{"slot": sl.N, "kind": sl.Kind, "images": dirs}
			if sl.Port != "" {
				m["port"] = strings.TrimPrefix(sl.Port, "/dev/")
			}
			out[id] = m
		}
	}
	return out
}

// slotNames lists the slots' names for the plan line.
func slotNames(slots []Slot) []string {
	out := make([]string, len(slots))
	for i, sl := range slots {
		out[i] = sl.Name()
		if sl.Port != "" {
			out[i] += " on " + strings.TrimPrefix(sl.Port, "/dev/")
		}
	}
	return out
}
