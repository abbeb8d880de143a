package picodata_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/datasets/picodata/picodatatest"
)

func ExampleFormatLine() {
	fmt.Println(picodata.FormatLine(2, picodata.KindMeasure, picodata.Field{Key: "scheme", Value: "ml-kem-512"}, picodata.Field{Key: "us", Value: "8967"}))
	// Output: PQ 2 m scheme=ml-kem-512 us=8967 *73ec0d27
}

func ExampleParseLine() {
	l, err := picodata.ParseLine("PQ 2 m scheme=ml-kem-512 op=keygen i=0 us=8967 cyc=1192721 stack=6200 heap=208 ok=1 *06c0d177")
	if err != nil {
		fmt.Println(err)
		return
	}
	us, _ := l.Uint("us")
	scheme, _ := l.Get("scheme")
	fmt.Println(l.Seq, l.Kind, scheme, us)
	// Output: 2 m ml-kem-512 8967
}

func ExampleEncodeMeasurements() {
	ms := []picodata.Measurement{{Scheme: "ml-kem-512", Op: "keygen", Micros: 8968, Cycles: 1192716, Stack: 6200, Heap: 208, OK: true}}
	a, _ := picodata.EncodeMeasurements(ms)
	b, _ := picodata.EncodeMeasurements(ms)
	back, _ := picodata.DecodeMeasurements(bytes.NewReader(a))
	fmt.Println(bytes.Equal(a, b), back[0].Scheme, back[0].Op, back[0].Micros)
	// Output: true ml-kem-512 keygen 8968
}

// ReadRun reads one whole run of the serial protocol, as the board or the
// emulator printed it, from any reader: here a run of two measurements.
func ExampleReadRun() {
	log := strings.Join(picodatatest.Run(2), "\n") + "\n"
	ds, err := picodata.ReadRun(context.Background(), strings.NewReader(log), picodata.ReadOptions{IdleTimeout: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ds.Complete, ds.Header.ClockHz, ds.Header.Schemes, len(ds.Measurements))
	for _, m := range ds.Measurements {
		fmt.Println(m.Scheme, m.Op, m.Iter, m.Micros, m.Cycles, m.OK)
	}
	// Output:
	// true 133000000 [ml-kem-512] 2
	// ml-kem-512 keygen 0 100 13300 true
	// ml-kem-512 keygen 1 100 13300 true
}
