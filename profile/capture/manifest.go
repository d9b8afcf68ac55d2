package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/profdiff/profdiff/profile"
)

// ManifestName is the manifest's file name inside a capture folder.
const ManifestName = "manifest.json"

// ManifestFormat is the version of the manifest layout written. Format 2
// added Complete; ReadManifest takes a format-1 manifest as complete
// unless it says it was interrupted.
const ManifestFormat = 2

// File is one captured profile in a capture folder.
type File struct {
	// Kind is what the profile measures, a profile.Kind name: cpu, wall,
	// mutex, block, goroutine or trace; or "perf" (PerfKind), perf script
	// text of the process, whose kind profdiff reads from its events.
	Kind string `json:"kind"`
	// Path is the file's name, relative to the folder.
	Path string `json:"path"`
	// Bytes is the file's size.
	Bytes int64 `json:"bytes"`
	// Samples is the number of sample records (distinct stacks, in the
	// aggregated profiles); absent for a trace and for a profile with no
	// samples, which a note then explains.
	Samples int `json:"samples,omitempty"`
	// Events and Command say what a perf recording recorded: its events
	// (cpu-clock, sched:sched_switch) and the perf record command line.
	Events  []string `json:"events,omitempty"`
	Command string   `json:"command,omitempty"`
	// SpanNanos is, for a perf recording, the time from its first sample
	// to its last: well short of the window when perf missed most of it.
	SpanNanos int64 `json:"span_ns,omitempty"`
}

// Manifest describes a capture folder. Capture fills the capture's own
// fields; a workload runner adds what it measured (the fields after
// Notes) before writing it with WriteManifest. Fields may be added; none
// will change meaning.
type Manifest struct {
	// Format is the manifest layout version (ManifestFormat).
	Format int `json:"format"`
	// URL is the debug base URL profiles were pulled from.
	URL string `json:"url"`
	// Seconds is the length of the capture window.
	Seconds int `json:"seconds"`
	// Start and End bound the capture, End being when the last profile
	// arrived.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`

	// GoVersion, GOMAXPROCS and CPUs describe the profiled server. Capture
	// reads them from the server's /debug/vars when that JSON object has
	// go_version, gomaxprocs and num_cpu (or cpus, a list) keys, as
	// profdiff's workload children publish; otherwise GoVersion is
	// "unknown" and the numbers are 0 (unknown). A workload runner sets
	// the child's values.
	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUs       int    `json:"cpus"`
	// HostCPUs and CaptureGoVersion describe the capturing process:
	// runtime.NumCPU() and runtime.Version().
	HostCPUs         int    `json:"host_cpus"`
	CaptureGoVersion string `json:"capture_go_version"`

	// Params holds the capture's parameters (seconds, url, profiles) and
	// whatever a runner adds (workload, variant, cores, connections, ...).
	Params map[string]any `json:"params,omitempty"`
	// Files lists the captured profiles in a fixed kind order: cpu, wall,
	// mutex, block, goroutine, trace, perf.
	Files []File `json:"files"`
	// Errors lists the profiles that could not be captured, and why.
	Errors []string `json:"errors,omitempty"`
	// Notes are remarks that are not failures: an endpoint the server does
	// not expose (fgprof), a profile with no samples in the window.
	Notes []string `json:"notes,omitempty"`
	// Interrupted is set when the capture, or the run around it, was cut
	// short (its context ended: Ctrl-C, SIGTERM): the folder is
	// incomplete, Errors says what is missing, and ProfilePath refuses it.
	Interrupted bool `json:"interrupted,omitempty"`
	// Complete is set when the capture ran to its end and wrote at least
	// one profile. A folder whose manifest is not complete (nothing was
	// captured, or it was interrupted) may be captured into again: Capture
	// replaces what it wrote there. WriteManifest clears it when
	// Interrupted is set.
	Complete bool `json:"complete"`

	// Load is the load generator's full report, as a JSON object.
	Load json.RawMessage `json:"load,omitempty"`
	// RequestsPerS is the measured throughput, requests per second.
	RequestsPerS float64 `json:"requests_per_s,omitempty"`
	// Requests and RequestErrors count completed requests and failed ones
	// (transport errors and non-2xx responses) in the measured window.
	Requests      int64 `json:"requests,omitempty"`
	RequestErrors int64 `json:"request_errors,omitempty"`
	// LatencyMS summarizes request latency in milliseconds.
	LatencyMS *Latency `json:"latency_ms,omitempty"`
	// CPUPerRequestUS is the server's CPU time (user+system) per request,
	// in microseconds.
	CPUPerRequestUS float64 `json:"cpu_per_request_us,omitempty"`
}

// Latency is a latency summary in milliseconds.
type Latency struct {
	Mean float64 `json:"mean,omitempty"` // absent when the generator reports none
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// File returns the file holding a profile of kind, if there is one.
func (m *Manifest) File(kind string) (File, bool) {
	for _, f := range m.Files {
		if f.Kind == kind {
			return f, true
		}
	}
	return File{}, false
}

// DefaultKind is the kind profdiff diff picks from a capture folder when
// none is asked for: wall if captured (it sees waiting as well as
// running), else cpu, else the first file's.
func (m *Manifest) DefaultKind() string {
	for _, k := range []string{"wall", "cpu"} {
		if _, ok := m.File(k); ok {
			return k
		}
	}
	if len(m.Files) > 0 {
		return m.Files[0].Kind
	}
	return ""
}

// WriteManifest writes m to dir/manifest.json (indented, through a
// temporary file and a rename, so a reader never sees half of it), its
// URL's password redacted (profile.RedactURL), readable by its owner only
// (0600): it records the server's command line and variables.
func WriteManifest(dir string, m *Manifest) error {
	c := *m
	c.URL = profile.RedactURL(c.URL)
	if c.Interrupted {
		c.Complete = false
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding manifest: %v", err)
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(dir, ".manifest-*.json")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, ManifestName)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// ReadManifest reads dir/manifest.json. It rejects file paths that are
// absolute or leave the folder, so a manifest from elsewhere cannot point
// profdiff at other files.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, ManifestName), err)
	}
	// Format 1 had no Complete: its captures were complete unless
	// interrupted. An interrupted capture is never complete (as written).
	if m.Format < 2 {
		m.Complete = true
	}
	if m.Interrupted {
		m.Complete = false
	}
	for _, f := range m.Files {
		if f.Path == "" || !filepath.IsLocal(f.Path) {
			return nil, fmt.Errorf("%s: file path %q is not inside the folder", filepath.Join(dir, ManifestName), f.Path)
		}
	}
	return &m, nil
}

// IsCaptureDir reports whether path is a directory holding manifest.json.
func IsCaptureDir(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(path, ManifestName))
	return err == nil
}

// ProfilePath returns the path of the profile of kind in the capture
// folder dir; kind "" picks the manifest's DefaultKind. The error lists
// the kinds the folder has.
func ProfilePath(dir, kind string) (string, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: not a capture folder (no %s)", dir, ManifestName)
		}
		return "", err
	}
	if m.Interrupted {
		// The manifest's errors are text from a file: one line here.
		why := strings.NewReplacer("\r", " ", "\n", " ").Replace(strings.Join(m.Errors, "; "))
		return "", fmt.Errorf("%s: capture folder is incomplete: its capture was interrupted (%s)", dir, why)
	}
	if kind == "" {
		kind = m.DefaultKind()
	}
	if f, ok := m.File(kind); ok {
		return filepath.Join(dir, f.Path), nil
	}
	var have []string
	for _, f := range m.Files {
		have = append(have, f.Kind)
	}
	if len(have) == 0 {
		return "", fmt.Errorf("%s: capture folder holds no profiles", dir)
	}
	return "", fmt.Errorf("%s: capture folder has no %s profile (has %s)", dir, kind, strings.Join(have, ", "))
}
