package chrometrace

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/render/browser"
	"github.com/profdiff/profdiff/profile/internal/labels"
)

// TestMain stops the Chromium that browser.Open started after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	browser.Close()
	os.Exit(code)
}

// spinJS defines hot(ms), which keeps the JavaScript thread busy for ms
// milliseconds and returns the milliseconds it measured.
const spinJS = `function hot(ms) {
	const start = performance.now();
	let x = 0;
	while (performance.now() - start < ms) x += Math.sqrt(x + 1);
	globalThis.sink = x;
	return performance.now() - start;
}`

// inclusive sums the wall time of the samples whose stack holds fn.
func inclusive(p *pprofile.Profile, fn string) int64 {
	var v int64
	for _, s := range p.Sample {
		if slices.ContainsFunc(s.Location, func(l *pprofile.Location) bool { return l.Line[0].Function.Name == fn }) {
			v += s.Value[len(s.Value)-1]
		}
	}
	return v
}

// TestNodeTraceEvents records a trace with `node --trace-events-enabled`
// (which writes duration events, no CPU samples) around a timer callback
// that spins for 100 ms, and reads it: node's RunTimers event holds that
// callback's time.
func TestNodeTraceEvents(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found: skipping the Node.js trace-events recording")
	}
	dir := t.TempDir()
	cmd := exec.Command(node, "--trace-events-enabled", "--trace-event-categories", "v8,node",
		"-e", spinJS+`; setTimeout(() => console.log(hot(100)), 1)`)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var spun float64
	if err := json.Unmarshal(out, &spun); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "node_trace.1.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !Looks(data) {
		t.Fatal("Looks is false for node's trace")
	}
	p, _, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if p.Comments[0] != CommentDurations {
		t.Errorf("comment %q, want %q", p.Comments[0], CommentDurations)
	}
	// RunTimers holds the callback, so at least its spin; the timer's own
	// bookkeeping around it is small next to 100 ms even when the machine
	// is busy, so a duration read twice (or nested wrongly) would reach 2x.
	got := float64(inclusive(p, "RunTimers")) / 1e6
	if got < spun || got >= 2*spun {
		t.Errorf("RunTimers holds %.1f ms; the callback in it spun %.1f ms", got, spun)
	}
	for _, s := range p.Sample {
		if len(s.Label[labels.Thread]) != 1 {
			t.Fatalf("sample without one thread label: %v", s.Label)
		}
	}
}

// TestChromiumPerformanceTrace records a DevTools performance trace in
// headless Chromium, through the DevTools protocol as DevTools does, with
// V8's sampling profiler on (disabled-by-default-v8.cpu_profiler), around
// three calls of hot: the stacks under hot hold at least the middle
// call's measured time (less 15%) and at most all three calls' (plus 15%).
func TestChromiumPerformanceTrace(t *testing.T) {
	html := filepath.Join(t.TempDir(), "spin.html")
	if err := os.WriteFile(html, []byte("<!doctype html><title>spin</title><script>"+spinJS+"</script>"), 0o644); err != nil {
		t.Fatal(err)
	}
	page := browser.Open(t, html)
	done := make(chan io.StreamHandle, 1)
	start := chromedp.Action[chromedp.Void](func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		if err := chromedp.Listen(ctx, func(ev any) {
			if c, ok := ev.(*tracing.EventTracingComplete); ok {
				done <- c.Stream
			}
		}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := chromedp.Call(ctx, tracing.Start, tracing.StartParams{
			TransferMode: tracing.StartTransferModeReturnAsStream,
			TraceConfig: &tracing.TraceConfig{IncludedCategories: []string{
				"devtools.timeline", "v8.execute", "disabled-by-default-v8.cpu_profiler",
			}},
		})
		return chromedp.Void{}, err
	})
	if err := page.Do(start); err != nil {
		t.Fatalf("Tracing.start: %v", err)
	}
	// V8's profiler starts on the page's thread some time after
	// Tracing.start returns, and its last chunk of samples may miss the
	// trace when it ends: the calls before and after the middle one take
	// that slack, so the middle call's whole time is in the samples.
	var before, spun, after float64
	page.Eval("hot(200)", &before)
	page.Eval("hot(300)", &spun)
	page.Eval("hot(200)", &after)
	var data []byte
	stop := chromedp.Action[chromedp.Void](func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		if _, err := chromedp.Call(ctx, tracing.End, struct{}{}); err != nil {
			return chromedp.Void{}, err
		}
		var h io.StreamHandle
		select {
		case h = <-done:
		case <-ctx.Done():
			return chromedp.Void{}, ctx.Err()
		}
		for {
			r, err := chromedp.Call(ctx, io.Read, io.ReadParams{Handle: h})
			if err != nil {
				return chromedp.Void{}, err
			}
			data = append(data, r.Data...)
			if r.EOF {
				break
			}
		}
		_, err := chromedp.Call(ctx, io.Close, io.CloseParams{Handle: h})
		return chromedp.Void{}, err
	})
	if err := page.Do(stop); err != nil {
		t.Fatalf("Tracing.end: %v", err)
	}
	if !Looks(data) {
		t.Fatalf("Looks is false for Chromium's trace (%d bytes)", len(data))
	}
	p, warns, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes, %d samples, warnings %q", len(data), len(p.Sample), warns)
	if p.Comments[0] != CommentV8Samples {
		t.Fatalf("comment %q, want %q", p.Comments[0], CommentV8Samples)
	}
	got := float64(inclusive(p, "hot")) / 1e6
	t.Logf("stacks under hot hold %.1f ms; hot measured %.1f, %.1f and %.1f ms", got, before, spun, after)
	if got < spun*0.85 || got > (before+spun+after)*1.15 {
		t.Errorf("stacks under hot hold %.1f ms, not between 85%% of the middle call's %.1f ms and 115%% of all three calls' %.1f ms", got, spun, before+spun+after)
	}
}
