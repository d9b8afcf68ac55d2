package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/profdiff/profdiff/diff/internal/stop"
	"github.com/profdiff/profdiff/diff/report"
)

// wideFlame is a report whose call tree has n leaves under one frame,
// each on both sides.
func wideFlame(n int) *report.Report {
	kids := make([]*report.Node, n)
	for i := range kids {
		kids[i] = node(fmt.Sprintf("main.f%06d", i), [2]float64{1, 2})
	}
	f := &report.Flame{Tree: node("root", [2]float64{}, node("main.main", [2]float64{}, kids...)),
		Sides: 2, Unit: "nanoseconds", Measure: report.MeasureShare, Labels: [2]string{"base", "new"}}
	return &report.Report{Blocks: []report.Block{report.Heading{Level: 1, Line: report.Line{report.Text("t")}}, f}}
}

// endsAfter is a context whose Err is nil for its first looks calls and
// context.Canceled from then on; it counts the calls.
type endsAfter struct {
	looks, calls int
}

func (c *endsAfter) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *endsAfter) Done() <-chan struct{}       { return nil }
func (c *endsAfter) Value(any) any               { return nil }
func (c *endsAfter) Err() error {
	c.calls++
	if c.calls > c.looks {
		return context.Canceled
	}
	return nil
}

// A context that has ended before Write begins gets no byte written, in
// every format, and Write returns its cause.
func TestWriteStoppedBeforehand(t *testing.T) {
	cause := errors.New("stopped by a signal")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	r := wideFlame(10)
	for _, f := range []Format{Table, Markdown, HTML, SVG, Folded, DiffFolded} {
		var buf bytes.Buffer
		err := Write(&buf, r, f, Options{Context: ctx})
		if !errors.Is(err, cause) || buf.Len() != 0 {
			t.Errorf("%s: %d bytes, error %v; want none and the cause", f, buf.Len(), err)
		}
	}
}

// A context that ends while the call tree is walked stops the walk at
// its next look, one every stop.Every nodes: the svg layout, the folded
// stacks and the html page's flame data of a tree of 50,000 nodes look
// at it 4 times (and context.Cause once more), not 49, when it ends
// after the third look, and nothing is written. (The page writes its
// head first, whose writes look too: its flame data is tested alone.)
func TestWriteStopsMidWalk(t *testing.T) {
	const nodes = 50_000
	r := wideFlame(nodes - 2)
	for _, f := range []Format{SVG, Folded} {
		ctx := &endsAfter{looks: 3}
		var buf bytes.Buffer
		err := Write(&buf, r, f, Options{Context: ctx})
		if !errors.Is(err, context.Canceled) || buf.Len() != 0 {
			t.Errorf("%s: %d bytes, error %v; want none and context.Canceled", f, buf.Len(), err)
		}
		if ctx.calls > ctx.looks+2 {
			t.Errorf("%s: the context was looked at %d times; want at most %d (every %d of %d nodes until it ended)", f, ctx.calls, ctx.looks+2, stop.Every, nodes)
		}
	}
	ctx := &endsAfter{looks: 3}
	if _, err := newFlameData(reportFlame(r), stop.New(ctx)); !errors.Is(err, context.Canceled) || ctx.calls > ctx.looks+2 {
		t.Errorf("html flame data: error %v after %d looks; want context.Canceled after at most %d", err, ctx.calls, ctx.looks+2)
	}
}
