package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/profile/fleet"
)

// sourceArgs are the profile arguments of one side as the user gave them,
// and where they came from (a flag such as "--base", or "" for positional
// arguments), so that errors say which argument is wrong.
type sourceArgs struct {
	from string
	args []string
}

// resolver turns profile arguments into the sources profile.Load reads. It
// is the one place where diff, top, gate and demo interpret their
// arguments.
type resolver struct {
	cmd string // the command, for messages
	// kind is --kind: which profile a capture folder stands for; "" picks
	// wall when every capture folder given has one, else cpu.
	kind string
	// perRun allows one pattern to match several capture folders (gate:
	// one folder per run). Elsewhere a pattern naming a capture folder
	// must match exactly one, so that a glob such as
	// 'profdiff-out/*-demo/baseline' cannot silently merge two demos.
	perRun bool
	// allowRemote lets URL sources name hosts other than loopback
	// (--allow-remote); by default they must be loopback.
	allowRemote bool
	// now is the clock relative fleet times (now-1h) are read against
	// (zero: the time of the call).
	now time.Time
}

// resolve expands each side's arguments, in order:
//   - "-" is standard input, and may appear once in all;
//   - an http(s) URL passes through to profile.Load;
//   - a pattern with * ? or [ expands to its sorted matches, and must
//     match something;
//   - a capture folder (a directory holding manifest.json, as profdiff
//     capture, demo and workload write) becomes the path of its profile of
//     the resolver's kind;
//   - any other path passes through for profile.Load to report.
func (r resolver) resolve(sides ...sourceArgs) ([][]string, error) {
	if r.now.IsZero() {
		r.now = nowCeil() // one clock for every relative time
	}
	out := make([][]string, len(sides))
	var folders []string
	for i, s := range sides {
		for _, a := range s.args {
			paths, err := r.expand(s.from, a)
			if err != nil {
				return nil, err
			}
			for _, p := range paths {
				if isDir(p) {
					folders = append(folders, p)
				}
			}
			out[i] = append(out[i], paths...)
		}
	}
	kind := r.kind
	if kind == "" {
		kind = commonCaptureKind(folders)
	}
	stdin := 0
	for _, srcs := range out {
		for j, p := range srcs {
			if p == "-" {
				stdin++
				continue
			}
			if !isDir(p) {
				continue
			}
			if !capture.IsCaptureDir(p) {
				return nil, fmt.Errorf("%s: a directory without %s, not a profdiff capture folder", p, capture.ManifestName)
			}
			prof, err := capture.ProfilePath(p, kind)
			if err != nil {
				return nil, err
			}
			srcs[j] = prof
		}
	}
	if stdin > 1 {
		return nil, usagef("%s: standard input (-) can be read only once", r.cmd)
	}
	return out, nil
}

// expand resolves one argument to the paths it names: itself, or a
// pattern's sorted matches.
func (r resolver) expand(from, a string) ([]string, error) {
	where := ""
	if from != "" {
		where = from + ": "
	}
	if fleet.IsSource(a) {
		return r.expandFleet(where, a)
	}
	if isURL(a) {
		if err := r.checkURL(a); err != nil {
			return nil, usagef("%s%v", where, err)
		}
		return []string{a}, nil
	}
	if a == "-" || !strings.ContainsAny(a, "*?[") {
		return []string{a}, nil
	}
	if _, err := os.Stat(a); err != nil && profile.GuessURL(a) != "" {
		// localhost:6060/debug/pprof/profile?seconds=5 is a URL without
		// its scheme, not a pattern: Load says which URL it meant.
		return []string{a}, nil
	}
	m, err := filepath.Glob(a)
	if err != nil {
		return nil, usagef("%sbad pattern %q: %v", where, a, err)
	}
	if len(m) == 0 {
		return nil, usagef("%spattern %q matches no files", where, a)
	}
	sort.Strings(m)
	if r.perRun {
		return m, nil
	}
	var dirs []string
	for _, p := range m {
		if capture.IsCaptureDir(p) {
			dirs = append(dirs, p)
		}
	}
	if len(dirs) > 1 {
		return nil, usagef("%spattern %q matches %d capture folders; name one: %s", where, a, len(dirs), strings.Join(dirs, ", "))
	}
	return m, nil
}

func isURL(s string) bool { return strings.Contains(s, "://") }

// expandFleet resolves a fleet source (see package fleet): its times made
// absolute (relative ones from the resolver's clock, the same for every
// argument), its server checked as URLs are, and its range split into
// its windows=N sources, one profile each.
func (r resolver) expandFleet(where, a string) ([]string, error) {
	s, err := fleet.Parse(a, r.now) // resolve set r.now

	if err != nil {
		return nil, usagef("%s%v", where, err)
	}
	if !r.allowRemote && !isLoopbackHost(s.Server.Hostname()) {
		return nil, usagef("%s%s: %s is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to query a remote server", where, s.Backend, s.Server.Hostname())
	}
	var out []string
	for _, w := range s.Split() {
		out = append(out, w.String())
	}
	return out, nil
}

// nowCeil is now, rounded up to a whole second: sources print readably,
// and a range ending "now" still holds what was stored a moment ago.
func nowCeil() time.Time {
	now := time.Now()
	if t := now.Truncate(time.Second); t.Before(now) {
		return t.Add(time.Second)
	}
	return now
}

// pyroscopeSource reports whether a source is a Pyroscope query, whose
// profiles lose Go generics' type arguments: a loader drops them on every
// side then (profile.Options.DropGoTypeArgs), so a function is one row
// whatever its source.
func pyroscopeSource(sides [][]string) bool {
	for _, srcs := range sides {
		for _, s := range srcs {
			if strings.HasPrefix(s, string(fleet.Pyroscope)+"+") {
				return true
			}
		}
	}
	return false
}

// checkURL accepts an http(s) URL whose host is loopback, or any host
// with allowRemote: like capture, diff, top and gate read from the
// machine they run on unless told otherwise, so that a pasted URL does
// not reach out to another host.
func (r resolver) checkURL(a string) error {
	u, err := url.Parse(a)
	switch {
	case err != nil:
		return fmt.Errorf("invalid URL %q: %v", a, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%s: profdiff reads http:// and https:// URLs, not %s://", a, u.Scheme)
	case u.Hostname() == "":
		return fmt.Errorf("%s: the URL has no host", a)
	case !r.allowRemote && !isLoopbackHost(u.Hostname()):
		return fmt.Errorf("%s: %s is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to read profiles from a remote host", a, u.Hostname())
	}
	return nil
}

func isDir(p string) bool {
	if p == "-" || isURL(p) {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// captureFileKind reports whether --kind names a capture folder's file
// that is not a profile kind: perf, the perf recording, whose kind
// profdiff detects from its events (cpu-clock is cpu).
func captureFileKind(kind string) bool { return kind == capture.PerfKind }

// commonCaptureKind is the default kind for the capture folders dirs:
// wall if all have it, else cpu ("" when there are none or a manifest
// cannot be read; ProfilePath then reports the problem).
func commonCaptureKind(dirs []string) string {
	var ms []*capture.Manifest
	for _, d := range dirs {
		if !capture.IsCaptureDir(d) {
			continue
		}
		m, err := capture.ReadManifest(d)
		if err != nil {
			return ""
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return ""
	}
	for _, m := range ms {
		if _, ok := m.File("wall"); !ok {
			return "cpu"
		}
	}
	return "wall"
}

// loadSides loads each side's sources in order and hands each profile to
// add with its side (0 base, 1 new). A profile read from a capture folder
// gets the Go version its manifest records (Loaded.GoVersion). The load
// warnings of all profiles are printed once loading ends, each distinct one
// once (see loadWarnings). After add returns the profile is garbage unless
// add kept it, and a collection runs before the next one is parsed (see
// releaseProfile).
func loadSides(ctx context.Context, sides [][]string, lopts profile.Options, stderr io.Writer, add func(diff.Side, *profile.Loaded) error) error {
	var lw loadWarnings
	defer func() { warn(stderr, lw.lines()...) }()
	lopts.DropGoTypeArgs = lopts.DropGoTypeArgs || pyroscopeSource(sides)
	versions := captureGoVersions{}
	for side, srcs := range sides {
		for _, src := range srcs {
			if err := ctx.Err(); err != nil {
				return err // interrupted: the rest is not read
			}
			l, err := profile.Load(ctx, src, lopts)
			if err != nil {
				return loadHint(err)
			}
			lw.add(l)
			noteSymbols(stderr, l)
			if l.GoVersion == "" {
				l.GoVersion = versions.of(src)
			}
			if err := add(diff.Side(side), l); err != nil {
				return loadHint(err)
			}
			releaseProfile()
		}
	}
	return nil
}

// captureGoVersions caches the Go version of the program each capture
// folder was taken from, by folder.
type captureGoVersions map[string]string

// of returns the Go version recorded in the manifest of the capture folder
// holding the profile at path, or "" when path is not a file of a capture
// folder or the version is unknown.
func (c captureGoVersions) of(path string) string {
	if path == "-" || isURL(path) {
		return ""
	}
	dir := filepath.Dir(path)
	if v, ok := c[dir]; ok {
		return v
	}
	v := ""
	if capture.IsCaptureDir(dir) {
		if m, err := capture.ReadManifest(dir); err == nil && m.GoVersion != "unknown" {
			v = m.GoVersion
		}
	}
	c[dir] = v
	return v
}

// loadHint adds to an error of loading or adding a profile how to fix it
// with this command's flags (the libraries name no CLI flags).
func loadHint(err error) error {
	var st *diff.SampleTypeError
	var pe *profile.Error
	switch {
	case errors.Is(err, profile.ErrTooLarge):
		return fmt.Errorf("%w (raise it with --max-size)", err)
	case errors.Is(err, profile.ErrUnsupported) && errors.As(err, &pe) && isPprofIndexURL(pe.Source):
		return &hinted{msg: err.Error() + "; or take them all at once with profdiff capture " + pe.Source, err: err}
	case errors.As(err, &st):
		return &hinted{msg: st.Message("pick a shared one with --sample-index"), err: err}
	case errors.Is(err, profile.ErrProfilerOnly):
		return fmt.Errorf("%w (--keep-profiler keeps them)", err)
	}
	return err
}

// isPprofIndexURL reports whether source is the URL of a /debug/pprof/
// index page (the profiles are below it).
func isPprofIndexURL(source string) bool {
	u, err := url.Parse(source)
	return err == nil && isURL(source) && strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/debug/pprof")
}

// hinted is an error reworded with a command's hint; it still unwraps to
// the library's error.
type hinted struct {
	msg string
	err error
}

func (h *hinted) Error() string { return h.msg }
func (h *hinted) Unwrap() error { return h.err }

// releaseProfile runs a collection once a parsed profile has been added and
// is garbage. The Analyzer keeps only per-method totals, and collecting here,
// before the next (possibly large) profile is parsed, keeps the peak heap
// near one parsed profile instead of letting garbage pile up to GOGC's
// target: on the 200,000-stack benchmark pair the peak RSS is about 295
// MiB with it and 340 without, for well under a tenth of a second.
func releaseProfile() { runtime.GC() }

// settle waits for a's walks in flight (Analyzer.Wait) and then, as
// releaseProfile does, runs a collection: the streamed profiles' bytes and
// tables are garbage once walked, and the walks' merge and the results are
// built on a heap that holds only the walks' tables. On the 200,000-stack
// pair it takes a few milliseconds, and the largest heap is about 116 MiB
// with it and 139 without. Its error is a profile's that the walk found refused
// (a location ID that is no location's): the load error Prepare gives
// when its checks find it, worded as loadInputs words those.
func settle(a *diff.Analyzer) error {
	if err := a.Wait(); err != nil {
		return loadHint(err)
	}
	releaseProfile()
	return nil
}
