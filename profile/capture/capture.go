// Package capture pulls a set of profiles from a live Go server's debug
// endpoints during one window and writes them, with a manifest, to a
// capture folder that profdiff diff reads as one side.
//
// During a window of N seconds it fetches, concurrently:
//
//	cpu        /debug/pprof/profile?seconds=N   → cpu.pb.gz
//	wall       /debug/fgprof?seconds=N          → wall.pb.gz   (skipped with a note if 404)
//	mutex      /debug/pprof/mutex?seconds=N     → mutex.pb.gz  (a delta over the window)
//	block      /debug/pprof/block?seconds=N     → block.pb.gz  (a delta over the window)
//	goroutine  /debug/pprof/goroutine           → goroutine.pb.gz (taken mid-window)
//	trace      /debug/pprof/trace?seconds=N     → trace.out
//
// plus the server's /debug/vars, if it publishes go_version, gomaxprocs and
// num_cpu there, for the manifest. Each pprof profile is parsed (and
// loaded as profdiff loads it, when it has samples) before it is written;
// a trace must start with Go's trace header. A profile that cannot be
// captured is logged and recorded in the manifest's errors; Capture fails
// only when no profile at all was captured, or when its context ended
// before every profile arrived: then the manifest is marked interrupted,
// ProfilePath refuses the folder, and the error is an *InterruptedError
// naming the folder and the missing files. The package never prints to
// standard output or exits; progress goes to Options.Log.
//
// Taking all of them at once perturbs the server (fgprof stops the world
// ~99 times a second to list goroutines; tracing costs a few percent):
// measure throughput in a window without capture when the numbers matter.
package capture

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
)

// Options control a capture.
type Options struct {
	// Seconds is the window length (at least 1).
	Seconds int
	// Out is the folder to write; it is created, and must not exist or be
	// empty, so files of an earlier capture are never mixed in.
	Out string
	// Log receives progress lines and problems (nil: discarded).
	Log io.Writer
	// Client fetches the profiles (nil: a client whose timeout is the
	// window plus 30 s).
	Client *http.Client
	// Profiles selects kinds to capture (nil: all of Kinds).
	Profiles []string
	// MaxSize bounds each download (0: profile.DefaultMaxSize).
	MaxSize int64
}

// Kinds lists the kinds Capture takes, in manifest order.
var Kinds = []string{"cpu", "wall", "mutex", "block", "goroutine", "trace"}

// endpoint says where a kind comes from and where it goes.
type endpoint struct {
	kind     string
	path     string // relative to the base URL
	windowed bool   // takes ?seconds=N
	file     string
	pprof    bool
	optional bool // a 404 is a note, not an error
}

var endpoints = map[string]endpoint{
	"cpu":       {"cpu", "/debug/pprof/profile", true, "cpu.pb.gz", true, false},
	"wall":      {"wall", "/debug/fgprof", true, "wall.pb.gz", true, true},
	"mutex":     {"mutex", "/debug/pprof/mutex", true, "mutex.pb.gz", true, false},
	"block":     {"block", "/debug/pprof/block", true, "block.pb.gz", true, false},
	"goroutine": {"goroutine", "/debug/pprof/goroutine", false, "goroutine.pb.gz", true, false},
	"trace":     {"trace", "/debug/pprof/trace", true, "trace.out", false, false},
}

// BaseURL reduces a debug URL to the server's root: the user may give
// http://host:port, .../debug/pprof or .../debug/pprof/.
func BaseURL(debugURL string) (*url.URL, error) {
	u, err := url.Parse(debugURL)
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %v", debugURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid URL %q: want http:// or https://", debugURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid URL %q: no host", debugURL)
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, "/debug/pprof")
	u.Path, u.RawPath, u.RawQuery, u.Fragment = p, "", "", ""
	return u, nil
}

type result struct {
	ep    endpoint
	data  []byte
	err   error
	note  string
	start time.Time
}

// Capture takes one window of profiles from the server at debugURL (its
// root, such as http://127.0.0.1:6060, or its /debug/pprof/ page) and
// writes them and manifest.json to opts.Out. It returns the manifest
// written. The error is non-nil when nothing was captured (the manifest,
// with its errors, is still written when the folder could be made), the
// folder could not be written, or ctx ended before every profile arrived:
// then the manifest is marked Interrupted and the error is an
// *InterruptedError naming the folder and the missing files.
func Capture(ctx context.Context, debugURL string, opts Options) (*Manifest, error) {
	pl, err := opts.plan(debugURL)
	if err != nil {
		return nil, err
	}
	if err := prepareDir(opts.Out); err != nil {
		return nil, fmt.Errorf("capture: %v", err)
	}
	fmt.Fprintf(pl.log, "capture: %d s from %s: %s\n", opts.Seconds, pl.base, strings.Join(pl.kinds, ", "))
	m := &Manifest{
		Format:           ManifestFormat,
		URL:              pl.base.String(),
		Seconds:          opts.Seconds,
		Start:            time.Now().UTC(),
		GoVersion:        "unknown",
		HostCPUs:         runtime.NumCPU(),
		CaptureGoVersion: runtime.Version(),
		Params: map[string]any{
			"seconds":  opts.Seconds,
			"url":      pl.base.String(),
			"profiles": pl.kinds,
		},
	}
	results, vars := pl.fetchAll(ctx)
	m.End = time.Now().UTC()
	applyVars(m, vars)
	missing := pl.storeAll(m, results)
	interrupted := ctx.Err() != nil && len(missing) > 0
	if interrupted {
		m.Interrupted = true
		fmt.Fprintf(pl.log, "capture: interrupted: %s is incomplete\n", opts.Out)
	}
	if err := WriteManifest(opts.Out, m); err != nil {
		return m, fmt.Errorf("capture: writing manifest: %v", err)
	}
	switch {
	case interrupted:
		return m, &InterruptedError{Dir: opts.Out, Missing: missing, Err: ctx.Err()}
	case len(m.Files) == 0:
		return m, fmt.Errorf("capture: no profile captured from %s (%s)", pl.base, strings.Join(m.Errors, "; "))
	}
	return m, nil
}

// InterruptedError is the error of a capture, or of a workload run around
// one, whose context ended (Ctrl-C, SIGTERM) before everything arrived.
// The folder Dir is incomplete and its manifest says so (Interrupted).
// errors.Is(err, context.Canceled) holds when the context was cancelled.
type InterruptedError struct {
	// Dir is the capture folder.
	Dir string
	// Missing names what was not written: profile files ("cpu.pb.gz"),
	// or what a runner lacks ("load report").
	Missing []string
	// Err is the context's error.
	Err error
}

func (e *InterruptedError) Error() string {
	if len(e.Missing) == 0 {
		return fmt.Sprintf("interrupted: capture folder %s is incomplete", e.Dir)
	}
	return fmt.Sprintf("interrupted: capture folder %s is incomplete (%s missing)", e.Dir, strings.Join(e.Missing, ", "))
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// plan is a capture's checked options, defaults filled in.
type plan struct {
	base    *url.URL
	kinds   []string // in Kinds order
	seconds int
	window  time.Duration
	maxSize int64
	client  *http.Client
	log     io.Writer
	out     string
}

func (opts Options) plan(debugURL string) (*plan, error) {
	if opts.Seconds < 1 {
		return nil, fmt.Errorf("capture: window must be at least 1 second, not %d", opts.Seconds)
	}
	if opts.Out == "" {
		return nil, errors.New("capture: no output folder")
	}
	base, err := BaseURL(debugURL)
	if err != nil {
		return nil, fmt.Errorf("capture: %v", err)
	}
	kinds := opts.Profiles
	if len(kinds) == 0 {
		kinds = Kinds
	}
	want := map[string]bool{}
	for _, k := range kinds {
		if _, ok := endpoints[k]; !ok {
			return nil, fmt.Errorf("capture: unknown profile kind %q (want %s)", k, strings.Join(Kinds, ", "))
		}
		want[k] = true
	}
	pl := &plan{base: base, seconds: opts.Seconds, window: time.Duration(opts.Seconds) * time.Second,
		maxSize: opts.MaxSize, client: opts.Client, log: opts.Log, out: opts.Out}
	for _, k := range Kinds {
		if want[k] {
			pl.kinds = append(pl.kinds, k)
		}
	}
	if pl.log == nil {
		pl.log = io.Discard
	}
	if pl.maxSize <= 0 {
		pl.maxSize = profile.DefaultMaxSize
	}
	if pl.client == nil {
		pl.client = &http.Client{Timeout: pl.window + 30*time.Second}
	}
	return pl, nil
}

// fetchAll fetches every kind at once, and the server's vars, within the
// window plus 30 s.
func (pl *plan) fetchAll(ctx context.Context) ([]result, *serverVars) {
	ctx, cancel := context.WithTimeout(ctx, pl.window+30*time.Second)
	defer cancel()
	results := make([]result, len(pl.kinds))
	var wg sync.WaitGroup
	for i, k := range pl.kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ep := endpoints[k]
			if !ep.windowed {
				// A snapshot is taken in the middle of the window, when
				// the windowed profiles are all running.
				t := time.NewTimer(pl.window / 2)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					results[i] = result{ep: ep, err: ctx.Err()}
					return
				}
			}
			results[i] = fetch(ctx, pl.client, pl.base, ep, pl.seconds, pl.maxSize)
		}()
	}
	vars := fetchVars(ctx, pl.client, pl.base)
	wg.Wait()
	return results, vars
}

// storeAll writes the results that arrived, records them, the notes and
// the errors in m and the log, and returns the files that failed.
func (pl *plan) storeAll(m *Manifest, results []result) (missing []string) {
	for _, r := range results {
		f, note, err := store(pl.out, r)
		if note != "" {
			m.Notes = append(m.Notes, note)
			fmt.Fprintf(pl.log, "capture: %s\n", note)
		}
		if err != nil {
			msg := r.ep.kind + ": " + err.Error()
			m.Errors = append(m.Errors, msg)
			missing = append(missing, r.ep.file)
			fmt.Fprintf(pl.log, "capture: error: %s\n", msg)
			continue
		}
		if f != nil {
			m.Files = append(m.Files, *f)
			what := strconv.Itoa(f.Samples) + " samples"
			if !r.ep.pprof {
				what = "execution trace"
			}
			fmt.Fprintf(pl.log, "capture: %-9s %s, %s → %s\n", f.Kind, profile.FormatSize(f.Bytes), what, filepath.Join(pl.out, f.Path))
		}
	}
	if m.Files == nil {
		m.Files = []File{}
	}
	return missing
}

// prepareDir creates dir, or accepts it when empty.
func prepareDir(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return err
	case len(ents) > 0:
		return fmt.Errorf("output folder %s is not empty; choose a new one", dir)
	}
	return nil
}

func fetch(ctx context.Context, client *http.Client, base *url.URL, ep endpoint, seconds int, maxSize int64) result {
	r := result{ep: ep, start: time.Now()}
	u := *base
	u.Path = strings.TrimRight(base.Path, "/") + ep.path
	if ep.windowed {
		u.RawQuery = "seconds=" + strconv.Itoa(seconds)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		r.err = err
		return r
	}
	resp, err := client.Do(req)
	if err != nil {
		r.err = err
		return r
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && ep.optional {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		r.note = fmt.Sprintf("%s: %s not exposed (404); skipped", ep.kind, ep.path)
		return r
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		msg := strings.TrimSpace(strings.SplitN(string(body), "\n", 2)[0])
		r.err = fmt.Errorf("GET %s: HTTP %s: %s", u.Path, resp.Status, msg)
		return r
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxSize+1))
	if err != nil {
		r.err = fmt.Errorf("GET %s: %v", u.Path, err)
		return r
	}
	if int64(len(data)) > maxSize {
		r.err = fmt.Errorf("GET %s: larger than %s", u.Path, profile.FormatSize(maxSize))
		return r
	}
	r.data = data
	return r
}

// store validates one result and writes its file. It returns the file
// written (nil when there was nothing to write), a note, and an error.
func store(dir string, r result) (*File, string, error) {
	if r.err != nil {
		return nil, r.note, r.err
	}
	if r.data == nil {
		return nil, r.note, nil
	}
	data := r.data
	f := &File{Kind: r.ep.kind, Path: r.ep.file}
	note := r.note
	if r.ep.pprof {
		p, err := pprofile.ParseData(data)
		if err != nil {
			return nil, note, fmt.Errorf("not a valid pprof profile: %v", err)
		}
		f.Samples = len(p.Sample)
		if f.Samples == 0 {
			// An empty delta is a result (no contention in the window),
			// but it usually means the profile is off in the server.
			note = r.ep.kind + ": no samples in the window"
			switch r.ep.kind {
			case "mutex":
				note += " (no contention, or the server never called runtime.SetMutexProfileFraction)"
			case "block":
				note += " (no blocking, or the server never called runtime.SetBlockProfileRate)"
			}
		} else {
			// Load it as profdiff diff will, so a file that is written is
			// one profdiff reads.
			l, err := profile.Parse(r.ep.file, data, 0)
			if err != nil {
				return nil, note, err
			}
			if got := string(l.Kind); got != r.ep.kind && (r.ep.kind == "cpu" || r.ep.kind == "wall" || r.ep.kind == "goroutine") {
				note = fmt.Sprintf("%s: the profile reads as kind %s", r.ep.kind, got)
			}
		}
		if !isGzip(data) {
			data = gzipBytes(data)
		}
	} else if !isTrace(data) {
		return nil, note, errors.New("not a Go execution trace (no \"go 1.N trace\" header)")
	}
	if err := os.WriteFile(filepath.Join(dir, f.Path), data, 0o644); err != nil {
		return nil, note, err
	}
	f.Bytes = int64(len(data))
	return f, note, nil
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// isTrace checks the header Go's execution tracer writes: "go 1.N trace"
// padded with NULs to 16 bytes.
func isTrace(b []byte) bool {
	if len(b) < 16 || !bytes.HasPrefix(b, []byte("go 1.")) {
		return false
	}
	return bytes.Contains(b[:16], []byte(" trace"))
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// serverVars is what Capture reads from /debug/vars.
type serverVars struct {
	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"num_cpu"`
	CPUs       []int  `json:"cpus"`
}

// fetchVars reads the server's /debug/vars; any failure means unknown.
func fetchVars(ctx context.Context, client *http.Client, base *url.URL) *serverVars {
	u := *base
	u.Path = strings.TrimRight(base.Path, "/") + "/debug/vars"
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	var v serverVars
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil {
		return nil
	}
	return &v
}

func applyVars(m *Manifest, v *serverVars) {
	if v == nil {
		return
	}
	if v.GoVersion != "" {
		m.GoVersion = v.GoVersion
	}
	m.GOMAXPROCS = v.GOMAXPROCS
	m.CPUs = v.NumCPU
	if len(v.CPUs) > 0 {
		m.CPUs = len(v.CPUs)
	}
}
