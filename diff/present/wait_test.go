package present

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
)

// waitResult is a who-made-it-wait result of the shape package wait
// gives for its test program (holdSlow holding the lock waitHere waits
// for), on one side or, with the hold time doubled, two; the values are
// chosen, so the layout is pinned whatever a run measures.
func waitResult(sides int) *result.Wait {
	v := func(base, next float64) [2]float64 {
		if sides == 1 {
			return [2]float64{base}
		}
		return [2]float64{base, next}
	}
	stack := func(base, next float64, frames ...string) []result.WaitStack {
		return []result.WaitStack{{Frames: frames, Value: v(base, next)}}
	}
	return &result.Wait{
		Sides: sides,
		Locks: []result.WaitLock{{
			Name: "main.waitHere ← main.holdSlow", Evidence: "mutex+block",
			Waited: v(2.9e9, 3.5e9), Held: v(2.9e9, 3.5e9),
			Waiters: []result.WaitSite{{Site: "main.waitHere", Value: v(2.9e9, 3.5e9), Stacks: stack(2.9e9, 3.5e9, "main.main.func1", "main.waitHere", "sync.(*Mutex).Lock")}},
			Holders: []result.WaitSite{
				{Site: "main.holdSlow", Value: v(2.75e9, 3.45e9), Charged: [2]float64{2.75 / 2.9, 3.45 / 3.5}},
				{Site: "main.waitHere", Value: v(0.15e9, 0.05e9), Charged: [2]float64{0.15 / 2.9, 0.05 / 3.5}},
			},
			Match: []string{"call site: main.waitHere locks and unlocks",
				"delay totals: main.holdSlow released 2.75 s beyond what its own waiters waited, the 2.75 s that main.waitHere waited beyond what its own holders released"},
		}, {
			Name: "? ← runtime.runSafePointFn", Evidence: "mutex+block", Held: v(1500, 1400),
			Holders: []result.WaitSite{{Site: "runtime.runSafePointFn", Value: v(1500, 1400), Charged: [2]float64{1, 1}}},
			Half:    "holders only: no lock wait in the block profiles pairs with them (the runtime's own locks are not in block profiles)",
		}},
		Wakeups: []result.WakeEdge{
			{Waiter: "main.waitHere", Waker: "main.waitHere", Bucket: "lock-contention", Value: v(2.2e9, 2.6e9)},
			{Waiter: "main.waitHere", Waker: "main.holdSlow", Bucket: "lock-contention", Value: v(0.7e9, 0.9e9)},
			{Waiter: "main.main.func1", Waker: "[none: timer]", Bucket: "wait", Value: v(0.9e9, 0.4e9)},
		},
		Paths: []result.WaitPath{{
			Site: "main.waitHere", Stack: []string{"main.main.func1", "main.waitHere", "sync.(*Mutex).Lock"}, Elapsed: v(4e9, 4e9),
			Buckets:   []result.WaitPart{{Name: "cpu", Value: v(2.9e9, 3.5e9)}, {Name: "wait", Value: v(0.9e9, 0.4e9)}, {Name: "sched", Value: v(0.2e9, 0.1e9)}},
			Functions: []result.WaitPart{{Name: "main.holdSlow", Value: v(2.75e9, 3.45e9)}, {Name: "main.main.func1", Value: v(0.9e9, 0.4e9)}, {Name: "[runnable]", Value: v(0.2e9, 0.1e9)}, {Name: "main.waitHere", Value: v(0.15e9, 0.05e9)}},
			Stacks:    stack(2.75e9, 3.45e9, "main.holder", "main.holdSlow", "sync.(*Mutex).Unlock", "[running]"),
		}},
		Notes:   []string{"mutex and block profiles record no lock identity: their waiters and holders are paired by call site, receiver type and delay totals (see each lock's match)"},
		Verdict: result.WaitVerdict{Holder: "main.holdSlow", Lock: "main.waitHere ← main.holdSlow", Share: map[int]float64{1: 2.75 / 2.9, 2: 0.7 / 0.6}[sides], Waited: v(2.9e9, 3.5e9)},
	}
}

// TestGoldenWait pins the wait report's layout, one side and two, in the
// text formats and CSV (wait.holdslow.FORMAT.golden,
// wait.diff.FORMAT.golden).
func TestGoldenWait(t *testing.T) {
	for _, c := range []struct {
		name  string
		sides int
	}{{"holdslow", 1}, {"diff", 2}} {
		for _, f := range []render.Format{render.Table, render.Markdown, render.CSV} {
			var buf bytes.Buffer
			if err := render.Report(&buf, Wait(waitResult(c.sides), WaitOptions{Sites: 5}), f); err != nil {
				t.Fatal(err)
			}
			golden(t, "wait."+c.name+"."+string(f)+".golden", buf.Bytes())
		}
	}
}

// TestWaitHTML: each critical path is a flame graph of its charged stacks
// in the html page, rooted at the path, its value the stacks' total.
func TestWaitHTML(t *testing.T) {
	rep := Wait(waitResult(2), WaitOptions{})
	var flames []*report.Flame
	for _, b := range rep.Blocks {
		if f, ok := b.(*report.Flame); ok {
			flames = append(flames, f)
		}
	}
	if len(flames) != 1 || flames[0].Tree.Name != "critical path of main.waitHere" || flames[0].Tree.Total != [2]float64{2.75e9, 3.45e9} || flames[0].Sides != 2 {
		t.Fatalf("flames %+v, want one of main.waitHere's path", flames)
	}
	page := write(t, rep, render.HTML, render.Options{})
	if !strings.Contains(page, "critical path of main.waitHere") || !strings.Contains(page, "Wake-ups: who ended each wait") {
		t.Errorf("the html page lacks the path's flame graph or the wake-ups")
	}
}

// TestWaitVerdictSeveralLocks: a holder charged the waiting of several
// locks (a JFR thread holding three monitors at once) is named with how
// many it holds and the one waited for most, on one side and two.
func TestWaitVerdictSeveralLocks(t *testing.T) {
	for sides, want := range map[int]string{
		1: "holder holds 3 locks (the most waited for: java.lang.Object@0x1): it is charged 100% of the 1.2 s of lock waiting.",
		2: "holder, holding 3 locks (the most waited for: java.lang.Object@0x1), explains 90% of the growth.",
	} {
		r := &result.Wait{Sides: sides, Verdict: result.WaitVerdict{Holder: "holder", Lock: "java.lang.Object@0x1", Locks: 3, Share: 1, Waited: [2]float64{1.2e9}}}
		if sides == 2 {
			r.Verdict.Share, r.Verdict.Waited[1] = 0.9, 2.4e9
		}
		got := write(t, &report.Report{Verdict: waitVerdict(r)}, render.Table, render.Options{})
		if !strings.Contains(got, want) {
			t.Errorf("%d sides: verdict %q, want it to say %q", sides, got, want)
		}
	}
}

// TestWaitCSV reads the wait report's CSV back, one side and two, with
// the tables bounded to one row each: the header names the sides' value
// columns, every record has the header's fields, and every lock, site,
// wake-up edge, path part and note of the result is a record, in the
// result's order, its values raw nanoseconds.
func TestWaitCSV(t *testing.T) {
	for _, c := range []struct {
		sides  int
		values []string
	}{
		{1, []string{"value_ns", "held_ns", "charged"}},
		{2, []string{"base_ns", "new_ns", "delta_ns", "base_held_ns", "new_held_ns", "base_charged", "new_charged"}},
	} {
		r := waitResult(c.sides)
		out := write(t, Wait(r, WaitOptions{Locks: 1, Sites: 1, Wakeups: 1}), render.CSV, render.Options{})
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll() // also fails on a record of another length
		if err != nil {
			t.Fatalf("%d sides: %v\n%s", c.sides, err, out)
		}
		header := append(append([]string{"section", "lock", "evidence", "path", "name", "waker", "bucket"}, c.values...), "match", "ambiguous", "half", "note")
		if !slices.Equal(recs[0], header) {
			t.Fatalf("%d sides: header %q, want %q", c.sides, recs[0], header)
		}
		col := func(rec []string, name string) string { return rec[slices.Index(header, name)] }
		var want []string // section and name of each record
		site := func(s result.WaitSite) string { return s.Site }
		part := func(p result.WaitPart) string { return p.Name }
		for _, l := range r.Locks {
			want = append(append(append(want, "lock "+l.Name), named("waiter", l.Waiters, site)...), named("holder", l.Holders, site)...)
		}
		want = append(want, named("wakeup", r.Wakeups, func(e result.WakeEdge) string { return e.Waiter })...)
		for _, p := range r.Paths {
			want = append(append(append(want, "path "+p.Site), named("path-function", p.Functions, part)...), named("path-bucket", p.Buckets, part)...)
		}
		want = append(want, named("note", r.Notes, func(string) string { return "" })...)
		var got []string
		for _, rec := range recs[1:] {
			got = append(got, col(rec, "section")+" "+col(rec, "name"))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d sides: records\n%q\nwant\n%q", c.sides, got, want)
		}
		// holdSlow's holder record: its raw values and charged share.
		h := r.Locks[0].Holders[0]
		hold := recs[1+1+len(r.Locks[0].Waiters)]
		wantHold := map[string]string{"value_ns": "2750000000", "held_ns": "", "charged": fmt.Sprint(h.Charged[0])}
		if c.sides == 2 {
			wantHold = map[string]string{"base_ns": "2750000000", "new_ns": "3450000000", "delta_ns": "700000000",
				"base_charged": fmt.Sprint(h.Charged[0]), "new_charged": fmt.Sprint(h.Charged[1])}
		}
		for k, v := range wantHold {
			if col(hold, k) != v {
				t.Errorf("%d sides: holdSlow's %s is %q, want %q", c.sides, k, col(hold, k), v)
			}
		}
		if col(hold, "lock") != r.Locks[0].Name || col(hold, "evidence") != "mutex+block" {
			t.Errorf("%d sides: holdSlow's record names lock %q (%s), want %q", c.sides, col(hold, "lock"), col(hold, "evidence"), r.Locks[0].Name)
		}
	}
}

// named is section and the name of each of xs, one string each.
func named[T any](section string, xs []T, name func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = section + " " + name(x)
	}
	return out
}
