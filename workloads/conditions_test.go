package workloads

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func readMachineLoad(t *testing.T, name string) MachineLoad {
	t.Helper()
	b, err := os.ReadFile("testdata/load/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var m MachineLoad
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// On the figures of real demo runs on a busy 2-core machine (see
// testdata/load/README.md) the machine is judged too busy, naming the
// run where others took most and by how much.
func TestJudgeRecorded(t *testing.T) {
	for _, c := range []struct {
		file  string
		share string // the share the sentence names
	}{
		{"busy-others.json", "83%"},
		{"busy-hogs.json", "94%"},
	} {
		m := readMachineLoad(t, c.file)
		got := Judge(m)
		if !got.Busy || got.Variant != "baseline" {
			t.Errorf("%s: %+v; want busy, during the baseline run", c.file, got)
		}
		want := "other programs took " + c.share + " of its 2 CPUs during the baseline run"
		if !strings.Contains(got.Sentence, want) || !strings.HasPrefix(got.Sentence, "The machine was too busy") {
			t.Errorf("%s: sentence %q; want it to say %q", c.file, got.Sentence, want)
		}
		// Take away what other programs used beyond BusyShare and the
		// same runs are judged quiet: the decision follows others' share,
		// not the load average (still as recorded).
		for i := range m.Runs {
			r := &m.Runs[i]
			r.BusyS = r.OwnS + BusyShare*float64(m.CPUs)*r.WallS*0.99
		}
		if q := Judge(m); q.Busy || q.Sentence != "" {
			t.Errorf("%s with others at just under %.0f%%: %+v; want not busy", c.file, 100*BusyShare, q)
		}
	}
	// Without figures (outside Linux) nothing is judged.
	if got := Judge(MachineLoad{CPUs: 2, LoadBefore: 20}); got.Busy {
		t.Errorf("no runs measured: %+v", got)
	}
}

func TestRunBetween(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := LoadSnapshot{Wall: t0, Busy: 100 * time.Second, Own: 2 * time.Second, OK: true}
	b := LoadSnapshot{Wall: t0.Add(10 * time.Second), Load1: 3.5, Busy: 118 * time.Second, Own: 10 * time.Second, OK: true}
	r := RunBetween("baseline", a, b, 1234)
	if r.WallS != 10 || r.BusyS != 18 || r.OwnS != 8 || r.Load1 != 3.5 || r.RPS != 1234 {
		t.Errorf("%+v", r)
	}
	if s := r.OthersShare(2); s != 0.5 {
		t.Errorf("others' share %v; want (18-8)/(2×10) = 0.5", s)
	}
}

// The live counters read on Linux: busy and own CPU time grow with work
// this process does.
func TestReadLoad(t *testing.T) {
	a := ReadLoad()
	if !a.OK {
		t.Skip("no machine counters here (not Linux)")
	}
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
	}
	b := ReadLoad()
	if b.Own <= a.Own || b.Busy < a.Busy {
		t.Errorf("after 200 ms of spinning: own %v → %v, busy %v → %v", a.Own, b.Own, a.Busy, b.Busy)
	}
}

// Throughput that moved against the verdict is said: the demo
// measured 6,596 → 7,261 requests/s while lock contention grew 563x.
func TestContradiction(t *testing.T) {
	if got := Contradiction("lock-contention", 6596, 7261); !strings.Contains(got, "Throughput rose (6596 → 7261 requests/s) although lock-contention grew") {
		t.Errorf("got %q", got)
	}
	for _, c := range []struct {
		grew     string
		base, nw float64
	}{
		{"lock-contention", 17418, 12966}, // fell, as the verdict says
		{"", 100, 200},                    // no growth named
		{"cpu", 100, 200},                 // more CPU work is no waiting
	} {
		if got := Contradiction(c.grew, c.base, c.nw); got != "" {
			t.Errorf("%+v: %q; want nothing", c, got)
		}
	}
}

// Repeats stop at MaxPairs pairs, or when the next pair would end after
// MaxRepeatTime.
func TestMorePairs(t *testing.T) {
	for _, c := range []struct {
		pairs, limit  int
		elapsed, last time.Duration
		want          bool
	}{
		{1, 5, 30 * time.Second, 30 * time.Second, true},
		{4, 5, 90 * time.Second, 12 * time.Second, true},
		{5, 5, 60 * time.Second, 10 * time.Second, false},
		{5, 9, 60 * time.Second, 10 * time.Second, false}, // MaxPairs at most
		{1, 1, 10 * time.Second, 10 * time.Second, false}, // no repeats asked
		{2, 5, 110 * time.Second, 12 * time.Second, false},
	} {
		if got := MorePairs(c.pairs, c.limit, c.elapsed, c.last); got != c.want {
			t.Errorf("%+v: %v", c, got)
		}
	}
}

// The pairs a busy machine made a real demo add (testdata/load/
// busy-pairs.json) disagree: one pair had the global lock faster.
func TestPairsAgreeRecorded(t *testing.T) {
	m := readMachineLoad(t, "busy-pairs.json")
	if !Judge(m).Busy || len(m.Pairs) != MaxPairs {
		t.Fatalf("recorded: busy %v, %d pairs", Judge(m).Busy, len(m.Pairs))
	}
	stable, s := PairsAgree(m.Pairs)
	if stable || s != "5 interleaved pairs of runs put the global lock's throughput at 53% to 143% of the baseline's (median 76%): the pairs disagree, so the throughput change is noise on this machine." {
		t.Errorf("stable %v: %q", stable, s)
	}
	// Without the pair where the lock was faster the rest still spread
	// too far (53% to 90%) to count as stable.
	if stable, _ := PairsAgree(slices.Delete(slices.Clone(m.Pairs), 1, 2)); stable {
		t.Error("ratios 53% to 90% judged stable")
	}
	// Arithmetic of the stable case: three pairs within a fifth of their
	// median, all falling.
	if stable, s := PairsAgree([][2]float64{{1000, 500}, {1000, 520}, {2000, 1100}}); !stable || !strings.Contains(s, "at 50% to 55% of the baseline's (median 52%): that change held in every pair.") {
		t.Errorf("stable %v: %q", stable, s)
	}
	if stable, s := PairsAgree(m.Pairs[:1]); stable || s != "" {
		t.Errorf("one pair: %v %q", stable, s)
	}
}
