package picodata_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/datasets/picodata/picodatatest"
)

func readString(t *testing.T, s string) (*picodata.Dataset, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return picodata.ReadRun(ctx, strings.NewReader(s), picodata.ReadOptions{IdleTimeout: time.Second})
}

func TestReadRun(t *testing.T) {
	good := picodatatest.Run(3)
	join := func(ls []string) string { return strings.Join(ls, "\n") + "\n" }
	replace := func(i int, s string) []string {
		c := append([]string(nil), good...)
		c[i] = s
		return c
	}
	drop := func(i int) []string {
		c := append([]string(nil), good[:i]...)
		return append(c, good[i+1:]...)
	}
	tests := []struct {
		name     string
		in       string
		complete bool
		meas     int
		problem  string // substring of a problem
		line     int    // its raw line number, if > 0
	}{
		{"whole", join(good), true, 3, "", 0},
		{"late connect: partial run first", "tail of an old line\n" + join(good[2:]) + join(good), true, 3, "", 0},
		{"garbage before start", "\x00\xff garbage\n" + join(good), true, 3, "", 0},
		{"noise mid run", join(good[:2]) + "zzz noise\n" + join(good[2:]), false, 3, "noise", 3},
		{"checksum mismatch", join(replace(2, strings.Replace(good[2], "us=100", "us=900", 1))), false, 2, "checksum", 3},
		{"lost line", join(drop(2)), false, 2, "lost 1 line", 3},
		{"reset mid run", join(good[:3]) + join(good), false, 2, "board reset", 4},
		{"truncated last line, EOF", join(good[:3]) + good[3][:10], false, 2, "truncated", 4},
		{"EOF before end", join(good[:3]), false, 2, "EOF", 0},
		{"no start at all", "nothing\nhere\n", false, 0, "EOF", 0},
		{"end miscounts", join(replace(len(good)-1, picodata.FormatLine(uint64(len(good)-1), "end", picodata.Field{"lines", "99"}))), false, 3, "end line counts", 0},
		{"fault", join(good[:2]) + picodata.FormatLine(2, "fault", picodata.Field{"exc", "3"}, picodata.Field{"pc", "20000100"}, picodata.Field{"lr", "0"}, picodata.Field{"xpsr", "0"}) + "\n", false, 1, "fault", 3},
		{"overlong line", join(good[:2]) + strings.Repeat("x", picodata.MaxLineLen+10) + "\n" + join(good[2:]), false, 3, "longer than", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := readString(t, tc.in)
			if d == nil {
				t.Fatal("nil dataset")
			}
			if d.Complete != tc.complete {
				t.Fatalf("complete = %v, want %v (err %v, problems %v)", d.Complete, tc.complete, err, d.Problems)
			}
			if tc.complete != (err == nil) {
				t.Fatalf("err = %v with complete = %v", err, d.Complete)
			}
			if err != nil && !errors.Is(err, picodata.ErrIncomplete) {
				t.Errorf("error %v does not wrap picodata.ErrIncomplete", err)
			}
			if len(d.Measurements) != tc.meas {
				t.Errorf("kept %d measurements, want %d", len(d.Measurements), tc.meas)
			}
			if !bytes.Equal(d.Raw, []byte(tc.in)) {
				t.Errorf("raw log is not the input verbatim")
			}
			if tc.problem != "" {
				found := false
				for _, p := range d.Problems {
					if strings.Contains(p.Msg, tc.problem) && (tc.line == 0 || p.Line == tc.line) {
						found = true
					}
				}
				if !found {
					t.Errorf("no problem %q at line %d in %v", tc.problem, tc.line, d.Problems)
				}
			}
		})
	}
}

func TestReadRunHeaderAndVectors(t *testing.T) {
	d, err := readString(t, strings.Join(picodatatest.Run(1), "\n")+"\n")
	if err != nil {
		t.Fatal(err)
	}
	if d.Header.ClockHz != 133000000 || d.Header.CFlags != "-O3 -mthumb" || d.Header.Schemes[0] != "ml-kem-512" {
		t.Errorf("header %+v", d.Header)
	}
	if got := d.Vectors["ml-kem-512"]["ss"]; !bytes.Equal(got, []byte{0xab, 0xcd}) {
		t.Errorf("vector ss = %x", got)
	}
	if d.EndMicros != 999 {
		t.Errorf("end us = %d", d.EndMicros)
	}
}

// blockingReader never returns: ReadRun must still stop at its idle timeout.
type blockingReader struct{ ch chan struct{} }

func (b blockingReader) Read([]byte) (int, error) { <-b.ch; return 0, io.EOF }

func TestReadRunIdleTimeout(t *testing.T) {
	br := blockingReader{make(chan struct{})}
	defer close(br.ch)
	start := time.Now()
	d, err := picodata.ReadRun(context.Background(), br, picodata.ReadOptions{IdleTimeout: 200 * time.Millisecond})
	if !errors.Is(err, picodata.ErrIncomplete) || !strings.Contains(err.Error(), "no data") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 3*time.Second || d == nil {
		t.Fatalf("took %v", time.Since(start))
	}
}

func TestReadRunCancel(t *testing.T) {
	br := blockingReader{make(chan struct{})}
	defer close(br.ch)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	_, err := picodata.ReadRun(ctx, br, picodata.ReadOptions{IdleTimeout: time.Minute})
	if !errors.Is(err, picodata.ErrIncomplete) || !strings.Contains(err.Error(), "stopped before the end") {
		t.Fatalf("err = %v", err)
	}
}

type errReader struct {
	data []byte
	err  error
}

func (e *errReader) Read(p []byte) (int, error) {
	if len(e.data) > 0 {
		n := copy(p, e.data)
		e.data = e.data[n:]
		return n, nil
	}
	return 0, e.err
}

func TestReadRunPortGone(t *testing.T) {
	good := picodatatest.Run(3)
	r := &errReader{[]byte(strings.Join(good[:3], "\n") + "\n"), errors.New("read /dev/ttyUSB0: input/output error")}
	d, err := picodata.ReadRun(context.Background(), r, picodata.ReadOptions{IdleTimeout: time.Second})
	if !errors.Is(err, picodata.ErrIncomplete) || !strings.Contains(err.Error(), "port gone") {
		t.Fatalf("err = %v", err)
	}
	if len(d.Measurements) != 2 {
		t.Errorf("kept %d measurements", len(d.Measurements))
	}
}

// FuzzReadRun: arbitrary bytes never hang or panic the reader.
func FuzzReadRun(f *testing.F) {
	f.Add([]byte(strings.Join(picodatatest.Run(2), "\n") + "\n"))
	f.Add([]byte("PQ 0 start\n\n\nPQ"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := picodata.ReadRun(context.Background(), bytes.NewReader(b), picodata.ReadOptions{IdleTimeout: time.Second})
		if d == nil || (err == nil) != d.Complete {
			t.Fatalf("d=%v err=%v", d, err)
		}
	})
}

// TestReadRunBeginLines checks the "b" line: it names the operation in
// progress until that operation's "m" line ends it, so a run stopped by
// its time limit can say where it was; a malformed one is a problem, and
// the measurements around it are kept.
func TestReadRunBeginLines(t *testing.T) {
	f := func(k, v string) picodata.Field { return picodata.Field{Key: k, Value: v} }
	good := picodatatest.Run(1)
	begin := func(seq uint64, op, i string) string {
		return picodata.FormatLine(seq, "b", f("scheme", "sphincs-sha2-128s"), f("op", op), f("i", i))
	}
	meas := func(seq uint64, op, i string) string {
		return picodata.FormatLine(seq, "m", f("scheme", "sphincs-sha2-128s"), f("op", op), f("i", i),
			f("us", "100"), f("cyc", "13300"), f("stack", "64"), f("heap", "0"), f("ok", "1"))
	}
	start := good[0] + "\n"

	// Stopped inside sign i=0: keygen ended, sign begun.
	d, err := readString(t, start+begin(1, "keygen", "0")+"\n"+meas(2, "keygen", "0")+"\n"+begin(3, "sign", "0")+"\n")
	if err == nil {
		t.Fatal("a stream without an end line must be an error")
	}
	if d.InProgress == nil || d.InProgress.String() != "sphincs-sha2-128s sign i=0" {
		t.Fatalf("in progress = %v, want sphincs-sha2-128s sign i=0", d.InProgress)
	}
	if len(d.Measurements) != 1 {
		t.Fatalf("measurements = %d, want the keygen", len(d.Measurements))
	}

	// Ended: nothing in progress, and no problem from the b lines.
	end := picodata.FormatLine(5, "end", f("run", "0"), f("lines", "5"), f("failures", "0"), f("us", "9"))
	d, err = readString(t, start+begin(1, "keygen", "0")+"\n"+meas(2, "keygen", "0")+"\n"+begin(3, "sign", "0")+"\n"+meas(4, "sign", "0")+"\n"+end+"\n")
	if err != nil || !d.Complete || d.InProgress != nil || len(d.Problems) != 0 {
		t.Fatalf("err=%v complete=%v in progress=%v problems=%v", err, d.Complete, d.InProgress, d.Problems)
	}

	// A begin line without its index is a problem; the run is kept.
	bad := picodata.FormatLine(1, "b", f("scheme", "sphincs-sha2-128s"), f("op", "sign"))
	d, _ = readString(t, start+bad+"\n"+meas(2, "keygen", "0")+"\n")
	if len(d.Problems) == 0 || !strings.Contains(d.Problems[0].Msg, "begin line") || len(d.Measurements) != 1 {
		t.Fatalf("problems=%v measurements=%d", d.Problems, len(d.Measurements))
	}
}

// TestReadRunLoopCounts: a signature's "m" line with the rejection
// loop's counts gives a Measurement with Loop; impossible counts are a
// problem of the line, not a measurement.
func TestReadRunLoopCounts(t *testing.T) {
	f := func(k, v string) picodata.Field { return picodata.Field{Key: k, Value: v} }
	sign := func(seq uint64, iters, r0, ct0, hints string) string {
		return picodata.FormatLine(seq, "m", f("scheme", "ml-dsa-44"), f("op", "sign"), f("i", "0"), f("us", "100"), f("cyc", "13300"),
			f("stack", "64"), f("heap", "0"), f("ok", "1"), f("iters", iters), f("r0", r0), f("ct0", ct0), f("hints", hints))
	}
	good := picodatatest.Run(1)
	run := func(line string) []string {
		ls := append([]string(nil), good[:2]...)
		ls = append(ls, line)
		for i, l := range good[2:] {
			// Renumber the lines after the inserted one.
			p, err := picodata.ParseLine(l)
			if err != nil {
				t.Fatal(err)
			}
			ls = append(ls, picodata.FormatLine(uint64(3+i), p.Kind, p.Fields...))
		}
		return ls
	}
	ls := run(sign(2, "4", "2", "1", "1"))
	ls[len(ls)-1] = picodata.FormatLine(uint64(len(ls)-1), "end", f("run", "0"), f("lines", fmt.Sprint(len(ls)-1)), f("failures", "0"), f("us", "999"))
	d, err := readString(t, strings.Join(ls, "\n")+"\n")
	if err != nil {
		t.Fatal(err)
	}
	var got picodata.DSALoop
	for _, m := range d.Measurements {
		if m.Op == "sign" {
			got = m.Loop
		}
	}
	if got != (picodata.DSALoop{Iters: 4, R0Checks: 2, Ct0Checks: 1, Hints: 1}) {
		t.Errorf("loop %+v, want 4/2/1/1 (problems %v)", got, d.Problems)
	}
	bad := run(sign(2, "1", "2", "1", "1"))
	d, _ = readString(t, strings.Join(bad, "\n")+"\n")
	for _, m := range d.Measurements {
		if m.Op == "sign" {
			t.Errorf("impossible counts accepted: %+v", m.Loop)
		}
	}
}
