// Package picodatatest provides protocol streams for tests of code that
// reads Study C's serial log (datasets/picodata.ReadRun and its callers).
package picodatatest

import (
	"fmt"

	"pqrepro/datasets/picodata"
)

// Run returns a whole run of the serial line protocol as the firmware
// prints it, one string per line without the line end. That is, a start
// line, nMeas ML-KEM-512 keygen measurements, one test-vector chunk and
// the end line. Sequence numbers start at 0, as at each start of a run.
func Run(nMeas int) []string {
	f := func(k, v string) picodata.Field { return picodata.Field{Key: k, Value: v} }
	lines := []string{picodata.FormatLine(0, "start", f("proto", "1"), f("run", "0"), f("fw", "abc"), f("img", "1"),
		f("clk", "133000000"), f("profile", "quick"), f("schemes", "ml-kem-512"), f("seed", "5"),
		f("stackcap", "1000"), f("heapcap", "100"), f("cc", "gcc"), f("cflags", "-O3,-mthumb"))}
	seq := uint64(1)
	for i := 0; i < nMeas; i++ {
		lines = append(lines, picodata.FormatLine(seq, "m", f("scheme", "ml-kem-512"), f("op", "keygen"), f("i", fmt.Sprint(i)),
			f("us", "100"), f("cyc", "13300"), f("stack", "64"), f("heap", "0"), f("ok", "1")))
		seq++
	}
	lines = append(lines, picodata.FormatLine(seq, "v", f("scheme", "ml-kem-512"), f("field", "ss"), f("off", "0"), f("len", "2"), f("hex", "abcd")))
	seq++
	lines = append(lines, picodata.FormatLine(seq, "end", f("run", "0"), f("lines", fmt.Sprint(seq)), f("failures", "0"), f("us", "999")))
	return lines
}
