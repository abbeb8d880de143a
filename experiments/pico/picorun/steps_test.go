package picorun

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/experiments/pico/picoboard"
)

// The steps of Run that need no firmware, emulator or board, tested
// alone: the plan, the board label, the job queues, the job runner and
// meta.json's measured and notes. Building and running images is covered
// by the Run tests (TestRunQuickMLKEM and the board tests).

func loadTestSpec(t *testing.T, body string) Spec {
	t.Helper()
	s, err := LoadSpec(writeSpec(t, body))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewPlan(t *testing.T) {
	emu := committedSpec(t)
	twoBoards := boardsSpec(t, false, []string{"/dev/ttyUSB0", "/dev/ttyUSB1"}, []string{"/media/a", ""})
	replicated := boardsSpec(t, true, []string{"/dev/ttyUSB0", "/dev/ttyUSB1"}, []string{"/media/a", "/media/b"})
	for _, tc := range []struct {
		name      string
		body      string
		profile   string
		images    []string
		workers   int
		want      []string // image names, longest first
		slots     int
		wantW     int
		replicate bool
		wantErr   string
	}{
		{name: "every image of the profile", body: emu, profile: "quick", want: []string{"sphincs-sha2-128f", "classic", "mldsa87", "mldsa65", "mldsa44", "mlkem"}, slots: 2, wantW: 2},
		{name: "the images given", body: emu, profile: "quick", images: []string{"mlkem", "mldsa44"}, want: []string{"mldsa44", "mlkem"}, slots: 2, wantW: 2},
		{name: "workers given", body: emu, profile: "quick", images: []string{"mlkem"}, workers: 3, want: []string{"mlkem"}, slots: 3, wantW: 3},
		{name: "replicate on one instance is spread", body: strings.Replace(emu, "replicate = false", "replicate = true", 1), profile: "quick", images: []string{"mlkem"}, workers: 1, want: []string{"mlkem"}, slots: 1, wantW: 1},
		{name: "replicate on two instances", body: strings.Replace(emu, "replicate = false", "replicate = true", 1), profile: "quick", images: []string{"mlkem"}, want: []string{"mlkem"}, slots: 2, wantW: 2, replicate: true},
		{name: "real boards: one image each", body: replicated, profile: "quick", images: []string{"mlkem", "classic"}, workers: 7, want: []string{"classic", "mlkem"}, slots: 2, wantW: 2, replicate: true},
		{name: "a board without bootsel runs one image", body: twoBoards, profile: "quick", images: []string{"mlkem"}, want: []string{"mlkem"}, slots: 2, wantW: 2},
		{name: "a board without bootsel cannot take several", body: twoBoards, profile: "quick", images: []string{"mlkem", "classic"}, wantErr: "board 2 (/dev/ttyUSB1) has no bootsel"},
		{name: "unknown image", body: emu, profile: "quick", images: []string{"nope"}, wantErr: `unknown image "nope"`},
		{name: "unknown profile", body: emu, profile: "medium", wantErr: `profile "medium"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := newPlan(loadTestSpec(t, tc.body), tc.profile, tc.images, tc.workers)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := imageNames(p.imgs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("images %v, want %v", got, tc.want)
			}
			for i := 1; i < len(p.imgs); i++ {
				if p.est[p.imgs[i].Name] > p.est[p.imgs[i-1].Name] {
					t.Errorf("%s (%v) after %s (%v): not longest first", p.imgs[i].Name, p.est[p.imgs[i].Name], p.imgs[i-1].Name, p.est[p.imgs[i-1].Name])
				}
			}
			if len(p.slots) != tc.slots || p.workers != tc.wantW || p.replicate != tc.replicate {
				t.Errorf("%d slots, %d workers, replicate %v; want %d, %d, %v", len(p.slots), p.workers, p.replicate, tc.slots, tc.wantW, tc.replicate)
			}
			if d := p.describe(tc.profile); !strings.HasPrefix(d, "plan: profile "+tc.profile+", ") {
				t.Errorf("plan line %q", d)
			}
		})
	}
}

func TestImageIdle(t *testing.T) {
	p := runPlan{idle: 5 * time.Second, timeout: time.Minute, prof: ProfileSpec{RSAKeygen: 1}}
	rsa := picoboard.Image{Schemes: []string{"rsa-2048"}}
	kem := picoboard.Image{Schemes: []string{"ml-kem-512"}}
	if got := p.imageIdle(rsa); got != time.Minute {
		t.Errorf("RSA keygen image: idle %v, want the image timeout", got)
	}
	if got := p.imageIdle(kem); got != 5*time.Second {
		t.Errorf("ML-KEM image: idle %v", got)
	}
	p.prof.RSAKeygen = 0
	if got := p.imageIdle(rsa); got != 5*time.Second {
		t.Errorf("no RSA keygen: idle %v", got)
	}
}

func TestSerialBoardLabel(t *testing.T) {
	one := []Slot{{N: 1, Kind: BoardSerial, Port: "/dev/ttyACM0"}}
	two := append(one, Slot{N: 2, Kind: BoardSerial, Port: "/dev/serial/by-id/x"})
	if got := serialBoardLabel(one); got != "Raspberry Pi Pico (RP2040) on ttyACM0" {
		t.Errorf("one board: %q", got)
	}
	if got := serialBoardLabel(two); got != "2 Raspberry Pi Picos (RP2040) on ttyACM0, serial/by-id/x" {
		t.Errorf("two boards: %q", got)
	}
}

func testImages(names ...string) []picoboard.Image {
	var out []picoboard.Image
	for _, n := range names {
		out = append(out, picoboard.Image{Name: n})
	}
	return out
}

func jobKeys(plan [][]job) [][]string {
	var out [][]string
	for _, q := range plan {
		var ks []string
		for _, j := range q {
			ks = append(ks, j.key)
		}
		out = append(out, ks)
	}
	return out
}

func TestPlanJobs(t *testing.T) {
	slots := []Slot{{N: 1}, {N: 2}}
	est := map[string]time.Duration{"a": 2 * time.Second, "b": time.Second}
	plan, jobEst := planJobs(testImages("a", "b"), slots, false, est)
	if got := jobKeys(plan); !reflect.DeepEqual(got, [][]string{{"a", "b"}}) {
		t.Errorf("spread: %v", got)
	}
	if !reflect.DeepEqual(jobEst, est) {
		t.Errorf("spread estimates %v", jobEst)
	}
	plan, jobEst = planJobs(testImages("a", "b"), slots, true, est)
	if got := jobKeys(plan); !reflect.DeepEqual(got, [][]string{{"a@1", "b@1"}, {"a@2", "b@2"}}) {
		t.Errorf("replicate: %v", got)
	}
	if len(jobEst) != 4 || jobEst["a@2"] != 2*time.Second || jobEst["b@1"] != time.Second {
		t.Errorf("replicate estimates %v", jobEst)
	}
}

func TestRunJobs(t *testing.T) {
	slots := []Slot{{N: 1, Kind: BoardEmulator}, {N: 2, Kind: BoardEmulator}}
	t.Run("spread", func(t *testing.T) {
		plan, _ := planJobs(testImages("a", "b", "c"), slots, false, nil)
		var mu = make(chan struct{}, 1)
		boards := map[string]int{}
		recs, err := runJobs(context.Background(), slots, plan, false, func(_ context.Context, j job, sl Slot) (ImageRecord, error) {
			mu <- struct{}{}
			boards[j.key] = sl.N
			<-mu
			return ImageRecord{Name: j.img.Name, Board: sl.Name()}, nil
		})
		if err != nil || len(recs) != 3 || len(boards) != 3 {
			t.Fatalf("%v, %v", recs, err)
		}
		for k, r := range recs {
			if r.Name != k {
				t.Errorf("record %s holds %s", k, r.Name)
			}
		}
	})
	t.Run("replicate: each board its own queue", func(t *testing.T) {
		plan, _ := planJobs(testImages("a", "b"), slots, true, nil)
		var wrong atomic.Int32
		recs, err := runJobs(context.Background(), slots, plan, true, func(_ context.Context, j job, sl Slot) (ImageRecord, error) {
			if !strings.HasSuffix(j.key, fmt.Sprintf("@%d", sl.N)) {
				wrong.Add(1)
			}
			return ImageRecord{Name: j.img.Name}, nil
		})
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range recs {
				if !yield(k) {
					return
				}
			}
		})
		if err != nil || !reflect.DeepEqual(keys, []string{"a@1", "a@2", "b@1", "b@2"}) || wrong.Load() != 0 {
			t.Errorf("records %v, %d on the wrong board, %v", keys, wrong.Load(), err)
		}
	})
	t.Run("the first failure stops the rest", func(t *testing.T) {
		plan, _ := planJobs(testImages("a", "b", "c", "d", "e", "f"), slots, false, nil)
		bad := errors.New("image b: device check failed")
		var ran atomic.Int32
		recs, err := runJobs(context.Background(), slots, plan, false, func(ctx context.Context, j job, _ Slot) (ImageRecord, error) {
			ran.Add(1)
			if j.key == "b" {
				return ImageRecord{}, bad
			}
			if j.key == "a" {
				<-ctx.Done() // stopped by b's failure: not an error of its own
				return ImageRecord{}, fmt.Errorf("emulator: %w", ctx.Err())
			}
			return ImageRecord{Name: j.key}, nil
		})
		if !errors.Is(err, bad) {
			t.Fatalf("err = %v, want b's", err)
		}
		if _, ok := recs["a"]; ok {
			t.Error("the stopped image was recorded")
		}
		if n := ran.Load(); n > 3 {
			t.Errorf("%d images ran after the failure stopped the run", n)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		plan, _ := planJobs(testImages("a", "b", "c"), slots, false, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var ran atomic.Int32
		recs, err := runJobs(ctx, slots, plan, false, func(ctx context.Context, j job, _ Slot) (ImageRecord, error) {
			ran.Add(1)
			return ImageRecord{}, ctx.Err()
		})
		if len(recs) != 0 || ran.Load() != 0 || err != nil {
			t.Errorf("a cancelled run ran %d images, recorded %v, err %v (Run reports the interruption)", ran.Load(), recs, err)
		}
	})
}

func TestMeasuredMetaAndNotes(t *testing.T) {
	p := runPlan{workers: 2, board: BoardSpec{Kind: BoardEmulator}, replicate: true}
	recs := map[string]ImageRecord{
		"mlkem@1": {WallSeconds: 3, BuildSeconds: 1, Measurements: 18, Header: picodata.Header{ClockHz: 133000000}, Board: "rp2040js-1",
			Emulator: &EmulatorRecord{SimMHz: 40, SimSeconds: 2, Cycles: 7}},
		"mlkem@2": {WallSeconds: 4, Board: "rp2040js-2"},
	}
	m := measuredMeta(p, 90*time.Second, 12, map[string]any{"rp2040js-1": nil}, recs)
	if m["wall_seconds"] != 90.0 || m["workers"] != 2 || m["host_timing_series"] != 12 || m["emulated"] != true || m["replicate"] != true {
		t.Errorf("measured %v", m)
	}
	imgs := m["images"].(map[string]any)
	one, two := imgs["mlkem@1"].(map[string]any), imgs["mlkem@2"].(map[string]any)
	if one["simulated_mhz"] != 40.0 || one["cycles"] != uint64(7) || one["board"] != "rp2040js-1" || one["clock_hz"] != uint32(133000000) {
		t.Errorf("mlkem@1: %v", one)
	}
	if _, ok := two["simulated_mhz"]; ok || two["wall_seconds"] != 4.0 {
		t.Errorf("mlkem@2 (no emulator record): %v", two)
	}
	if n := runNotes(true, "125 MHz"); len(n) != 3 || !strings.HasPrefix(n[2], "EMULATED") || !strings.Contains(n[0], "firmware's 125 MHz") {
		t.Errorf("emulated notes %v", n)
	}
	if n := runNotes(false, "133 MHz"); len(n) != 2 {
		t.Errorf("board notes %v", n)
	}
}
