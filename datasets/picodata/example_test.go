package picodata_test

import (
	"bytes"
	"fmt"

	"pqrepro/datasets/picodata"
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
