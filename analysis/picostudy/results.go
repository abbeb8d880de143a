package picostudy

import (
	"fmt"

	"pqrepro/datasets/picodata"
	"pqrepro/internal/jsonnum"
)

// DecodeResults reads results/pico.json strictly and checks that it holds
// the study's schemes. Errors name the file by name, and jsonnum.Decode
// makes an unknown key an error. It is the study's one decoder of its
// results, for its stages and for the pipeline's comparison and
// calibration hooks.
func DecodeResults(name string, b []byte) (*Results, error) {
	r, err := jsonnum.Decode[Results](name, b)
	if err != nil {
		return nil, err
	}
	if r.Study != picodata.Study || len(r.Schemes) == 0 {
		return nil, fmt.Errorf("read %s: not pico results (study %q, %d schemes): rerun pico:analyze", name, r.Study, len(r.Schemes))
	}
	return r, nil
}

// Results is results/pico.json: everything the figures, tables and the
// paper's numbers are made from. It carries no timestamp, and its keys are
// sorted (encoded through a generic map), so the same run gives the same
// bytes.
type Results struct {
	Study   string `json:"study"`
	Run     string `json:"run"`
	Profile string `json:"profile"`
	// Board is meta.json's board, e.g. "rp2040js 1.4.1 (emulated)".
	Board string `json:"board"`
	// Emulated is true when the board is the emulator; Label is then
	// "emulated" (else "board"). Every figure and table shows it.
	Emulated bool   `json:"emulated"`
	Label    string `json:"label"`
	ClockHz  uint32 `json:"clock_hz"`
	Compiler string `json:"compiler"`
	CFlags   string `json:"cflags"`
	Seed     uint64 `json:"seed"`
	// Quantiles names the quantile definition of every p95/p99/median.
	Quantiles string      `json:"quantiles"`
	Energy    EnergyModel `json:"energy_model"`
	SRAMBytes int         `json:"sram_bytes" range:"0,"`
	// Schemes is keyed by the firmware's scheme name (ml-kem-512, ...).
	Schemes map[string]*Scheme `json:"schemes"`
	// Exchanges are full key exchanges, keyed by scheme.
	Exchanges map[string]*Exchange `json:"exchanges"`
	// Versus compares each ML-KEM parameter set with ECDH P-256.
	Versus map[string]*Versus `json:"mlkem_vs_ecdh"`
	// SignVerify is the time and energy of one sign plus one verify, per
	// signature scheme (the paper's "sign cycle").
	SignVerify map[string]*Cost `json:"sign_verify"`
	// SignVerifyVsECDSA is each ML-DSA parameter set's sign+verify energy
	// divided by ECDSA P-256's (the paper: ML-DSA-44's is lower); absent
	// when ECDSA did not run.
	SignVerifyVsECDSA map[string]float64 `json:"sign_verify_energy_vs_ecdsa"`
	Published         []PublishedValue   `json:"published"`
	M4                M4Comparison       `json:"cortex_m4"`
	NotMeasured       map[string]string  `json:"not_measured"`
	// Host is the same operations timed on the host CPU, when the run
	// has host timings.
	Host *Host `json:"host,omitempty"`
	// Recommendation tests the original's closing advice (SLH-DSA where
	// ML-DSA's signing time varies too much for a deadline) on the same
	// board: our extension, with no published value (recommendation.go).
	Recommendation *Recommendation `json:"recommendation"`
	// Boards is the board as a factor, when the run used more than one
	// board (emulator instance or real board); absent otherwise.
	Boards *BoardFactor `json:"boards,omitempty"`
	// Configurations sets the run's other configurations beside the
	// primary one (configurations.go), when it ran more than one; absent
	// otherwise. Schemes and everything above are the primary's.
	Configurations *Configurations `json:"configurations,omitempty"`
	// SigningLoops splits each ML-DSA set's signing cost by its
	// rejection loop (signing.go), when the firmware counted it; absent
	// for runs before the counts.
	SigningLoops []SigningLoop `json:"signing_loops,omitempty"`
}

// Host is the host-CPU column: scheme -> operation -> library.
type Host struct {
	CPU   string                                   `json:"cpu"`
	Cores int                                      `json:"cores"`
	Ops   map[string]map[string]map[string]*HostOp `json:"ops"`
}

// HostOp is one operation on the host with one library, in microseconds
// (wall clock, one call per repetition).
type HostOp struct {
	N        int      `json:"n" range:"0,"`
	MeanUs   *float64 `json:"mean_us"`
	MedianUs *float64 `json:"median_us"`
	P95Us    *float64 `json:"p95_us"`
	MinUs    *float64 `json:"min_us"`
	MaxUs    *float64 `json:"max_us"`
}

// EnergyModel is the paper's datasheet power model. That is, E = P x
// t with P = 3.3 V x 24 mA = 79.2 mW, so E[mJ] = t[ms] x 79.2 /
// 1000.
type EnergyModel struct {
	Volts      float64 `json:"volts"`
	Milliamps  float64 `json:"milliamps"`
	Milliwatts float64 `json:"milliwatts"`
	Formula    string  `json:"formula"`
}

// Scheme is one scheme's operations, memory and code size.
type Scheme struct {
	Family string         `json:"family"` // kem, signature, key-exchange
	Image  string         `json:"image"`
	Ops    map[string]*Op `json:"ops"`
	// PeakStack is the largest painted stack over the operations.
	PeakStackBytes uint32 `json:"peak_stack_bytes"`
	PeakStackOp    string `json:"peak_stack_op"`
	// Code is the scheme's own bytes in the image (its object files).
	Code CodeSize `json:"code"`
	// ImageFlashBytes is text+rodata+data of the whole image the scheme was
	// measured in (firmware, libc and shared code included); a flash build
	// would occupy this much. ImageStaticRAMBytes is data+bss+heap arena.
	ImageFlashBytes     uint32 `json:"image_flash_bytes"`
	ImageStaticRAMBytes uint32 `json:"image_static_ram_bytes"`
}

// CodeSize is what one component contributes to an image, by kind.
type CodeSize struct {
	Text       uint32 `json:"text"`
	Rodata     uint32 `json:"rodata"`
	Data       uint32 `json:"data"`
	Bss        uint32 `json:"bss"`
	FlashBytes uint32 `json:"flash_bytes"` // text + rodata + data
	RAMBytes   uint32 `json:"ram_bytes"`   // data + bss
}

// Op is the statistics of one operation, in milliseconds unless named
// otherwise. A statistic that is undefined (sd of one sample) is null.
type Op struct {
	N        int      `json:"n" range:"0,"`
	MeanMs   *float64 `json:"mean_ms"`
	SDMs     *float64 `json:"sd_ms"`
	MedianMs *float64 `json:"median_ms"`
	Q1Ms     *float64 `json:"q1_ms"`
	Q3Ms     *float64 `json:"q3_ms"`
	P95Ms    *float64 `json:"p95_ms"`
	P99Ms    *float64 `json:"p99_ms"`
	CV       *float64 `json:"cv" range:"0,"`
	// CVLower and CVUpper are the 95 % percentile bootstrap interval of
	// CV over the repetitions (set for "sign" only: the operation whose
	// time varies; cvInterval).
	CVLower        *float64  `json:"cv_lower,omitempty"`
	CVUpper        *float64  `json:"cv_upper,omitempty"`
	MinMs          *float64  `json:"min_ms"`
	MaxMs          *float64  `json:"max_ms"`
	MeanCycles     *float64  `json:"mean_cycles"`
	PeakStackBytes uint32    `json:"peak_stack_bytes"`
	PeakHeapBytes  uint32    `json:"peak_heap_bytes"`
	EnergyMJ       *float64  `json:"energy_mj"` // mean time x power
	SamplesMs      []float64 `json:"samples_ms,omitempty"`
	// MinCycles and MaxCycles bound the cycles of a signing operation
	// (set for "sign" only): their difference shows whether the time
	// depends on the message.
	MinCycles *uint64 `json:"min_cycles,omitempty"`
	MaxCycles *uint64 `json:"max_cycles,omitempty"`
	// MeanIterations is the mean count of an ML-DSA signature's rejection
	// loop (FIPS 204 Algorithm 7), when the firmware counted every one:
	// with the same keys, another message takes other paths.
	MeanIterations *float64 `json:"mean_iterations,omitempty"`
}

// Exchange is a full key exchange.
type Exchange struct {
	// Method says how it was obtained: "sum of means" (ML-KEM:
	// keygen + encaps + decaps) or "measured" (the firmware timed the
	// whole exchange as one operation: ECDH P-256 keygen x2 + shared x2).
	Method   string   `json:"method"`
	Ops      []string `json:"ops"`
	Ms       float64  `json:"ms"`
	EnergyMJ float64  `json:"energy_mj"`
}

// Versus is one ML-KEM parameter set against ECDH P-256.
type Versus struct {
	// Speedup = ECDH exchange time / ML-KEM exchange time.
	Speedup float64 `json:"speedup" range:"0,"`
	// EnergySaving = 1 - E(ML-KEM) / E(ECDH).
	EnergySaving float64 `json:"energy_saving" range:",1"`
	EnergyRatio  float64 `json:"energy_ratio" range:"0,"` // E(ML-KEM) / E(ECDH)
}

// Cost is a time and its energy.
type Cost struct {
	Ops      []string `json:"ops"`
	Ms       float64  `json:"ms"`
	EnergyMJ float64  `json:"energy_mj"`
}

// PublishedValue is one number the paper published beside ours.
type PublishedValue struct {
	Key      string   `json:"key"`
	Quantity string   `json:"quantity"`
	Unit     string   `json:"unit"`
	Paper    float64  `json:"paper"`
	Ours     *float64 `json:"ours"` // null: not measured in this run
	// Ratio = ours / paper.
	Ratio *float64 `json:"ratio"`
}

// M4Comparison sets our M0+ cycle counts beside pqm4's Cortex-M4 counts
// for the same PQClean clean code.
type M4Comparison struct {
	Source string  `json:"source"`
	Rows   []M4Row `json:"rows"`
	// RatioMin and RatioMax bound M0+ cycles / M4 cycles over the rows;
	// RatioGeoMean is their geometric mean.
	RatioMin     float64 `json:"ratio_min"`
	RatioMax     float64 `json:"ratio_max"`
	RatioGeoMean float64 `json:"ratio_geomean"`
}

// M4Row is one scheme and operation.
type M4Row struct {
	Scheme       string  `json:"scheme"`
	Op           string  `json:"op"`
	M4Cycles     float64 `json:"m4_cycles"`
	M0Cycles     float64 `json:"m0_cycles"`
	Ratio        float64 `json:"ratio"` // M0+ / M4
	M4StackBytes int     `json:"m4_stack_bytes"`
	M0StackBytes uint32  `json:"m0_stack_bytes"`
}
