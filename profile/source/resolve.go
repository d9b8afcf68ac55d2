package source

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/profile/fleet"
)

// The ways an argument can name no source, wrapped by an *ArgError (test
// with errors.Is). They are bad arguments: a command treats them as
// usage errors.
var (
	// ErrNoMatch: a pattern matches no file.
	ErrNoMatch = errors.New("matches no files")
	// ErrBadPattern: a pattern filepath.Glob refuses.
	ErrBadPattern = errors.New("bad pattern")
	// ErrAmbiguous: a pattern matches several capture folders where one
	// was meant (Options.PerRun unset).
	ErrAmbiguous = errors.New("matches several capture folders")
	// ErrRemote: a URL or fleet server whose host is not loopback, and
	// Options.AllowRemote unset.
	ErrRemote = errors.New("not a loopback address (127.0.0.0/8, ::1, localhost)")
	// ErrBadSource: a URL or fleet source that does not parse, or a URL
	// of a scheme other than http and https.
	ErrBadSource = errors.New("not a source")
	// ErrStdinTwice: "-" appears more than once in all sides.
	ErrStdinTwice = errors.New("standard input (-) can be read only once")
)

// ArgError is an argument of a side that names no source: which side
// (Side.Name), the argument, and what is wrong, which wraps one of the
// Err sentinels above. Its message is "name: problem", or the problem
// alone for a side without a name.
type ArgError struct {
	Side string
	Arg  string
	Err  error
}

func (e *ArgError) Error() string {
	if e.Side == "" {
		return e.Err.Error()
	}
	return e.Side + ": " + e.Err.Error()
}

func (e *ArgError) Unwrap() error { return e.Err }

// resolver expands the sides' arguments into sources with the options'
// capture kind, remote policy and clock.
type resolver struct {
	opts Options
	now  time.Time
}

// resolve expands each side's arguments, in order:
//   - "-" is standard input, and may appear once in all;
//   - an http(s) URL passes through to profile.Load;
//   - a fleet source is split into its windows (see package fleet);
//   - a pattern with * ? or [ expands to its sorted matches, and must
//     match something, unless a file or folder of that very name exists,
//     which is then the source;
//   - a capture folder (a directory holding manifest.json, as profdiff
//     capture, demo and workload write) becomes the path of its profile of
//     the options' kind;
//   - any other path passes through for profile.Load to report.
func resolve(sides []Side, opts Options) ([][]string, error) {
	r := resolver{opts: opts, now: opts.Now}
	if r.now.IsZero() {
		r.now = nowCeil() // one clock for every relative time
	}
	out := make([][]string, len(sides))
	var folders []string
	for i, s := range sides {
		for _, a := range s.Args {
			paths, err := r.expand(a)
			if err != nil {
				return nil, &ArgError{Side: s.Name, Arg: a, Err: err}
			}
			for _, p := range paths {
				if isDir(p) {
					folders = append(folders, p)
				}
			}
			out[i] = append(out[i], paths...)
		}
	}
	kind := opts.Kind
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
		return nil, &ArgError{Arg: "-", Err: ErrStdinTwice}
	}
	return out, nil
}

// expand resolves one argument to the sources it names: itself, a
// pattern's sorted matches, or a fleet source's windows.
func (r resolver) expand(a string) ([]string, error) {
	if fleet.IsSource(a) {
		return r.expandFleet(a)
	}
	if isURL(a) {
		if err := r.checkURL(a); err != nil {
			return nil, err
		}
		return []string{a}, nil
	}
	if a == "-" || !strings.ContainsAny(a, "*?[") {
		return []string{a}, nil
	}
	if _, err := os.Stat(a); err == nil {
		// A file or folder of this very name is what was meant: a file
		// named a[1].pb.gz is read, not taken for the pattern that
		// matches a1.pb.gz. Literal names come first, as in the shell,
		// where a pattern a user typed has been expanded already.
		return []string{a}, nil
	} else if profile.GuessURL(a) != "" {
		// localhost:6060/debug/pprof/profile?seconds=5 is a URL without
		// its scheme, not a pattern: Load says which URL it meant.
		return []string{a}, nil
	}
	m, err := filepath.Glob(a)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadPattern, a, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("pattern %q %w", a, ErrNoMatch)
	}
	sort.Strings(m)
	if r.opts.PerRun {
		return m, nil
	}
	var dirs []string
	for _, p := range m {
		if capture.IsCaptureDir(p) {
			dirs = append(dirs, p)
		}
	}
	if len(dirs) > 1 {
		return nil, &ambiguousError{pattern: a, dirs: dirs}
	}
	return m, nil
}

// ambiguousError is ErrAmbiguous with the folders a pattern matched.
type ambiguousError struct {
	pattern string
	dirs    []string
}

func (e *ambiguousError) Error() string {
	return fmt.Sprintf("pattern %q matches %d capture folders; name one: %s", e.pattern, len(e.dirs), strings.Join(e.dirs, ", "))
}

func (e *ambiguousError) Is(target error) bool { return target == ErrAmbiguous }

func isURL(s string) bool { return strings.Contains(s, "://") }

// expandFleet resolves a fleet source (see package fleet): its times made
// absolute (relative ones from the resolver's clock, the same for every
// argument), its server checked as URLs are, and its range split into
// its windows=N sources, one profile each.
func (r resolver) expandFleet(a string) ([]string, error) {
	s, err := fleet.Parse(a, r.now)
	if err != nil {
		return nil, &badSource{err}
	}
	if !r.opts.AllowRemote && !IsLoopbackHost(s.Server.Hostname()) {
		return nil, fmt.Errorf("%s: %s is %w", s.Backend, s.Server.Hostname(), ErrRemote)
	}
	var out []string
	for _, w := range s.Split() {
		out = append(out, w.String())
	}
	return out, nil
}

// badSource is ErrBadSource with the parser's own words as its message.
type badSource struct{ err error }

func (e *badSource) Error() string   { return e.err.Error() }
func (e *badSource) Unwrap() []error { return []error{e.err, ErrBadSource} }

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
// profiles lose Go generics' type arguments: Load drops them on every
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
// with AllowRemote: sources are read from the machine the caller runs on
// unless told otherwise, so that a pasted URL does not reach out to
// another host.
func (r resolver) checkURL(raw string) error {
	u, a, err := profile.ParseURL(raw) // a: as the messages show it
	switch {
	case err != nil:
		return &badSource{fmt.Errorf("invalid URL %q: %v", a, err)}
	case u.Scheme != "http" && u.Scheme != "https":
		return &badSource{fmt.Errorf("%s: profdiff reads http:// and https:// URLs, not %s://", a, u.Scheme)}
	case u.Hostname() == "":
		return &badSource{fmt.Errorf("%s: the URL has no host", a)}
	case !r.opts.AllowRemote && !IsLoopbackHost(u.Hostname()):
		return fmt.Errorf("%s: %s is %w", a, u.Hostname(), ErrRemote)
	}
	return nil
}

// IsLoopbackHost reports whether host is localhost or a loopback IP: the
// hosts a source may name without Options.AllowRemote.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isDir(p string) bool {
	if p == "-" || isURL(p) {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

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

// captureGoVersions caches the Go version of the program each capture
// folder was taken from, by folder, for one Load.
type captureGoVersions map[string]string

// of returns the Go version recorded in the manifest of the capture folder
// holding the profile at path, or "" when path is not a file of a capture
// folder or the version is unknown.
func (c captureGoVersions) of(path string) string {
	if path == "-" || isURL(path) || fleet.IsSource(path) {
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
