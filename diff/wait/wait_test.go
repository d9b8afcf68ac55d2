package wait_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/wait"
	"github.com/profdiff/profdiff/diff/wait/waittest"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/gotrace"
)

func TestMain(m *testing.M) { os.Exit(waittest.Main(m)) }

// load reads the run's files as Analyze's inputs.
func load(t *testing.T, run *waittest.Run, names ...string) []wait.Input {
	t.Helper()
	var ins []wait.Input
	for _, n := range names {
		l, err := profile.Load(context.Background(), run.Path(n), profile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		in := wait.Input{Source: n, Kind: l.Kind, Profile: l.Profile}
		if l.Kind == profile.KindTrace {
			data, err := os.ReadFile(run.Path(n))
			if err != nil {
				t.Fatal(err)
			}
			if in.Blamed, err = gotrace.Blame(data, gotrace.BlameOptions{ProfilerFrame: profile.IsProfilerFrame}); err != nil {
				t.Fatal(err)
			}
		}
		ins = append(ins, in)
	}
	return ins
}

// lockOf returns the lock of evidence whose principal waiter site is
// waiter.
func lockOf(t *testing.T, r *result.Wait, evidence, waiter string) result.WaitLock {
	t.Helper()
	for _, l := range r.Locks {
		if l.Evidence == evidence && len(l.Waiters) > 0 && l.Waiters[0].Site == waiter {
			return l
		}
	}
	t.Fatalf("no %s lock waited for in %s among %+v", evidence, waiter, r.Locks)
	return result.WaitLock{}
}

func holderShare(l result.WaitLock, site string) float64 {
	for _, h := range l.Holders {
		if h.Site == site {
			return h.Charged[0]
		}
	}
	return 0
}

// TestHoldersFromProfiles: holdSlow holds the lock 80% of the time while
// four goroutines wait in waitHere; from the mutex and block profiles,
// the lock waitHere waits for is paired with holdSlow by delay totals,
// and holdSlow is charged at least 90% of the waiting, as the program's
// own measure of waiting while holdSlow held says.
func TestHoldersFromProfiles(t *testing.T) {
	run := waittest.Program(t, "-mode", "holdslow", "-hold", "8ms")
	r := wait.Analyze([][]wait.Input{load(t, run, "mutex.pb.gz", "block.pb.gz")}, wait.Options{})
	l := lockOf(t, r, wait.EvidenceProfiles, "main.waitHere")
	truth := float64(run.Truth.DuringHoldNs) / float64(run.Truth.WaitedNs)
	got := holderShare(l, "main.holdSlow")
	t.Logf("lock %s: waited %.3gs (program measured %.3gs), holdSlow charged %.3f (measured %.3f); match %q",
		l.Name, l.Waited[0]/1e9, float64(run.Truth.WaitedNs)/1e9, got, truth, l.Match)
	// 0.9 is the design's share (waiting while holdSlow holds); on a
	// machine so loaded that the program itself measured less (its
	// waiters, handed the lock, waited for a CPU while holding it), the
	// charge must be near what it measured.
	if want := min(0.9, truth-0.05); got < want {
		t.Errorf("holdSlow charged %.3f of the waiting, want ≥ %.3f (the program measured %.3f)", got, want, truth)
	}
	if w := l.Waited[0] / float64(run.Truth.WaitedNs); w < 0.8 || w > 1.2 {
		t.Errorf("waitHere waited %.3gs in the block profile, the program measured %.3gs", l.Waited[0]/1e9, float64(run.Truth.WaitedNs)/1e9)
	}
	if len(l.Match) == 0 || l.Ambiguous != "" || l.Half != "" {
		t.Errorf("pairing: match %q, ambiguous %q, half %q; want a match, unambiguous, both halves", l.Match, l.Ambiguous, l.Half)
	}
	if r.Verdict.Holder != "main.holdSlow" {
		t.Errorf("verdict names %q, want main.holdSlow (%+v)", r.Verdict.Holder, r.Verdict)
	}
}

// TestOneHalf: a block profile alone gives waiters only, and says so.
func TestOneHalf(t *testing.T) {
	run := waittest.Program(t, "-mode", "holdslow", "-hold", "8ms")
	r := wait.Analyze([][]wait.Input{load(t, run, "block.pb.gz")}, wait.Options{})
	l := lockOf(t, r, wait.EvidenceProfiles, "main.waitHere")
	if len(l.Holders) != 0 || l.Half != "waiters only: no mutex profile was given" {
		t.Errorf("holders %v, half %q", l.Holders, l.Half)
	}
	if len(r.Notes) == 0 || r.Verdict.Holder != "" {
		t.Errorf("notes %q, verdict %+v: want a note and no holder", r.Notes, r.Verdict)
	}
}

// TestHoldersFromTrace: the same program's execution trace names the
// waker of each blocked stretch. Each waiter is woken by the Unlock before
// its turn, often another waiter's; followed back along the wake-ups (the
// trace evidence), holdSlow, at its Unlock, is charged at least 90% of
// waitHere's lock waiting. The direct wake-up edges account for all of it,
// each woken by a goroutine's Unlock.
func TestHoldersFromTrace(t *testing.T) {
	// On a loaded machine a waiter handed the lock can wait for a CPU
	// long enough that the trace's charge strays from the program's own
	// measure: such a recording is made again, three times at most, as
	// TestCriticalPathChain's is.
	var (
		run       *waittest.Run
		r         *result.Wait
		l         result.WaitLock
		got, want float64
	)
	for attempt := 1; attempt <= 3; attempt++ {
		if attempt == 1 {
			run = waittest.Program(t, "-mode", "holdslow", "-hold", "8ms")
		} else {
			run = waittest.Again(t, "-mode", "holdslow", "-hold", "8ms")
		}
		r = wait.Analyze([][]wait.Input{load(t, run, "trace.out")}, wait.Options{})
		l = lockOf(t, r, wait.EvidenceTrace, "main.waitHere")
		got = holderShare(l, "main.holdSlow")
		truth := float64(run.Truth.DuringHoldNs) / float64(run.Truth.WaitedNs)
		want = min(0.9, truth-0.05)
		t.Logf("attempt %d: lock %s: waited %.3gs (measured %.3gs), holdSlow charged %.3f (measured %.3f)",
			attempt, l.Name, l.Waited[0]/1e9, float64(run.Truth.WaitedNs)/1e9, got, truth)
		if got >= want {
			break
		}
	}
	if got < want {
		t.Errorf("holdSlow charged %.3f of waitHere's lock waiting, want ≥ %.3f", got, want)
	}
	if !strings.Contains(strings.Join(l.Holders[0].Stacks[0].Frames, ";"), "Unlock") {
		t.Errorf("holdSlow's charged stack %q does not end in its Unlock", l.Holders[0].Stacks[0].Frames)
	}
	if w := l.Waited[0] / float64(run.Truth.WaitedNs); w < 0.8 || w > 1.2 {
		t.Errorf("waitHere waited %.3gs in the trace, the program measured %.3gs", l.Waited[0]/1e9, float64(run.Truth.WaitedNs)/1e9)
	}
	var woken float64
	for _, e := range r.Wakeups {
		if e.Waiter != "main.waitHere" || e.Bucket != "lock-contention" {
			continue
		}
		if e.Waker != "main.holdSlow" && e.Waker != "main.waitHere" {
			t.Errorf("waitHere woken by %s (%q)", e.Waker, e.WakerStack)
		}
		if !strings.Contains(strings.Join(e.WakerStack, ";"), "Unlock") {
			t.Errorf("waker stack %q is not an Unlock", e.WakerStack)
		}
		woken += e.Value[0]
	}
	if woken < 0.99*l.Waited[0] {
		t.Errorf("wake-up edges account for %.3gs of waitHere's %.3gs of lock waiting", woken/1e9, l.Waited[0]/1e9)
	}
}

// TestCriticalPathChain: C waits in waitChan for values B sends from
// passOn after taking the lock A holds in holdSlow; C's critical path
// charges at least 80% of the time C waited (its waiting time in the
// trace) to holdSlow, where A works holding the lock, not to B, which only
// passed the value on. (The time C was runnable, waiting for a CPU, is its
// own: on a loaded machine it is most of the rest.)
func TestCriticalPathChain(t *testing.T) {
	// On a loaded machine B's thread can be descheduled while its
	// goroutine runs, which the trace shows as B working: such a recording
	// is made again, three times at most, as the repository's other real
	// recordings are.
	var hold, pass float64
	for attempt := 1; attempt <= 3; attempt++ {
		hold, pass = chainShares(t)
		if hold >= 0.8 && pass <= 0.2 {
			return
		}
		t.Logf("attempt %d: holdSlow %.3f, passOn %.3f of C's waiting", attempt, hold, pass)
	}
	if hold < 0.8 {
		t.Errorf("holdSlow charged %.3f of C's waiting, want ≥ 0.8", hold)
	}
	if pass > 0.2 {
		t.Errorf("passOn (B) charged %.3f of C's waiting, want little", pass)
	}
}

// chainShares records the chain program once and returns the shares of
// C's waiting that C's critical path charges to holdSlow (A) and passOn
// (B).
func chainShares(t *testing.T) (hold, pass float64) {
	t.Helper()
	run := waittest.Again(t, "-mode", "chain", "-hold", "40ms")
	ins := load(t, run, "trace.out")
	r := wait.Analyze([][]wait.Input{ins}, wait.Options{})
	var p *result.WaitPath
	for i := range r.Paths {
		if r.Paths[i].Site == "main.waitChan" {
			p = &r.Paths[i]
		}
	}
	if p == nil {
		t.Fatalf("no critical path of waitChan among %+v", r.Paths)
	}
	// C's waiting in the trace, less the time the goroutines on its path
	// were runnable, waiting for a CPU (its own runnable time is not in
	// its waiting): on a loaded machine, that latency is the machine's.
	var waited, runnable float64
	for _, s := range ins[0].Profile.Sample {
		if wait.Site(wait.Frames(s)) != "main.waitChan" {
			continue
		}
		switch s.Label[profile.LabelState][0] {
		case "waiting":
			waited += float64(s.Value[1])
		case "runnable":
			runnable += float64(s.Value[1])
		}
	}
	fn := map[string]float64{}
	for _, f := range p.Functions {
		fn[f.Name] = f.Value[0]
	}
	waited -= fn[wait.SchedFunction] - runnable
	t.Logf("path of %s: elapsed %.3gs, C waited %.3gs (program measured %.3gs); functions %v; buckets %v",
		p.Site, p.Elapsed[0]/1e9, waited/1e9, float64(run.Truth.ChanWaitNs)/1e9, p.Functions, p.Buckets)
	return fn["main.holdSlow"] / waited, fn["main.passOn"] / waited
}

// TestWakerLabels: a profile whose samples carry profile.LabelWaker and
// nothing else (as perf sched_waking and JFR readers label theirs; here
// the Go trace's own samples, without gotrace.Blame) gives waker
// evidence: waitHere's lock waits paired with the goroutines whose Unlock
// woke them, holdSlow among them, the wake-up edges, and the same result
// twice (no map order in it).
func TestWakerLabels(t *testing.T) {
	run := waittest.Program(t, "-mode", "holdslow", "-hold", "8ms")
	in := load(t, run, "trace.out")[0]
	in.Blamed = nil
	r := wait.Analyze([][]wait.Input{{in}}, wait.Options{})
	l := lockOf(t, r, wait.EvidenceWaker, "main.waitHere")
	if holderShare(l, "main.holdSlow") == 0 || holderShare(l, "main.holdSlow")+holderShare(l, "main.waitHere") < 0.99 {
		t.Errorf("waker evidence holders %+v, want holdSlow and waitHere", l.Holders)
	}
	if len(r.Paths) != 0 {
		t.Errorf("critical paths without a timeline: %+v", r.Paths)
	}
	again := wait.Analyze([][]wait.Input{{in}}, wait.Options{})
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Errorf("two analyses of one profile differ")
	}
}

// TestVerdictMixedEvidence: a comparison whose base has mutex and block
// profiles and whose new side has those and a trace reads the evidence
// both sides have, so the trace's waiting does not look new.
func TestVerdictMixedEvidence(t *testing.T) {
	run := waittest.Program(t, "-mode", "holdslow", "-hold", "8ms")
	profiles := load(t, run, "mutex.pb.gz", "block.pb.gz")
	r := wait.Analyze([][]wait.Input{profiles, append(profiles, load(t, run, "trace.out")...)}, wait.Options{})
	if v := r.Verdict; v.Waited[0] != v.Waited[1] || v.Holder != "" {
		t.Errorf("verdict %+v: want the profiles' waiting on both sides, equal, and no holder of a growth", v)
	}
}
