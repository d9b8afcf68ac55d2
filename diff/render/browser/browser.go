// Package browser is a test harness: it opens a page in headless Chromium
// through chromedp, records the console errors, uncaught exceptions and
// network requests the page makes, evaluates JavaScript in it and takes
// screenshots. The html format's tests (diff/render, cmd/profdiff) use it
// to check the page in a real browser; it is not part of profdiff's
// command.
//
// Open skips the test, with its reason, when Chromium is not installed
// (/usr/bin/chromium, or chromium or chromium-browser on PATH).
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Page is a page open in a tab of headless Chromium.
type Page struct {
	t   testing.TB
	ctx context.Context
	URL string

	mu       sync.Mutex
	errors   []string
	requests []string
}

// Path is where Chromium is, or "" when it is not installed.
func Path() string {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, n := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// Open loads the file at path from file:// in a new tab of the test
// binary's Chromium, waiting for it to load, and closes the tab when the
// test ends. The first Open starts that Chromium (headless, no sandbox,
// no GPU, no QUIC, no background networking, a fresh profile in a
// temporary folder); Close stops it, and the kernel does when the test
// binary exits. Starting one per page cost most of a page's test. Open
// skips t when Chromium is absent.
func Open(t testing.TB, path string) *Page {
	t.Helper()
	exe := Path()
	if exe == "" {
		t.Skip("chromium is not installed (apt-get install chromium): skipping the browser test")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	bctx, err := start(exe)
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancelTab := chromedp.NewContext(bctx)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab() })
	p := &Page{t: t, ctx: ctx, URL: (&url.URL{Scheme: "file", Path: abs}).String()}
	if err := chromedp.Listen(ctx, p.listen); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(p.URL)); err != nil {
		t.Fatalf("open %s in chromium: %v", p.URL, err)
	}
	return p
}

// shared is the test binary's Chromium: its first tab's context, which
// Open's tabs are children of.
var shared struct {
	sync.Mutex
	ctx    context.Context
	cancel func()
	dir    string
	err    error
}

// start returns the context of the shared Chromium's first tab, starting
// it at the first call.
func start(exe string) (context.Context, error) {
	shared.Lock()
	defer shared.Unlock()
	if shared.ctx != nil || shared.err != nil {
		return shared.ctx, shared.err
	}
	dir, err := os.MkdirTemp("", "profdiff-chromium")
	if err != nil {
		shared.err = err
		return nil, err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true), chromedp.UserDataDir(dir),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancel()
		cancelAlloc()
		os.RemoveAll(dir)
		shared.err = err
		return nil, err
	}
	shared.ctx, shared.dir = ctx, dir
	shared.cancel = func() { cancel(); cancelAlloc() }
	return ctx, nil
}

// Close stops the shared Chromium, if Open started it, and removes its
// profile; a package's TestMain calls it after the tests.
func Close() {
	shared.Lock()
	defer shared.Unlock()
	if shared.cancel != nil {
		shared.cancel()
		os.RemoveAll(shared.dir)
	}
	shared.ctx, shared.cancel, shared.err = nil, nil, nil
}

// listen records errors and requests.
func (p *Page) listen(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, strings.Trim(string(a.Value), `"`)+a.Description)
			}
			p.errors = append(p.errors, "console."+string(ev.Type)+": "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		p.errors = append(p.errors, fmt.Sprintf("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg))
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			p.errors = append(p.errors, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, ev.Request.URL)
	}
}

// Errors are the console errors, exceptions and error log entries so far.
func (p *Page) Errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errors...)
}

// Requests are the URLs of every network request so far, the page's own
// included.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// Eval evaluates the JavaScript expression js in the page and stores its
// value, as JSON decodes it, in out (which may be nil); a promise is
// awaited. It fails the test on an error.
func (p *Page) Eval(js string, out any) {
	p.t.Helper()
	if err := p.TryEval(js, out); err != nil {
		p.t.Fatalf("eval %s: %v", js, err)
	}
}

// TryEval is Eval returning its error. js may be statements: the value
// is the last one's, as eval gives it; it travels as JSON.
func (p *Page) TryEval(js string, out any) error {
	src, err := json.Marshal(js)
	if err != nil {
		return err
	}
	res, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](
		"Promise.resolve(eval("+string(src)+")).then(v => JSON.stringify(v === undefined ? null : v))", chromedp.EvalAwaitPromise))
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal([]byte(res), out)
}

// Screenshot is a PNG of the whole page.
func (p *Page) Screenshot() []byte {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	return png
}

// Do runs chromedp actions on the page (clicks, key presses).
func (p *Page) Do(actions ...chromedp.Action[chromedp.Void]) error {
	return chromedp.Do(p.ctx, actions...)
}
