package present

import (
	"fmt"
	"strings"

	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
)

// WaitOptions bound the rows of Wait's tables (0: all). The CSV records,
// like the JSON, hold every row whatever the bounds.
type WaitOptions struct {
	// Locks, Sites and Wakeups bound the locks shown, the waiter and
	// holder rows of each, and the wake-up edges.
	Locks, Sites, Wakeups int
}

// Wait is the report of the who-made-it-wait analysis: the verdict, a
// section per lock (its waiters and holders, how they were paired), the
// wake-up edges, the critical paths (in HTML each also a flame graph of
// the code charged), and the notes on what the data cannot tell. Values
// are amounts of time; a comparison shows base, new and Δ. CSV has one
// record per lock, waiter, holder, wake-up edge, critical path, path
// function, path bucket and note (waitRecords). JSON is r itself.
func Wait(r *result.Wait, o WaitOptions) *report.Report {
	v := waitView{r}
	rep := &report.Report{Title: "profdiff wait", JSON: r, Records: waitRecords(r), Verdict: waitVerdict(r)}
	rep.Blocks = append(rep.Blocks, report.Heading{Level: 2, Line: report.Line{report.Text("Locks: waiters beside their holders")}})
	if len(r.Locks) == 0 {
		rep.Blocks = append(rep.Blocks, report.Para{Lines: []report.Line{{report.Text("No lock waiting in these profiles.")}}})
	}
	for _, l := range limit(r.Locks, o.Locks) {
		rep.Blocks = append(rep.Blocks,
			report.Heading{Level: 3, Line: report.Line{report.Text("Lock "), report.Code(l.Name), report.Text(" (" + l.Evidence + ")")}})
		charged := "charged"
		if r.Sides == 2 {
			charged = "charged (new)"
		}
		t := &report.Table{Columns: append([]report.Column{report.Col("Role"), report.Col("Site")}, v.valueCols(report.RCol(charged))...)}
		for _, w := range limit(l.Waiters, o.Sites) {
			t.Rows = append(t.Rows, append([]report.Cell{report.Text("waits"), report.Code(w.Site)}, v.values(w.Value, report.None(""))...))
		}
		for _, h := range limit(l.Holders, o.Sites) {
			t.Rows = append(t.Rows, append([]report.Cell{report.Text("holds"), report.Code(h.Site)}, v.values(h.Value, report.Share(h.Charged[r.Sides-1]))...))
		}
		var lines []report.Line
		for _, m := range l.Match {
			lines = append(lines, report.Line{report.Text("matched by " + m)})
		}
		if l.Ambiguous != "" {
			lines = append(lines, report.Line{report.Text("ambiguous: " + l.Ambiguous).WithTone(report.ToneGrowth)})
		}
		if l.Half != "" {
			lines = append(lines, report.Line{report.Text(l.Half)})
		}
		rep.Blocks = append(rep.Blocks, t, report.Para{Lines: lines, Tight: true})
	}
	if len(r.Wakeups) > 0 {
		t := &report.Table{Columns: append([]report.Column{report.Col("Waiter"), report.Col("Woken by"), report.Col("Bucket")}, v.valueCols()...)}
		for _, e := range limit(r.Wakeups, o.Wakeups) {
			t.Rows = append(t.Rows, append([]report.Cell{report.Code(e.Waiter), report.Code(e.Waker), report.Text(e.Bucket)}, v.values(e.Value)...))
		}
		rep.Blocks = append(rep.Blocks, report.Heading{Level: 2, Line: report.Line{report.Text("Wake-ups: who ended each wait")}}, t)
	}
	for _, p := range r.Paths {
		rep.Blocks = append(rep.Blocks, report.Heading{Level: 2, Line: report.Line{report.Text("Critical path of "), report.Code(p.Site),
			report.Text(" (elapsed "), v.amounts(p.Elapsed), report.Text(")")}})
		t := &report.Table{Columns: append([]report.Column{report.Col("Charged to")}, v.valueCols()...)}
		for _, f := range limit(p.Functions, o.Sites) {
			t.Rows = append(t.Rows, append([]report.Cell{report.Code(f.Name)}, v.values(f.Value)...))
		}
		b := &report.Table{Columns: append([]report.Column{report.Col("Bucket")}, v.valueCols()...)}
		for _, x := range p.Buckets {
			b.Rows = append(b.Rows, append([]report.Cell{report.Text(x.Name)}, v.values(x.Value)...))
		}
		rep.Blocks = append(rep.Blocks, t, b)
		if f := pathFlame(r, p); f != nil {
			rep.Blocks = append(rep.Blocks, f)
		}
	}
	if len(r.Notes) > 0 {
		var lines []report.Line
		for _, n := range r.Notes {
			lines = append(lines, report.Line{report.Text("Note: " + n)})
		}
		rep.Blocks = append(rep.Blocks, report.Para{Lines: lines})
	}
	rep.Warnings = r.Warnings
	return rep
}

// waitRecords are the CSV rows of r, every one of them in the report's
// order: per lock a "lock" record (its waiting and the delay its holders
// released, how its halves were matched), its "waiter" and "holder" sites
// (a holder's charged share, a fraction 0..1 of the lock's waiting); the
// "wakeup" edges; per critical path a "path" record (its elapsed time),
// its "path-function" and "path-bucket" parts; and the "note"s. Values
// are raw nanoseconds: one side has value_ns, held_ns and charged; two
// have base_ns, new_ns and delta_ns (new less base), and base_ and new_
// held_ns and charged. A lock is named by lock and evidence together (a
// trace and a mutex profile of one run give two locks of one name), a
// path by path, its stack root first with its frames joined by ";"
// (paths of two stacks can share a site). The stacks of sites and wakers
// are in the JSON alone.
func waitRecords(r *result.Wait) *report.Table {
	two := r.Sides == 2
	cols := []string{"section", "lock", "evidence", "path", "name", "waker", "bucket"}
	if two {
		cols = append(cols, "base_ns", "new_ns", "delta_ns", "base_held_ns", "new_held_ns", "base_charged", "new_charged")
	} else {
		cols = append(cols, "value_ns", "held_ns", "charged")
	}
	t := &report.Table{Columns: report.Cols(append(cols, "match", "ambiguous", "half", "note")...)}
	// sides are a value's fields: one side's, or base, new and, with
	// delta, new less base; nil is empty fields.
	sides := func(x *[2]float64, delta bool) []report.Cell {
		n := 1
		switch {
		case two && delta:
			n = 3
		case two:
			n = 2
		}
		cells := make([]report.Cell, n)
		for i := range cells {
			switch {
			case x == nil:
				cells[i] = report.None("")
			case i == 2:
				cells[i] = report.ExactNum(x[1] - x[0])
			default:
				cells[i] = report.ExactNum(x[i])
			}
		}
		return cells
	}
	type rec struct {
		section, lock, evidence, path, name, waker, bucket string
		value, held, charged                               *[2]float64
		match, ambiguous, half, note                       string
	}
	add := func(x rec) {
		row := []report.Cell{report.Text(x.section), report.Text(x.lock), report.Text(x.evidence), report.Text(x.path),
			report.Text(x.name), report.Text(x.waker), report.Text(x.bucket)}
		row = append(append(append(row, sides(x.value, true)...), sides(x.held, false)...), sides(x.charged, false)...)
		t.Rows = append(t.Rows, append(row, report.Text(x.match), report.Text(x.ambiguous), report.Text(x.half), report.Text(x.note)))
	}
	for _, l := range r.Locks {
		add(rec{section: "lock", lock: l.Name, evidence: l.Evidence, name: l.Name, value: &l.Waited, held: &l.Held,
			match: strings.Join(l.Match, "; "), ambiguous: l.Ambiguous, half: l.Half})
		for _, w := range l.Waiters {
			add(rec{section: "waiter", lock: l.Name, evidence: l.Evidence, name: w.Site, value: &w.Value})
		}
		for _, h := range l.Holders {
			add(rec{section: "holder", lock: l.Name, evidence: l.Evidence, name: h.Site, value: &h.Value, charged: &h.Charged})
		}
	}
	for _, e := range r.Wakeups {
		add(rec{section: "wakeup", name: e.Waiter, waker: e.Waker, bucket: e.Bucket, value: &e.Value})
	}
	for _, p := range r.Paths {
		path := strings.Join(p.Stack, ";")
		add(rec{section: "path", path: path, name: p.Site, value: &p.Elapsed})
		for _, f := range p.Functions {
			add(rec{section: "path-function", path: path, name: f.Name, value: &f.Value})
		}
		for _, b := range p.Buckets {
			add(rec{section: "path-bucket", path: path, name: b.Name, bucket: b.Name, value: &b.Value})
		}
	}
	for _, n := range r.Notes {
		add(rec{section: "note", note: n})
	}
	return t
}

func limit[T any](xs []T, n int) []T {
	if n > 0 && len(xs) > n {
		return xs[:n]
	}
	return xs
}

type waitView struct{ *result.Wait }

// valueCols are the value columns: "time" for one side, base, new and Δ
// for two, then extra.
func (v waitView) valueCols(extra ...report.Column) []report.Column {
	cols := []report.Column{report.RCol("time")}
	if v.Sides == 2 {
		cols = []report.Column{report.RCol("base"), report.RCol("new"), report.RCol("Δ")}
	}
	return append(cols, extra...)
}

// values are the value cells of a row, then extra.
func (v waitView) values(x [2]float64, extra ...report.Cell) []report.Cell {
	cells := []report.Cell{report.Amount(x[0], "nanoseconds")}
	if v.Sides == 2 {
		cells = []report.Cell{report.Amount(x[0], "nanoseconds"), report.Amount(x[1], "nanoseconds"),
			report.Delta(x[1]-x[0], false, "").WithUnit("nanoseconds")}
	}
	return append(cells, extra...)
}

// amounts is one side's amount, or "base → new".
func (v waitView) amounts(x [2]float64) report.Cell {
	if v.Sides == 2 {
		return report.Phrase(report.Amount(x[0], "nanoseconds"), " → ", report.Amount(x[1], "nanoseconds"))
	}
	return report.Amount(x[0], "nanoseconds")
}

// waitVerdict names the principal holder, or says why none is named.
func waitVerdict(r *result.Wait) *report.Verdict {
	v := r.Verdict
	ns := func(x float64) report.Cell { return report.Amount(x, "nanoseconds") }
	var line report.Line
	switch {
	case v.Waited[0] == 0 && v.Waited[1] == 0:
		line = report.Cat("No lock waiting in these profiles.")
	case r.Sides == 2 && v.Holder != "" && v.Share > 1:
		line = report.Cat("Lock waiting grew from ", ns(v.Waited[0]), " to ", ns(v.Waited[1]), "; ", report.Code(v.Holder),
			", holding ", heldLocks(v), ", explains all of the growth (the waiting charged to it grew more than the whole, ",
			report.Share(v.Share).Places(0), " of it, while others' fell).")
	case r.Sides == 2 && v.Holder != "":
		line = report.Cat("Lock waiting grew from ", ns(v.Waited[0]), " to ", ns(v.Waited[1]), "; ", report.Code(v.Holder),
			", holding ", heldLocks(v), ", explains ", report.Share(v.Share).Places(0), " of the growth.")
	case r.Sides == 2 && v.Waited[1] <= v.Waited[0]:
		line = report.Cat("Lock waiting did not grow (", ns(v.Waited[0]), " → ", ns(v.Waited[1]), ").")
	case r.Sides == 2:
		line = report.Cat("Lock waiting grew from ", ns(v.Waited[0]), " to ", ns(v.Waited[1]), "; no one holder explains most of the growth.")
	case v.Holder != "":
		line = report.Cat(report.Code(v.Holder), " holds ", heldLocks(v), ": it is charged ",
			report.Share(v.Share).Places(0), " of the ", ns(v.Waited[0]), " of lock waiting.")
	default:
		line = report.Cat("No one holder explains most of the ", ns(v.Waited[0]), " of lock waiting.")
	}
	tone := report.ToneNone
	if r.Sides == 2 && v.Waited[1] > v.Waited[0] {
		tone = report.ToneGrowth
	}
	return &report.Verdict{Lines: []report.Line{line}, Tone: tone}
}

// heldLocks names what the verdict's holder holds: "the lock X waits
// for", or, for a holder charged the waiting of several locks (a thread
// holding several monitors at once), "N locks (the most waited for: X)".
func heldLocks(v result.WaitVerdict) report.Line {
	if v.Locks > 1 {
		return report.Cat(fmt.Sprintf("%d locks (the most waited for: ", v.Locks), report.Code(lockWaiter(v.Lock)), ")")
	}
	return report.Cat("the lock ", report.Code(lockWaiter(v.Lock)), " waits for")
}

// lockWaiter is the waiter part of a lock's name ("main.waitHere ←
// main.holdSlow"), or the whole name (a lock identity).
func lockWaiter(name string) string {
	w, _, _ := strings.Cut(name, " ← ")
	return w
}

// pathFlame is a critical path's charged stacks as a flame graph.
func pathFlame(r *result.Wait, p result.WaitPath) *report.Flame {
	if len(p.Stacks) == 0 {
		return nil
	}
	root := &report.Node{Name: "critical path of " + p.Site}
	for _, s := range p.Stacks {
		n := root
		n.Total[0] += s.Value[0]
		n.Total[1] += s.Value[1]
		for _, f := range s.Frames {
			var c *report.Node
			for _, x := range n.Children {
				if x.Name == f {
					c = x
					break
				}
			}
			if c == nil {
				c = &report.Node{Name: f}
				n.Children = append(n.Children, c)
			}
			c.Total[0] += s.Value[0]
			c.Total[1] += s.Value[1]
			n = c
		}
		n.Self[0] += s.Value[0]
		n.Self[1] += s.Value[1]
	}
	return &report.Flame{Tree: root, Sides: r.Sides, Unit: "nanoseconds", Measure: report.MeasureValue,
		Labels: [2]string{"base", "new"}, Buckets: []string{"path"}}
}
