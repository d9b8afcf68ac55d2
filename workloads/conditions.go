package workloads

import (
	"fmt"
	"slices"
	"time"
)

// A comparison of two runs' throughput means something only when the
// runs had the machine to themselves: a demo on a machine that other
// programs keep busy measured throughput rising with a global lock that
// made lock contention grow 563x. The demo therefore takes a LoadSnapshot
// before and after each run, and Judge decides from the figures whether
// the machine was too busy; the figures are kept with the captures.

// LoadSnapshot is the machine's counters at one moment.
type LoadSnapshot struct {
	Wall time.Time
	// Load1 is the 1-minute load average (0 where unknown).
	Load1 float64
	// Busy is the CPU time all CPUs have spent not idle since boot
	// (/proc/stat: everything but idle and iowait); 0 where unknown.
	Busy time.Duration
	// Own is the CPU time of this process and of its children it has
	// reaped (the server, perf): getrusage's self plus children.
	Own time.Duration
	// OK is false where the machine's counters cannot be read (not
	// Linux): then nothing is judged.
	OK bool
}

// RunLoad is what one run measured of the machine, between the snapshots
// taken before and after it.
type RunLoad struct {
	Variant string  `json:"variant"`
	WallS   float64 `json:"wall_s"`     // the run's wall time, start to reaped server
	BusyS   float64 `json:"busy_cpu_s"` // CPU time the whole machine was busy
	OwnS    float64 `json:"own_cpu_s"`  // of which this process, the server and perf
	Load1   float64 `json:"load1_after"`
	RPS     float64 `json:"requests_per_s"` // the run's throughput (2xx)
}

// OthersShare is the share (0..1) of the machine's CPU time in the run
// that other programs took: (busy - own) / (cpus × wall).
func (r RunLoad) OthersShare(cpus int) float64 {
	if cpus < 1 || r.WallS <= 0 {
		return 0
	}
	return max(r.BusyS-r.OwnS, 0) / (float64(cpus) * r.WallS)
}

// RunBetween is the RunLoad of a run between snapshots a and b.
func RunBetween(variant string, a, b LoadSnapshot, rps float64) RunLoad {
	return RunLoad{Variant: variant, WallS: b.Wall.Sub(a.Wall).Seconds(), BusyS: (b.Busy - a.Busy).Seconds(),
		OwnS: (b.Own - a.Own).Seconds(), Load1: b.Load1, RPS: rps}
}

// MachineLoad is what a demo measured of its machine: the figures Judge
// decides on, kept as conditions.json beside the capture folders.
type MachineLoad struct {
	CPUs       int       `json:"cpus"`
	LoadBefore float64   `json:"load1_before"` // 1-minute load average before the first run
	Runs       []RunLoad `json:"runs"`
	// Pairs are the throughput (requests/s, base then new) of each
	// interleaved pair of runs, the first pair first.
	Pairs [][2]float64 `json:"pairs,omitempty"`
	// Note says how the figures were taken, for recorded test data.
	Note string `json:"note,omitempty"`
}

// BusyShare is the share of the machine's CPU time other programs may
// take during a run before Judge calls the machine too busy. On a
// 2-core machine, one busy loop beside the demo takes about half; the
// demo's own runs use all the cores they get, so a quarter taken by
// others already moves throughput by more than the demo's variants
// differ on a quiet machine.
const BusyShare = 0.25

// Conditions is Judge's decision.
type Conditions struct {
	// Busy says the machine was too busy for the comparison to mean much.
	Busy bool `json:"busy"`
	// OthersShare is the largest share of the machine's CPU time other
	// programs took during a run; Variant names that run.
	OthersShare float64 `json:"others_share"`
	Variant     string  `json:"variant,omitempty"`
	// Sentence says so, for the report and the verdict ("" when not busy).
	Sentence string `json:"sentence,omitempty"`
	// Stable and Pairs are PairsAgree's answer on the interleaved pairs
	// of runs a busy machine made the demo add ("" when it added none).
	Stable bool   `json:"stable,omitempty"`
	Pairs  string `json:"pairs,omitempty"`
}

// Judge decides whether the machine was too busy during m's runs: busy
// when, during any run, other programs took more than BusyShare of its
// CPU time. The load average before the runs is only reported: the
// build `go run` does just before the demo raises it without taking
// anything from the runs.
func Judge(m MachineLoad) Conditions {
	var c Conditions
	for _, r := range m.Runs {
		if s := r.OthersShare(m.CPUs); s > c.OthersShare {
			c.OthersShare, c.Variant = s, r.Variant
		}
	}
	if c.OthersShare <= BusyShare {
		return c
	}
	c.Busy = true
	c.Sentence = fmt.Sprintf("The machine was too busy for this comparison to mean much: other programs took %.0f%% of its %d CPUs during the %s run (load average %.1f before the demo), so the two runs' throughput and shares may differ by more than the servers do; rerun on a quieter machine.",
		100*c.OthersShare, m.CPUs, c.Variant, m.LoadBefore)
	return c
}

// Contradiction is the sentence a demo adds when the throughput moved
// against its verdict: the verdict says a waiting bucket grew (the new
// server waits more) while throughput rose. grew is the verdict's
// principal bucket when it grew ("" otherwise); baseRPS and newRPS the
// two runs' requests/s. "" when there is nothing to say.
func Contradiction(grew string, baseRPS, newRPS float64) string {
	if grew == "" || grew == "cpu" || newRPS <= baseRPS {
		return ""
	}
	return fmt.Sprintf("Throughput rose (%.0f → %.0f requests/s) although %s grew: the throughput change goes against the verdict.", baseRPS, newRPS, grew)
}

// Repeats bound the interleaved runs a demo adds when the machine was
// too busy: at most MaxPairs pairs in all (the first included; a demo may
// ask for fewer), and no new pair once the demo has run MaxRepeatTime or
// the next pair would end after it.
const (
	MaxPairs      = 5
	MaxRepeatTime = 2 * time.Minute
)

// MorePairs says whether a demo that has run pairs pairs of runs in
// elapsed, the last of them taking last, starts another, given at most
// limit pairs (capped at MaxPairs).
func MorePairs(pairs, limit int, elapsed, last time.Duration) bool {
	return pairs < min(limit, MaxPairs) && elapsed+last <= MaxRepeatTime
}

// StableShare is how far apart (a fraction of their median) the pairs'
// throughput ratios may be for the change to count as stable.
const StableShare = 0.2

// PairsAgree judges interleaved pairs of runs' throughput (requests/s,
// base then new): stable when there are at least 3 pairs, every pair's
// throughput moved the same way and their ratios new/base lie within
// StableShare of their median. The sentence says what the pairs showed.
func PairsAgree(pairs [][2]float64) (bool, string) {
	var ratios []float64
	for _, p := range pairs {
		if p[0] > 0 {
			ratios = append(ratios, p[1]/p[0])
		}
	}
	if len(ratios) < 2 {
		return false, ""
	}
	sorted := slices.Sorted(slices.Values(ratios))
	lo, hi, med := sorted[0], sorted[len(sorted)-1], median(sorted)
	sameWay := hi < 1 || lo > 1
	stable := len(ratios) >= 3 && sameWay && (hi-lo) <= StableShare*med
	span := fmt.Sprintf("%d interleaved pairs of runs put the global lock's throughput at %.0f%% to %.0f%% of the baseline's (median %.0f%%)", len(ratios), 100*lo, 100*hi, 100*med)
	if stable {
		return true, span + ": that change held in every pair."
	}
	return false, span + ": the pairs disagree, so the throughput change is noise on this machine."
}

// median of sorted values.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
