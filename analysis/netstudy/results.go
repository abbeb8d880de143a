package netstudy

import (
	"fmt"

	"pqrepro/analysis/stats"
	"pqrepro/internal/jsonnum"
)

// Num is internal/jsonnum's: rounded to 12 significant digits so that
// results/net.json is the same on every platform, null for NaN.
type Num = jsonnum.Num

// DecodeResults reads results/net.json strictly and checks that it holds
// the comparisons and toolchain results. Errors name the file by name, and
// jsonnum.Decode makes an unknown key an error. It is the study's one
// decoder of its results, for its stages and for the pipeline's comparison
// and calibration hooks.
func DecodeResults(name string, b []byte) (*Results, error) {
	res, err := jsonnum.Decode[Results](name, b)
	if err != nil {
		return nil, err
	}
	if len(res.Comparisons) == 0 || len(res.Design.Groups) != 2 {
		return nil, fmt.Errorf("%s: no comparisons (rerun %s)", name, stageAnalyze)
	}
	if res.Toolchains == nil || len(res.Toolchains.PerToolchain) != len(res.Toolchains.Levels) || len(res.Toolchains.Levels) == 0 {
		return nil, fmt.Errorf("%s: no toolchain results (rerun %s)", name, stageAnalyze)
	}
	return res, nil
}

// Results is results/net.json.
type Results struct {
	Study   string `json:"study"`
	Run     string `json:"run"` // run folder, relative to the root
	RunID   string `json:"run_id"`
	Profile string `json:"profile"`
	Design  Design `json:"design"`
	// Latency and Bytes say what was measured (see the package doc).
	Latency       string         `json:"latency"`
	Bytes         string         `json:"bytes"`
	Params        ResultParams   `json:"params"`
	Series        []Series       `json:"series"`
	Comparisons   []Comparison   `json:"comparisons"`
	Distributions []Distribution `json:"distributions"`
	// Scenarios are the scenario-level differences: the unit of
	// replication is the series (one per round), and the interval the
	// paper gives for a scenario is over its series (inference.go).
	Scenarios  []ScenarioEffect `json:"scenarios"`
	Published  Published        `json:"published"`
	Reproduced Reproduced       `json:"reproduced"`
	// Toolchains is the toolchain factor (toolchain.go): every toolchain's
	// comparisons and the changes from the primary one. The fields above
	// are the primary toolchain's.
	Toolchains *Toolchains `json:"toolchains"`
	// Hygiene is the measurement hygiene (hygiene.go): handshakes touched
	// by a late packet, the comparisons without them, and the serial
	// controls against their concurrent runs.
	Hygiene *Hygiene `json:"hygiene"`
	// Normalised sets each comparison beside the host's own prediction
	// of it from the run's probe (normalised.go), for the comparison
	// across hosts; empty before the analysis fills it.
	Normalised []NormalisedDifference `json:"normalised"`
}

// ResultParams records the analysis parameters.
type ResultParams struct {
	MaxLag             int     `json:"max_lag"`
	Alpha              float64 `json:"alpha" range:"0,1"`
	BootstrapSeed      uint64  `json:"bootstrap_seed"`
	BootstrapStream    uint64  `json:"bootstrap_stream"`
	BootstrapResamples int     `json:"bootstrap_resamples" range:"0,"`
	// Resampling says how the intervals resample a series (inference.go).
	Resampling string  `json:"resampling"`
	Level      float64 `json:"level" range:"0,1"`
	Quantiles  string  `json:"quantiles"`
}

// Summary is stats.Summary with JSON names.
type Summary = jsonnum.Summary

func summary(s stats.Summary) Summary { return s.JSON() }

// Series is one scenario x round x group: its handshakes in time order.
type Series struct {
	Scenario string `json:"scenario"`
	Round    int    `json:"round"`
	Group    string `json:"group"`
	Attempts int    `json:"attempts" range:"0,"`
	// OK counts successful handshakes with a captured latency and byte
	// counts: the sample. Failed counts attempts whose handshake failed
	// (by reason in FailureReasons).
	OK              int            `json:"ok" range:"0,"`
	Failed          int            `json:"failed" range:"0,"`
	FailureReasons  map[string]int `json:"failure_reasons,omitempty"`
	Retransmissions int            `json:"retransmissions" range:"0,"` // summed over the sample
	LatencyMs       Summary        `json:"latency_ms"`
	FrameBytes      Summary        `json:"frame_bytes"`   // per connection, both directions
	PayloadBytes    Summary        `json:"payload_bytes"` // per connection, both directions
	// Medians per direction (client to server, server to client).
	FrameC2S   Num    `json:"frame_c2s_median"`
	FrameS2C   Num    `json:"frame_s2c_median"`
	PayloadC2S Num    `json:"payload_c2s_median"`
	PayloadS2C Num    `json:"payload_s2c_median"`
	Serial     Serial `json:"serial"`
}

// Serial holds the serial-dependence diagnostics of a latency series.
// That is, on the raw values and on their ranks (stats.Ranks), which
// heavy tails cannot hide dependence from, the effective sample size on
// the ranks and the block length of the series' block bootstrap.
type Serial struct {
	ACF           []Num `json:"acf"` // lags 1..len, raw values
	LjungBoxQ     Num   `json:"ljung_box_q"`
	LjungBoxP     Num   `json:"ljung_box_p" range:"0,1"`
	RankACF       []Num `json:"rank_acf"` // lags 1..len, ranks
	RankLjungBoxQ Num   `json:"rank_ljung_box_q"`
	RankLjungBoxP Num   `json:"rank_ljung_box_p" range:"0,1"`
	// NEff = n/Tau on the ranks, Tau = 1 + 2 sum_{k<=NEffLag} r_k
	// truncated by Geyer's initial positive sequence (stats.EffectiveN).
	NEff    Num `json:"n_eff" range:"0,"`
	Tau     Num `json:"tau"`
	NEffLag int `json:"n_eff_lag"`
	// Block is the circular block bootstrap's block length
	// (stats.BlockLength on the ranks), 0 when the series is too short.
	Block int    `json:"block_length" range:"0,"`
	Lags  int    `json:"lags"`
	Runs  int    `json:"runs"`
	RunsZ Num    `json:"runs_z"`
	RunsP Num    `json:"runs_p" range:"0,1"`
	Note  string `json:"note,omitempty"`
}

// Comparison is one of the paper's comparisons: the target group against
// the baseline group in one scenario and round.
type Comparison struct {
	Scenario string  `json:"scenario"`
	RTTms    float64 `json:"rtt_ms"`
	Round    int     `json:"round"`
	Baseline string  `json:"baseline"`
	Target   string  `json:"target"`
	NBase    int     `json:"n_baseline" range:"0,"`
	NTarget  int     `json:"n_target" range:"0,"`
	// Latency medians, the difference target - baseline in ms and in
	// percent of the baseline median, and its circular block bootstrap
	// interval (each series resampled in blocks, inference.go) with the
	// replicates' SD; the independent percentile bootstrap's interval
	// beside it for the record (it treats the handshakes as independent);
	// the block lengths and effective sizes of both series. Note says why
	// an interval is missing (null).
	BaseMedianMs   Num `json:"baseline_median_ms"`
	TargetMedianMs Num `json:"target_median_ms"`
	DiffMs         Num `json:"diff_ms"`
	DiffPct        Num `json:"diff_pct"`
	DiffLowerMs    Num `json:"diff_lower_ms"`
	DiffUpperMs    Num `json:"diff_upper_ms"`
	DiffSEMs       Num `json:"diff_se_ms"`
	IndepLowerMs   Num `json:"independent_lower_ms"`
	IndepUpperMs   Num `json:"independent_upper_ms"`
	BlockBase      int `json:"block_baseline" range:"0,"`
	BlockTarget    int `json:"block_target" range:"0,"`
	NEffBase       Num `json:"n_eff_baseline" range:"0,"`
	NEffTarget     Num `json:"n_eff_target" range:"0,"`
	// P is the two-sided block bootstrap z test of no difference
	// (Estimate/SE), PAdj Bonferroni over the comparisons; Significant:
	// PAdj < alpha. Both are floored at stats.PFloor when printed.
	P    Num    `json:"p_block_z" range:"0,1"`
	PAdj Num    `json:"p_block_z_bonferroni" range:"0,1"`
	Note string `json:"note,omitempty"`
	// A12 = P(target latency > baseline latency) + ties/2.
	A12          Num    `json:"a12" range:"0,1"`
	A12Magnitude string `json:"a12_magnitude"`
	// Mann-Whitney U (two-sided), Bonferroni-adjusted over the
	// comparisons: a supplement only, it treats the handshakes as
	// independent (its n is far above n_eff).
	MWU         Num    `json:"mwu_u"`
	MWUP        Num    `json:"mwu_p" range:"0,1"`
	MWUPAdj     Num    `json:"mwu_p_bonferroni" range:"0,1"`
	MWUMethod   string `json:"mwu_method"`
	Significant bool   `json:"significant"`
	// Bytes per connection (medians) and growth in percent.
	BaseFrame        Num  `json:"baseline_frame_bytes"`
	TargetFrame      Num  `json:"target_frame_bytes"`
	FrameGrowthPct   Num  `json:"frame_growth_pct"`
	BasePayload      Num  `json:"baseline_payload_bytes"`
	TargetPayload    Num  `json:"target_payload_bytes"`
	PayloadGrowthPct Num  `json:"payload_growth_pct"`
	HigherLatency    bool `json:"target_higher_latency"`
	HigherBytes      bool `json:"target_higher_bytes"`
}

// Distribution is the latency distribution of one group in one scenario
// (the largest round), as quantiles for the figure.
type Distribution struct {
	Scenario    string    `json:"scenario"`
	Round       int       `json:"round"`
	Group       string    `json:"group"`
	Probs       []float64 `json:"probs"`
	QuantilesMs []Num     `json:"quantiles_ms"`
}

// Reproduced are this run's numbers in the form of Published.
type Reproduced struct {
	Handshakes       int    `json:"handshakes" range:"0,"` // successful, in the sample
	Attempts         int    `json:"attempts" range:"0,"`
	Failed           int    `json:"failed" range:"0,"`
	Comparisons      int    `json:"comparisons" range:"0,"`
	Round            int    `json:"round"` // the largest round of the run
	DiffMsMin        Num    `json:"diff_ms_min"`
	DiffMsMax        Num    `json:"diff_ms_max"`
	Fastest          string `json:"fastest"` // scenario with the smallest RTT
	Slowest          string `json:"slowest"`
	RelIncFastestPct Num    `json:"rel_increase_fastest_pct"`
	RelIncSlowestPct Num    `json:"rel_increase_slowest_pct"`
	FrameGrowthMin   Num    `json:"frame_growth_min_pct"`
	FrameGrowthMax   Num    `json:"frame_growth_max_pct"`
	PayloadGrowthMin Num    `json:"payload_growth_min_pct"`
	PayloadGrowthMax Num    `json:"payload_growth_max_pct"`
	HigherLatency    int    `json:"target_higher_latency" range:"0,"` // comparisons where the hybrid's median is higher
	HigherBytes      int    `json:"target_higher_bytes" range:"0,"`
	Significant      int    `json:"significant" range:"0,"` // Bonferroni-adjusted block bootstrap z test below alpha
}
