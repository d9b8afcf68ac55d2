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
//	trace      /debug/pprof/trace?seconds=N     → trace.out.gz (gzipped)
//	perf       perf record -g -e cpu-clock -p PID → perf.txt.gz (perf script text, gzipped;
//	           Options.PerfPID, where perf can record)
//
// plus the server's /debug/vars, if it publishes go_version, gomaxprocs and
// num_cpu there, for the manifest. Each pprof profile is parsed (and
// loaded as profdiff loads it, when it has samples) before it is written;
// a trace must start with Go's trace header. A profile that cannot be
// captured is logged and recorded in the manifest's errors; Capture fails
// only when no profile at all was captured (the error gives each kind's
// cause once, kinds with the same cause together), or when its context
// ended before every profile arrived: then the manifest is marked
// interrupted, ProfilePath refuses the folder, and the error is an
// *InterruptedError naming the folder and the missing files. In both cases
// the manifest says "complete": false, and a later Capture into the same
// folder replaces it. The package never prints to standard output or
// exits; progress goes to Options.Log.
//
// # Bounds
//
// Memory does not grow with the downloads: each body streams into a file
// in the folder (a ".part" file until it is checked), refused once it
// passes Options.MaxSize, and the profiles are then checked one at a time,
// each decompressed with the same limit enforced as bytes arrive. So a
// capture holds about one decompressed profile (at most MaxSize) and the
// model built from it, whatever the number of kinds, and a gzip bomb stops
// at MaxSize. Redirects are followed at most MaxRedirects times and only
// to URLs that pass Options.CheckURL. The window is at most MaxSeconds.
//
// Taking all of them at once perturbs the server (fgprof stops the world
// ~99 times a second to list goroutines; tracing costs a few percent):
// measure throughput in a window without capture when the numbers matter.
package capture

import (
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

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/internal/redirect"
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
	// MaxSize bounds each download, and what each profile decompresses
	// to (0: profile.DefaultMaxSize).
	MaxSize int64
	// CheckURL, when set, vets every redirect target: a redirect to a URL
	// it refuses fails that profile with its error (nil: any target). The
	// URL Capture is given is the caller's to check.
	CheckURL func(*url.URL) error
	// PerfPID, when set, is a local process recorded with perf during the
	// window (perf record -g -e cpu-clock, plus sched:sched_switch where it
	// records), stored as perf script text (PerfFile, kind PerfKind). When
	// perf cannot record here, a note says why and the capture goes on.
	PerfPID int
	// Perf, when set, is a recorder started earlier (StartPerf) that the
	// capture enables when its window opens, in place of PerfPID's; the
	// caller closes it.
	Perf *PerfRecorder
	// PerfMaxScript bounds the perf script text stored (0:
	// DefaultPerfMaxScript); the text is cut at the last whole sample
	// before it, with a note.
	PerfMaxScript int64
}

// MaxSeconds is the longest window Capture takes: 24 hours.
const MaxSeconds = 24 * 60 * 60

// MaxRedirects is how many redirects one request follows.
const MaxRedirects = redirect.Max

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
	"trace":     {"trace", "/debug/pprof/trace", true, "trace.out.gz", false, false},
}

// BaseURL reduces a debug URL to the server's root: the user may give
// http://host:port, .../debug/pprof or .../debug/pprof/.
func BaseURL(debugURL string) (*url.URL, error) {
	u, shown, err := profile.ParseURL(debugURL) // no password in a message
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %v", shown, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid URL %q: want http:// or https://", shown)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid URL %q: no host", shown)
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, "/debug/pprof")
	u.Path, u.RawPath, u.RawQuery, u.Fragment = p, "", "", ""
	return u, nil
}

// result is one endpoint's download: the file it is in (part, "" when
// nothing came), or why not.
type result struct {
	ep   endpoint
	part string
	err  error
	note string
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
	rec := opts.Perf
	if rec == nil && opts.PerfPID > 0 {
		// Started before the window opens: the first probe of a process
		// runs perf twice, and perf takes a while to attach, seconds in
		// all on a busy machine.
		rec = StartPerf(opts.PerfPID)
		defer rec.Close()
		// The window opens once perf is ready, so that it records the
		// window rather than starting late into it.
		if took, err := rec.Ready(ctx); err != nil && rec.Err() == nil && ctx.Err() == nil {
			fmt.Fprintf(pl.log, "capture: perf: not ready after %v (%v); the window opens without waiting longer\n", took.Round(time.Millisecond), err)
		}
	}
	fmt.Fprintf(pl.log, "capture: %d s from %s: %s\n", opts.Seconds, pl.base.Redacted(), strings.Join(pl.kinds, ", "))
	m := &Manifest{
		Format:           ManifestFormat,
		URL:              pl.base.Redacted(), // never a password
		Seconds:          opts.Seconds,
		Start:            time.Now().UTC(),
		GoVersion:        "unknown",
		HostCPUs:         runtime.NumCPU(),
		CaptureGoVersion: runtime.Version(),
		Params: map[string]any{
			"seconds":  opts.Seconds,
			"url":      pl.base.Redacted(),
			"profiles": pl.kinds,
		},
	}
	var perf *perfRun
	if rec != nil {
		perf = pl.beginPerf(ctx, m, rec)
	}
	results, vars := pl.fetchAll(ctx)
	m.End = time.Now().UTC()
	applyVars(m, vars)
	failed := pl.storeAll(m, results)
	if perf != nil {
		perf.finish(ctx, pl, m)
	}
	interrupted := ctx.Err() != nil && len(failed) > 0
	m.Interrupted = interrupted
	m.Complete = !interrupted && len(m.Files) > 0
	if len(m.Files) > 0 && !interrupted {
		// Something was captured: the log is where the rest is reported.
		for _, f := range failed {
			fmt.Fprintf(pl.log, "capture: error: %s: %v\n", f.ep.kind, f.err)
		}
	}
	if err := WriteManifest(opts.Out, m); err != nil {
		return m, fmt.Errorf("capture: writing manifest: %v", err)
	}
	switch {
	case interrupted:
		missing := make([]string, len(failed))
		for i, f := range failed {
			missing[i] = f.ep.file
		}
		return m, &InterruptedError{Dir: opts.Out, Missing: missing, Err: ctx.Err()}
	case len(m.Files) == 0:
		return m, fmt.Errorf("capture: no profile captured from %s: %s", pl.base.Redacted(), groupCauses(failed))
	}
	return m, nil
}

// groupCauses lists each failed kind once, kinds that failed the same way
// together: "cpu, wall: connection refused; trace: HTTP 500".
func groupCauses(failed []result) string {
	var causes []string
	kinds := map[string][]string{}
	for _, f := range failed {
		c := f.err.Error()
		if kinds[c] == nil {
			causes = append(causes, c)
		}
		kinds[c] = append(kinds[c], f.ep.kind)
	}
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = strings.Join(kinds[c], ", ") + ": " + c
	}
	return strings.Join(parts, "; ")
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
	perfMax int64
}

func (opts Options) plan(debugURL string) (*plan, error) {
	if opts.Seconds < 1 || opts.Seconds > MaxSeconds {
		return nil, fmt.Errorf("capture: window must be 1 to %d seconds (24 hours), not %d", MaxSeconds, opts.Seconds)
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
		maxSize: opts.MaxSize, client: opts.Client, log: opts.Log, out: opts.Out, perfMax: opts.PerfMaxScript}
	if pl.perfMax <= 0 {
		pl.perfMax = DefaultPerfMaxScript
	}
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
	pl.client = redirectClient(opts.Client, pl.window+30*time.Second, opts.CheckURL)
	return pl, nil
}

// redirectClient is a copy of c (nil: a client with the timeout) that
// follows at most MaxRedirects redirects, each to a URL check accepts,
// before c's own redirect policy.
func redirectClient(c *http.Client, timeout time.Duration, check func(*url.URL) error) *http.Client {
	if c == nil {
		c = &http.Client{Timeout: timeout}
	}
	return redirect.Bound(c, check)
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
			results[i] = fetch(ctx, pl.client, pl.base, ep, pl.seconds, pl.out, pl.maxSize)
		}()
	}
	vars := fetchVars(ctx, pl.client, pl.base)
	wg.Wait()
	return results, vars
}

// storeAll checks and moves into place the results that arrived, one at
// a time, records them, the notes and the errors in m, logs the files
// and notes, and returns the results that failed, err set.
func (pl *plan) storeAll(m *Manifest, results []result) (failed []result) {
	for _, r := range results {
		f, note, err := store(pl.out, r, pl.maxSize)
		if note != "" {
			m.Notes = append(m.Notes, note)
			fmt.Fprintf(pl.log, "capture: %s\n", note)
		}
		if err != nil {
			m.Errors = append(m.Errors, r.ep.kind+": "+err.Error())
			r.err = err
			failed = append(failed, r)
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
	return failed
}

// prepareDir creates dir, or accepts it when it is empty or holds an
// incomplete capture (its manifest says "complete": false), which it
// clears: the manifest, the profile files Capture writes and downloads
// left behind. Any other file keeps the folder from being used, and so
// does a symbolic link at dir: the files would land, and an incomplete
// capture be cleared, wherever it points.
func prepareDir(dir string) error {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("output folder %s is a symbolic link; name the folder itself", dir)
	}
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return err
	case len(ents) == 0:
		return nil
	}
	notEmpty := fmt.Errorf("output folder %s is not empty; choose a new one", dir)
	if m, err := ReadManifest(dir); err != nil || m.Complete {
		return notEmpty
	}
	ours := map[string]bool{ManifestName: true}
	for _, ep := range endpoints {
		ours[ep.file] = true
	}
	ours[PerfFile] = true
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !ours[n] && !(strings.HasPrefix(n, ".") && strings.HasSuffix(n, partSuffix)) {
			return notEmpty
		}
	}
	for _, e := range ents {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
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
