package netrun

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/linkemu"
)

// The steps of a series that need no namespace, tested alone: the order
// of its connections, the judgement of one attempt, the record order of
// its rows and the self-test retry. The steps that need root (link,
// servers, capture, clients, finish) are covered by the Run tests.

func TestSeriesStepsSerial(t *testing.T) {
	got := seriesSteps(Serial, []int{1, 0}, 2, 1, 9, 9)
	want := []step{{gi: 1, warm: true}, {gi: 1, seq: 0}, {gi: 1, seq: 1}, {gi: 0, warm: true}, {gi: 0, seq: 0}, {gi: 0, seq: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("serial steps %v, want %v", got, want)
	}
	if got := seriesSteps(Serial, []int{0}, 3, 0, 1, 1); len(got) != 3 || got[0].warm {
		t.Errorf("no warm-up: %v", got)
	}
	if got := seriesSteps("bogus", []int{0}, 3, 1, 1, 1); len(got) != 0 {
		t.Errorf("an unknown order made steps: %v", got)
	}
}

func TestSeriesStepsInterleaved(t *testing.T) {
	for _, tc := range []struct {
		groups        []int
		round, warmup int
	}{
		{[]int{0, 1}, 5, 2},
		{[]int{0, 1, 2}, 4, 0},
		{[]int{3}, 3, 1},
	} {
		t.Run(fmt.Sprint(tc.groups, tc.round, tc.warmup), func(t *testing.T) {
			got := seriesSteps(Interleaved, tc.groups, tc.round, tc.warmup, 11, 22)
			if len(got) != len(tc.groups)*(tc.round+tc.warmup) {
				t.Fatalf("%d steps: %v", len(got), got)
			}
			// Every warm-up first, in group order.
			nw := len(tc.groups) * tc.warmup
			for i, st := range got[:nw] {
				if !st.warm || st.gi != tc.groups[i/max(tc.warmup, 1)] {
					t.Errorf("step %d = %+v, want a warm-up of %d", i, st, tc.groups[i/max(tc.warmup, 1)])
				}
			}
			// Then one attempt per group per seq, in a shuffled order
			// that is PCG(order seed, link seed)'s.
			rng := rand.New(rand.NewPCG(11, 22))
			order := slices.Clone(tc.groups)
			for seq := range tc.round {
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				for k, gi := range order {
					st := got[nw+seq*len(order)+k]
					if st.warm || st.seq != seq || st.gi != gi {
						t.Errorf("seq %d position %d: %+v, want group %d", seq, k, st, gi)
					}
				}
			}
			if !reflect.DeepEqual(got, seriesSteps(Interleaved, tc.groups, tc.round, tc.warmup, 11, 22)) {
				t.Error("the same seeds gave another order")
			}
		})
	}
	// Another link seed, another order (for a round long enough to tell).
	a := seriesSteps(Interleaved, []int{0, 1, 2}, 20, 0, 1, 2)
	b := seriesSteps(Interleaved, []int{0, 1, 2}, 20, 0, 1, 3)
	if reflect.DeepEqual(a, b) {
		t.Error("two link seeds gave the same interleaving")
	}
}

func TestJudgeAttempt(t *testing.T) {
	for _, tc := range []struct {
		name        string
		durationNs  int64
		err         error
		ok          bool
		failure     string
		wantErrText string
	}{
		{"success", 1000, nil, true, "", ""},
		{"timeout", 0, context.DeadlineExceeded, false, "timeout", ""},
		{"reset", 0, syscall.ECONNRESET, false, "reset", ""},
		{"close timed out after the handshake", 5000, context.DeadlineExceeded, true, "close-timeout", ""},
		{"configuration error", 0, errors.New("x509: certificate signed by unknown authority"), false, "", "handshake X25519/3: x509"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := netdata.Row{Group: "X25519"}
			err := judgeAttempt(&row, handshake.ClientRecord{DurationNs: tc.durationNs}, tc.err, 3)
			if tc.wantErrText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrText) || !strings.Contains(err.Error(), "not a network failure") {
					t.Fatalf("err = %v, want %q", err, tc.wantErrText)
				}
				return
			}
			if err != nil || row.OK != tc.ok || row.Failure != tc.failure {
				t.Errorf("row OK=%v failure=%q err=%v, want OK=%v failure=%q", row.OK, row.Failure, err, tc.ok, tc.failure)
			}
		})
	}
}

func TestSortRows(t *testing.T) {
	idx := map[string]int{"X25519": 0, "X25519MLKEM768": 1}
	gi := func(g string) int {
		if i, ok := idx[g]; ok {
			return i
		}
		return len(idx)
	}
	rows := []netdata.Row{
		{Group: "X25519MLKEM768", Seq: 0}, {Group: "X25519", Seq: 0}, {Group: "X25519", Seq: 1},
		{Group: "X25519MLKEM768", Seq: 1}, {Group: "other", Seq: 0}, {Group: "X25519", Seq: 1, Index: 7},
	}
	got := sortRows(rows, gi)
	var names []string
	for _, r := range got {
		names = append(names, fmt.Sprintf("%s/%d/%d", r.Group, r.Seq, r.Index))
	}
	want := "X25519/0/0 X25519/1/0 X25519/1/7 X25519MLKEM768/0/0 X25519MLKEM768/1/0 other/0/0"
	if strings.Join(names, " ") != want {
		t.Errorf("order %v, want %s (stable within a group and seq)", names, want)
	}
}

func TestSelfTestTwice(t *testing.T) {
	miss := &linkemu.AccuracyError{Report: linkemu.SelfTestReport{Scenario: "tiny"}}
	other := errors.New("create namespace: file exists")
	for _, tc := range []struct {
		name    string
		results []error // what each start returns
		stopped bool
		starts  int
		missed  int
		wantErr string
	}{
		{"first passes", []error{nil}, false, 1, 0, ""},
		{"second passes", []error{miss, nil}, false, 2, 1, ""},
		{"both miss", []error{miss, miss}, false, 2, 1, "self-test failed twice"},
		{"other error not retried", []error{other}, false, 1, 0, "file exists"},
		{"stopped: no second test", []error{miss}, true, 1, 0, "self-test failed twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			starts, missed := 0, 0
			link, _, err := selfTestTwice(func() (int, linkemu.SelfTestReport, error) {
				starts++
				return starts, linkemu.SelfTestReport{}, tc.results[starts-1]
			}, func() bool { return tc.stopped }, func(error) { missed++ })
			if starts != tc.starts || missed != tc.missed {
				t.Errorf("%d starts, %d told, want %d and %d", starts, missed, tc.starts, tc.missed)
			}
			if tc.wantErr == "" {
				if err != nil || link != tc.starts {
					t.Errorf("link %d, err %v", link, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestProgressSpeed: a finished series counts the time its handshakes
// took, not the time since they started (which made the ETA grow with
// every finished series), and the speed is bounded.
func TestProgressSpeed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	se := []SeriesEstimate{{Connections: 100, Expected: 100 * time.Second}, {Connections: 100, Expected: 100 * time.Second}}
	for _, tc := range []struct {
		name  string
		progs []seriesProgress
		now   time.Time
		want  float64
	}{
		{"nothing started", make([]seriesProgress, 2), t0, 1},
		{"on the model", []seriesProgress{{done: 10, hsStart: t0}, {}}, t0.Add(10 * time.Second), 1},
		{"twice as slow", []seriesProgress{{done: 10, hsStart: t0}, {}}, t0.Add(20 * time.Second), 2},
		{"finished long ago", []seriesProgress{{done: 100, hsStart: t0, hsEnd: t0.Add(100 * time.Second), finished: true}, {done: 10, hsStart: t0.Add(3000 * time.Second)}},
			t0.Add(3010 * time.Second), 1},
		{"bounded above", []seriesProgress{{done: 1, hsStart: t0}, {}}, t0.Add(time.Hour), 10},
		{"bounded below", []seriesProgress{{done: 100, hsStart: t0}, {}}, t0.Add(time.Second), 0.5},
	} {
		if got := progressSpeed(se, tc.progs, tc.now); got != tc.want {
			t.Errorf("%s: speed %v, want %v", tc.name, got, tc.want)
		}
	}
}
