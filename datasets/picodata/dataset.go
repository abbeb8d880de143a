package picodata

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Header is the run's start line: what ran, at which clock, built how.
type Header struct {
	Proto      int      `json:"proto"`
	Run        int      `json:"run"`
	FirmwareID string   `json:"firmware_id"`
	ImageCRC   uint32   `json:"image_crc32"`
	ClockHz    uint32   `json:"clock_hz"`
	Profile    string   `json:"profile"`
	Schemes    []string `json:"schemes"`
	Seed       uint64   `json:"seed"`
	StackCap   uint32   `json:"stack_capacity"`
	HeapCap    uint32   `json:"heap_capacity"`
	CC         string   `json:"cc"`
	CFlags     string   `json:"cflags"`
	// UID is the board's unique ID when the firmware reports one (an
	// optional uid=<hex> field of the start line: the 64-bit flash unique
	// ID, READ_UNIQUE_ID 0x4B, as pico_get_unique_board_id reads it). The
	// current firmware does not send it; the reader accepts it so that
	// several boards can be told apart by the board itself.
	UID string `json:"uid,omitempty"`
}

// A Measurement is one timed operation on the device.
type Measurement struct {
	Scheme string `json:"scheme"`
	Op     string `json:"op"`
	Iter   int    `json:"i"`
	Micros uint64 `json:"us"`     // 1 MHz timer (datasheet 4.6)
	Cycles uint64 `json:"cycles"` // SysTick, clk_sys cycles
	Stack  uint32 `json:"stack"`  // peak stack bytes, by painting
	Heap   uint32 `json:"heap"`   // heap high-water mark so far, bytes
	OK     bool   `json:"ok"`     // the on-device check passed
	// Loop counts an ML-DSA signature's rejection loop (firmware
	// dsacount.h); zero for every other operation and for runs whose
	// firmware did not count (a counted signature has Iters >= 1). A
	// value, so that Measurements stay comparable with ==.
	Loop DSALoop `json:"loop,omitzero"`
}

// DSALoop is one ML-DSA signature's rejection loop (FIPS 204 Algorithm
// 7): its iterations and, of them, how many reached each later check.
// Every count is at most the one before it, and the last iteration of a
// valid signature reached the hint.
type DSALoop struct {
	Iters     uint32 `json:"iters"` // iterations (challenges derived)
	R0Checks  uint32 `json:"r0"`    // z passed: the ||r0|| check ran
	Ct0Checks uint32 `json:"ct0"`   // r0 passed: the ||ct0|| check ran
	Hints     uint32 `json:"hints"` // ct0 passed: the hint was made
}

// Counted says whether the signature's loop was counted.
func (l DSALoop) Counted() bool { return l != DSALoop{} }

// Check says whether the counts can come from one signature: each at most
// the one before it, at least one iteration and one hint.
func (l DSALoop) Check() error {
	if !(l.Iters >= 1 && l.R0Checks <= l.Iters && l.Ct0Checks <= l.R0Checks && l.Hints <= l.Ct0Checks && l.Hints >= 1) {
		return fmt.Errorf("%w: rejection loop counts %+v cannot come from one signature (want iters >= r0 >= ct0 >= hints >= 1)", ErrSyntax, l)
	}
	return nil
}

// An OpRef names one operation of a run.
type OpRef struct {
	Scheme string `json:"scheme"`
	Op     string `json:"op"`
	Iter   int    `json:"i"`
}

func (o OpRef) String() string { return fmt.Sprintf("%s %s i=%d", o.Scheme, o.Op, o.Iter) }

// A DeviceFailure is an on-device check that failed ("err" line).
type DeviceFailure struct {
	Scheme string `json:"scheme"`
	Op     string `json:"op"`
	Iter   int    `json:"i"`
	Msg    string `json:"msg"`
}

// A Fault is the firmware's report of a HardFault or unexpected exception.
type Fault struct {
	Exception uint32 `json:"exception"`
	PC        uint32 `json:"pc"`
	LR        uint32 `json:"lr"`
	XPSR      uint32 `json:"xpsr"`
}

// A Problem is something wrong with the serial stream, at a 1-based line
// of the raw log.
type Problem struct {
	Line int    `json:"line"`
	Msg  string `json:"msg"`
}

func (p Problem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Msg) }

// Dataset is one run read from a board or the emulator.
type Dataset struct {
	Header       Header                       `json:"header"`
	Measurements []Measurement                `json:"measurements"`
	Vectors      map[string]map[string][]byte `json:"-"` // scheme -> field -> bytes
	Failures     []DeviceFailure              `json:"failures"`
	Fault        *Fault                       `json:"fault,omitempty"`
	Problems     []Problem                    `json:"problems"`
	Skipped      int                          `json:"skipped_lines"` // before the first start
	Complete     bool                         `json:"complete"`
	EndMicros    uint64                       `json:"end_us"`
	Emulated     bool                         `json:"emulated"`
	// InProgress is the operation a "b" line began and no "m" line has
	// ended yet: where a run that stopped early was.
	InProgress *OpRef `json:"in_progress,omitempty"`
	Raw        []byte `json:"-"` // the serial log, verbatim
}

// vectorChunk accumulates one field's chunks.
type vectorChunk struct {
	total int
	data  []byte
	have  []bool
}

// apply folds one parsed line into the dataset; rawLine is its raw-log
// line number for problems.
func (d *Dataset) apply(l Line, rawLine int, vec map[string]*vectorChunk) error {
	switch l.Kind {
	case KindMeasure:
		m := Measurement{}
		var err error
		get := func(k string) uint64 {
			if err != nil {
				return 0
			}
			var v uint64
			v, err = l.Uint(k)
			return v
		}
		m.Scheme, _ = l.Get("scheme")
		m.Op, _ = l.Get("op")
		m.Iter = int(get("i"))
		m.Micros = get("us")
		m.Cycles = get("cyc")
		m.Stack = uint32(get("stack"))
		m.Heap = uint32(get("heap"))
		m.OK = get("ok") == 1
		if err != nil {
			return err
		}
		if _, counted := l.Get("iters"); counted {
			loop := DSALoop{Iters: uint32(get("iters")), R0Checks: uint32(get("r0")), Ct0Checks: uint32(get("ct0")), Hints: uint32(get("hints"))}
			if err != nil {
				return err
			}
			if err := loop.Check(); err != nil {
				return err
			}
			m.Loop = loop
		}
		if m.Scheme == "" || m.Op == "" {
			return fmt.Errorf("%w: measurement without scheme or op", ErrSyntax)
		}
		d.Measurements = append(d.Measurements, m)
		if d.InProgress != nil && *d.InProgress == (OpRef{m.Scheme, m.Op, m.Iter}) {
			d.InProgress = nil
		}
	case KindBegin:
		o := OpRef{}
		o.Scheme, _ = l.Get("scheme")
		o.Op, _ = l.Get("op")
		it, err := l.Uint("i")
		if err != nil || o.Scheme == "" || o.Op == "" {
			return fmt.Errorf("%w: begin line without scheme, op or i", ErrSyntax)
		}
		o.Iter = int(it)
		d.InProgress = &o
	case KindVector:
		scheme, _ := l.Get("scheme")
		field, _ := l.Get("field")
		off, err1 := l.Uint("off")
		total, err2 := l.Uint("len")
		hx, _ := l.Get("hex")
		b, err3 := hex.DecodeString(hx)
		if scheme == "" || field == "" || err1 != nil || err2 != nil || err3 != nil || total > 1<<20 ||
			off+uint64(len(b)) > total || len(b) == 0 {
			return fmt.Errorf("%w: bad vector chunk", ErrSyntax)
		}
		key := scheme + "\x00" + field
		c := vec[key]
		if c == nil {
			c = &vectorChunk{total: int(total), data: make([]byte, total), have: make([]bool, total)}
			vec[key] = c
		}
		if c.total != int(total) {
			return fmt.Errorf("%w: vector %s/%s length changed", ErrSyntax, scheme, field)
		}
		copy(c.data[off:], b)
		for i := range b {
			c.have[int(off)+i] = true
		}
	case KindError:
		f := DeviceFailure{}
		f.Scheme, _ = l.Get("scheme")
		f.Op, _ = l.Get("op")
		f.Msg, _ = l.Get("msg")
		it, _ := l.Uint("i")
		f.Iter = int(it)
		d.Failures = append(d.Failures, f)
	case KindFault:
		f := &Fault{}
		exc, _ := l.Uint("exc")
		f.Exception = uint32(exc)
		for _, kv := range []struct {
			k string
			p *uint32
		}{{"pc", &f.PC}, {"lr", &f.LR}, {"xpsr", &f.XPSR}} {
			v, _ := l.Get(kv.k)
			n, err := strconv.ParseUint(v, 16, 32)
			if err != nil {
				return fmt.Errorf("%w: fault %s=%q", ErrSyntax, kv.k, v)
			}
			*kv.p = uint32(n)
		}
		d.Fault = f
	default:
		d.Problems = append(d.Problems, Problem{rawLine, fmt.Sprintf("unknown line kind %q (ignored)", l.Kind)})
	}
	return nil
}

// parseHeader reads a start line.
func parseHeader(l Line) (Header, error) {
	h := Header{}
	var err error
	u := func(k string) uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = l.Uint(k)
		return v
	}
	h.Proto = int(u("proto"))
	h.Run = int(u("run"))
	h.ImageCRC = uint32(u("img"))
	h.ClockHz = uint32(u("clk"))
	h.Seed = u("seed")
	h.StackCap = uint32(u("stackcap"))
	h.HeapCap = uint32(u("heapcap"))
	if err != nil {
		return h, err
	}
	if h.Proto != 1 {
		return h, fmt.Errorf("%w: protocol version %d, this reader speaks 1", ErrSyntax, h.Proto)
	}
	h.FirmwareID, _ = l.Get("fw")
	h.Profile, _ = l.Get("profile")
	h.CC, _ = l.Get("cc")
	h.CFlags, _ = l.Get("cflags")
	h.UID, _ = l.Get("uid")
	h.CC = strings.ReplaceAll(h.CC, ",", " ")
	h.CFlags = strings.ReplaceAll(h.CFlags, ",", " ")
	if s, _ := l.Get("schemes"); s != "" {
		h.Schemes = strings.Split(s, ",")
	}
	return h, nil
}

// finishVectors moves complete vectors into the dataset and reports
// incomplete ones.
func (d *Dataset) finishVectors(vec map[string]*vectorChunk, rawLine int) {
	d.Vectors = map[string]map[string][]byte{}
	for key, c := range vec {
		scheme, field, _ := strings.Cut(key, "\x00")
		missing := 0
		for _, h := range c.have {
			if !h {
				missing++
			}
		}
		if missing > 0 {
			d.Problems = append(d.Problems, Problem{rawLine, fmt.Sprintf("vector %s/%s misses %d of %d bytes", scheme, field, missing, c.total)})
			continue
		}
		if d.Vectors[scheme] == nil {
			d.Vectors[scheme] = map[string][]byte{}
		}
		d.Vectors[scheme][field] = c.data
	}
}
