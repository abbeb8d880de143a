package capture

import (
	"testing"
	"time"
)

func TestArrivalStamped(t *testing.T) {
	read := time.Unix(100, 0)
	for _, tc := range []struct {
		name string
		ts   time.Time
		want bool
	}{
		{"stamped on arrival, held the whole hold", read.Add(-probeHold), true},
		{"stamped on arrival, held half the hold", read.Add(-probeHold / 2), true},
		{"stamped at read time", read, false},
		{"stamped just before the read", read.Add(-probeHold / 10), false},
		{"stamped after the read began", read.Add(time.Microsecond), false},
	} {
		if got := arrivalStamped(tc.ts, read); got != tc.want {
			t.Errorf("%s: arrivalStamped = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAwaitArrivalStamps checks the probe on this kernel: with timestamps
// on (the probe's own socket asks for them), it must see arrival stamps
// well within its limit.
func TestAwaitArrivalStamps(t *testing.T) {
	took, err := awaitArrivalStamps(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if took > time.Second {
		t.Errorf("awaitArrivalStamps took %v, beyond its 1 s limit", took)
	}
	p, err := openStampProbe()
	if err != nil {
		t.Fatalf("open the probe on 127.0.0.1: %v", err)
	}
	defer p.close()
	onArrival, err := p.once()
	if err != nil {
		t.Fatal(err)
	}
	if !onArrival {
		t.Error("after awaitArrivalStamps returned, a probe datagram was still stamped at read time")
	}
}
