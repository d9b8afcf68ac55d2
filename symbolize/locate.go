package symbolize

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	pprofile "github.com/google/pprof/profile"
)

// How Locate matched a file to a mapping (Located.By).
const (
	ByBuildID = "build ID"
	ByName    = "file name"
)

// ErrNotFound is wrapped by Locate's error when no candidate file exists
// for a mapping; the message says where it looked, naming the caller's
// paths by Options.PathsName.
var ErrNotFound = errors.New("no file found")

// Located is the symbol file Locate found for a mapping, and how it
// matched.
type Located struct {
	Path string
	By   string // ByBuildID or ByName
	// Refused lists the candidates searched before Path that carry
	// another build ID ("FILE has build ID X"), for the report when Path
	// turns out to hold no symbols.
	Refused []string
}

// Locate finds the symbol file of mapping m. It looks, in order, at
// opts.Paths (a file is itself a candidate; a directory is searched with
// the layouts of dirCandidates), the directories of PPROF_BINARY_PATH
// (colon-separated), the debuginfod client cache (<cache>/<buildid>/
// debuginfo, then executable; see DebuginfodCache), and last the mapping's
// own file where it exists (not for a perf map: /tmp/perf-PID.map on this
// machine may be another process's that had the pid). A candidate whose build ID is the mapping's
// wins over any other; else the first whose name is the mapping's (a
// separate debug file may add ".debug"). A file carrying a build ID other
// than the mapping's is rejected, and the error says so; without a match
// the error says where Locate looked.
func Locate(m *pprofile.Mapping, opts Options) (Located, error) {
	return newLocator(opts).locate(m)
}

// locator is Locate with the build IDs of the files it read, so that a
// profile's mappings read each candidate once.
type locator struct {
	opts Options
	ids  map[string]fileIDs // by path
}

// fileIDs are a candidate's build IDs; ok is false for a file that
// cannot be read or is no regular file.
type fileIDs struct {
	gnu, goID string
	ok        bool
}

func newLocator(opts Options) *locator {
	return &locator{opts: opts, ids: map[string]fileIDs{}}
}

func (lc *locator) locate(m *pprofile.Mapping) (Located, error) {
	cands := lc.candidates(m)
	id := strings.ToLower(m.BuildID)
	var rejected []string
	if id != "" {
		for _, c := range cands {
			gnu, goID, ok := lc.buildIDs(c)
			switch {
			case !ok:
			case gnu == id || goID == m.BuildID:
				return Located{c, ByBuildID, rejected}, nil
			case gnu != "" || goID != "":
				rejected = append(rejected, fmt.Sprintf("%s has build ID %s", c, shortID(firstOf(gnu, goID))))
			}
		}
	}
	base := filepath.Base(m.File)
	for _, c := range cands {
		gnu, goID, ok := lc.buildIDs(c)
		if !ok || id != "" && (gnu != "" || goID != "") {
			continue // checked above: not the mapping's build
		}
		if b := filepath.Base(c); b == base || b == base+".debug" {
			return Located{c, ByName, rejected}, nil
		}
	}
	if len(rejected) > 0 {
		return Located{}, fmt.Errorf("build ID mismatch: %s (the profile's is %s)", joinFirst(rejected, 3), shortID(id))
	}
	return Located{}, fmt.Errorf("%w in %s", ErrNotFound, lc.searched())
}

// buildIDs returns the build IDs of a candidate that is a regular file
// (ok false for a missing file or a directory).
func (lc *locator) buildIDs(path string) (gnu, goID string, ok bool) {
	v, seen := lc.ids[path]
	if !seen {
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			gnu, goID, err := fileBuildIDs(path)
			v = fileIDs{gnu, goID, err == nil}
		}
		lc.ids[path] = v
	}
	return v.gnu, v.goID, v.ok
}

// candidates lists the paths that may hold m's symbols, in search order,
// each once.
func (lc *locator) candidates(m *pprofile.Mapping) []string {
	var out []string
	seen := map[string]bool{}
	add := func(ps ...string) {
		for _, p := range ps {
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	id := strings.ToLower(m.BuildID)
	for _, p := range lc.opts.Paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			add(dirCandidates(p, id, m.File)...)
		} else {
			add(p)
		}
	}
	for _, d := range lc.binaryPath() {
		add(dirCandidates(d, id, m.File)...)
	}
	if c := DebuginfodCache(lc.opts.Env); c != "" && id != "" {
		add(filepath.Join(c, id, "debuginfo"), filepath.Join(c, id, "executable"))
	}
	if filepath.IsAbs(m.File) && !IsPerfMap(m.File) {
		add(m.File) // a perf map there may be another process's of that pid
	}
	return out
}

// binaryPath is PPROF_BINARY_PATH's directories.
func (lc *locator) binaryPath() []string {
	if lc.opts.Env == nil {
		return nil
	}
	var dirs []string
	for _, d := range filepath.SplitList(lc.opts.Env("PPROF_BINARY_PATH")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// searched says where candidates looked, for the error of a mapping
// nothing served.
func (lc *locator) searched() string {
	name := lc.opts.PathsName
	if name == "" {
		name = "the symbol paths"
	}
	paths := name + " (none given)"
	if n := len(lc.opts.Paths); n > 0 {
		paths = fmt.Sprintf("%s (%d path%s)", name, n, plural(n))
	}
	bp := "PPROF_BINARY_PATH (unset)"
	if dirs := lc.binaryPath(); len(dirs) > 0 {
		bp = "PPROF_BINARY_PATH (" + strings.Join(dirs, ":") + ")"
	}
	cache := "the debuginfod cache (none)"
	if c := DebuginfodCache(lc.opts.Env); c != "" {
		cache = "the debuginfod cache (" + c + ")"
	}
	return paths + ", " + bp + " or " + cache
}

// dirCandidates are the files directory d may hold for a mapping of file
// with build ID id (lowercase hex, "" when unknown), in pprof's order
// (locateBinaries in google/pprof internal/driver/fetch.go) with
// debuginfod's and perf's cache layouts added after pprof's build-ID
// forms:
//
//	d/<id>/<base>, d/<id>/* (sorted), d/<file>/<id>, d/<file>/<id>/elf,
//	d/<id[:2]>/<id[2:]>.debug, d/.build-id/<id[:2]>/<id[2:]>.debug,
//	d/<id>/debuginfo, d/<id>/executable,
//	d/<base>, d/<file>, d/<file>.debug, d/<dir>/.debug/<base>.debug,
//	d/usr/lib/debug/<file>.debug
func dirCandidates(d, id, file string) []string {
	base := filepath.Base(file)
	var out []string
	if id != "" {
		out = append(out, filepath.Join(d, id, base))
		if ents, err := os.ReadDir(filepath.Join(d, id)); err == nil {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			sort.Strings(names)
			for _, n := range names {
				out = append(out, filepath.Join(d, id, n))
			}
		}
		out = append(out, filepath.Join(d, file, id), filepath.Join(d, file, id, "elf"))
		if len(id) > 2 {
			out = append(out, filepath.Join(d, id[:2], id[2:]+".debug"), filepath.Join(d, ".build-id", id[:2], id[2:]+".debug"))
		}
		out = append(out, filepath.Join(d, id, "debuginfo"), filepath.Join(d, id, "executable"))
	}
	if file == "" {
		return out
	}
	return append(out, filepath.Join(d, base), filepath.Join(d, file), filepath.Join(d, file+".debug"),
		filepath.Join(d, filepath.Dir(file), ".debug", base+".debug"),
		filepath.Join(d, "usr", "lib", "debug", file+".debug"))
}

// DebuginfodCache is the debuginfod client's cache directory as elfutils'
// client picks it (debuginfod-client.c): $DEBUGINFOD_CACHE_PATH; else
// $HOME/.debuginfod_client_cache when that exists; else
// $XDG_CACHE_HOME/debuginfod_client; else $HOME/.cache/debuginfod_client.
// It is "" when env is nil or names neither variable nor a home.
func DebuginfodCache(env func(string) string) string {
	if env == nil {
		return ""
	}
	if c := env("DEBUGINFOD_CACHE_PATH"); c != "" {
		return c
	}
	home := env("HOME")
	if home != "" {
		old := filepath.Join(home, ".debuginfod_client_cache")
		if st, err := os.Stat(old); err == nil && st.IsDir() {
			return old
		}
	}
	if x := env("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "debuginfod_client")
	}
	if home != "" {
		return filepath.Join(home, ".cache", "debuginfod_client")
	}
	return ""
}

// Unsymbolizable reports whether a mapping names no file symbols can come
// from, as pprof decides (Mapping.Unsymbolizable): an empty name,
// [vdso], [vsyscall] and other bracketed names, //anon and /memfd:
// mappings, /dev/dri/. A perf map is a file.
func Unsymbolizable(m *pprofile.Mapping) bool {
	return m == nil || m.File == "" || m.Unsymbolizable()
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// shortID is a build ID's first 12 characters and "…" (the whole of a
// shorter one).
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12] + "…"
	}
	return id
}

func joinFirst(items []string, n int) string {
	if len(items) > n {
		return strings.Join(items[:n], "; ") + fmt.Sprintf("; and %d more", len(items)-n)
	}
	return strings.Join(items, "; ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
