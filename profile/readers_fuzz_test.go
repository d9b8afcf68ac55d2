package profile_test

// Fuzz targets for every reader: one per format, the containers, and Load
// on arbitrary bytes. Each checks properties, not only the absence of a
// panic: an error is a non-empty one-line *profile.Error naming the
// source, and not a panic that a guard recovered; a read allocates at
// most readertest.AllocLimit; a profile passes CheckValid, has samples
// and no negative value (unless it is a pprof diff), and its bucket
// shares through the analyzer lie in [0, 1] and sum to 1. Format readers
// are also called directly, since Parse turns a panic into an error.
//
// Seeds are made at seed time by the real tools where they are here
// (runtime/pprof, runtime/trace, perf record), by profile/synth, and taken
// from the corpus in ../shared when it is present. Run one with
//
//	go test -run='^$' -fuzz='^FuzzPerfScript$' -fuzztime=60s ./profile

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/callgrind"
	"github.com/profdiff/profdiff/profile/chrometrace"
	"github.com/profdiff/profdiff/profile/firefox"
	"github.com/profdiff/profdiff/profile/gotrace"
	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/internal/readertest"
	"github.com/profdiff/profdiff/profile/otlp"
	"github.com/profdiff/profdiff/profile/perfscript"
	"github.com/profdiff/profdiff/profile/producertest"
	"github.com/profdiff/profdiff/profile/pstats"
	"github.com/profdiff/profdiff/profile/speedscope"
	"github.com/profdiff/profdiff/profile/stackprof"
	"github.com/profdiff/profdiff/profile/synth"
	v8 "github.com/profdiff/profdiff/profile/v8"
)

// fuzzSource names fuzz inputs in errors and warnings; fuzzLimit is the
// size limit, small so that a bomb among the inputs fails fast.
const (
	fuzzSource = "fuzz-input"
	fuzzLimit  = 4 << 20
)

// maxSeed keeps seeds small: a large seed slows every mutation of it,
// and its minimization when a mutation finds new coverage.
const maxSeed = 16 << 10

// FuzzPprof: pprof protobuf, gzipped or not (runtime/pprof's heap and
// goroutine profiles, a small synth profile, the corpus's).
func FuzzPprof(f *testing.F) {
	addAll(f, pprofSeeds(f))
	addCorpus(f, "pprof-protobuf")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data) })
}

// FuzzPprofLegacy: the legacy text and binary formats pprof reads
// (runtime/pprof's debug=1 text, contention and heap text, the corpus's
// gperftools files).
func FuzzPprofLegacy(f *testing.F) {
	addAll(f, legacySeeds(f))
	addCorpus(f, "pprof-legacy")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data) })
}

// FuzzFolded: folded stacks, read directly and through Parse.
func FuzzFolded(f *testing.F) {
	fuzzReader(f, foldedSeeds(f), "folded-stacks", "ParseFolded", profile.ParseFolded)
}

// FuzzPerfScript: `perf script` text (recorded by perf at seed time where
// it can record, and the corpus's).
func FuzzPerfScript(f *testing.F) {
	fuzzReader(f, perfSeeds(f, true), "perf-script-text", "perfscript.Parse", func(data []byte) (*pprofile.Profile, []string, error) {
		return perfscript.Parse(string(data))
	})
}

// FuzzPerfScriptPaths: the critical paths of `perf script` text
// (perfscript.CriticalPaths), seeded, where perf can record, with a
// recording that has switch-ins and wake-ups (waittest.PerfChain).
func FuzzPerfScriptPaths(f *testing.F) {
	seeds := perfSeeds(f, false)
	if !testing.Short() {
		// A shell that waits for its children: their exits wake it.
		text, skip := recordPerf([]string{"-e", "sched:sched_switch", "-e", "sched:sched_waking", "-g", "--switch-events", "--",
			"sh", "-c", "sleep 0.01 & sleep 0.02 & wait"}, "--show-switch-events")
		if skip != "" {
			f.Logf("no perf-recorded seed: %s", skip)
		} else {
			seeds = append(seeds, text)
		}
	}
	addAll(f, seeds)
	addCorpus(f, "perf-script-text")
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := perfscript.CriticalPaths(string(data), perfscript.PathOptions{Top: 2, Depth: 3})
		switch {
		case err == nil && p != nil:
			checkProfile(t, "perfscript.CriticalPaths", p)
		case err != nil && strings.TrimSpace(err.Error()) == "":
			t.Errorf("perfscript.CriticalPaths: empty error message")
		case err != nil:
			readertest.NotRecovered(t, "perfscript.CriticalPaths", err)
		}
	})
}

// FuzzSpeedscope: speedscope JSON, sampled and evented.
func FuzzSpeedscope(f *testing.F) {
	fuzzReader(f, speedscopeSeeds(f), "speedscope-json", "speedscope.Parse", speedscope.Parse)
}

// FuzzChromeTrace: Chrome trace-event JSON (a node --trace-events-enabled
// recording made at seed time where node runs, and the corpus's files,
// those cut off mid-array too).
func FuzzChromeTrace(f *testing.F) {
	var seeds [][]byte
	if node, err := exec.LookPath("node"); err == nil {
		dir := f.TempDir()
		cmd := exec.Command(node, "--trace-events-enabled", "-e", "let a = []; for (let i = 0; i < 1e4; i++) a.push({i})")
		cmd.Dir = dir
		if cmd.Run() == nil {
			if data, err := os.ReadFile(filepath.Join(dir, "node_trace.1.log")); err == nil && len(data) <= maxSeed {
				seeds = append(seeds, data)
			}
		}
	}
	fuzzReader(f, seeds, "chrome-trace-event-json", "chrometrace.Parse", chrometrace.Parse)
}

// FuzzV8: V8 CPU profiles of both shapes (the corpus's, and its V8 heap
// profiles, which look alike and must be refused or read sanely).
func FuzzV8(f *testing.F) {
	addCorpus(f, "chrome-heapprofile-json")
	fuzzReader(f, nil, "chrome-cpuprofile-json", "v8.Parse", v8.Parse)
}

// FuzzCallgrind: callgrind files (the corpus's: name and subposition
// compression, several events).
func FuzzCallgrind(f *testing.F) {
	fuzzReader(f, nil, "callgrind", "callgrind.Parse", func(data []byte) (*pprofile.Profile, []string, error) {
		return callgrind.Parse(string(data))
	})
}

// FuzzPstats: Python pstats files, recorded by python3 -m cProfile at
// seed time where python3 is here.
func FuzzPstats(f *testing.F) {
	var seeds [][]byte
	if py, err := exec.LookPath("python3"); err == nil {
		dir := f.TempDir()
		out, script := filepath.Join(dir, "out.prof"), filepath.Join(dir, "p.py")
		if os.WriteFile(script, []byte("import time\ntime.sleep(0.001)\n"), 0o644) == nil &&
			exec.Command(py, "-m", "cProfile", "-o", out, script).Run() == nil {
			if data, err := os.ReadFile(out); err == nil && len(data) <= maxSeed {
				seeds = append(seeds, data)
			}
		}
	}
	fuzzReader(f, seeds, "python-pstats", "pstats.Parse", pstats.Parse)
}

// FuzzStackprof: Ruby stackprof JSON dumps (the corpus's: cpu, wall and
// object modes, with raw stacks).
func FuzzStackprof(f *testing.F) {
	fuzzReader(f, nil, "ruby-stackprof-json", "stackprof.Parse", stackprof.Parse)
}

// FuzzGecko: Gecko profiles, raw and processed (Firefox's recording in
// firefox/testdata and the Firefox Profiler's processing of it, cut down;
// the corpus's Firefox 59 exports are larger than maxSeed).
func FuzzGecko(f *testing.F) {
	fuzzReader(f, [][]byte{geckoSeed(f, 30), processedSeed(f, 40)}, "firefox-legacy-json", "firefox.Parse", firefox.Parse)
}

// geckoSeed cuts firefox/testdata/headless.json.gz, Firefox's own
// recording, to a seed of a few KB: its first thread, with the first
// stacks of its stack table and the samples of those, the frame and
// string tables up to the last entry those use, no markers, libraries or
// child processes. Every table stays a prefix of Firefox's, so the seed
// is what Firefox wrote, less rows.
func geckoSeed(f *testing.F, stacks int) []byte {
	type table struct {
		Schema map[string]int      `json:"schema"`
		Data   [][]json.RawMessage `json:"data"`
	}
	var doc, meta, th map[string]json.RawMessage
	var threads []map[string]json.RawMessage
	var samples, stackTable, frameTable table
	var strs []json.RawMessage
	data := readertest.ReadFile(f, filepath.Join("firefox", "testdata", "headless.json.gz"))
	if err := json.Unmarshal(data, &doc); err != nil {
		f.Fatalf("headless.json.gz: %v", err)
	}
	if json.Unmarshal(doc["meta"], &meta) != nil || json.Unmarshal(doc["threads"], &threads) != nil || len(threads) == 0 {
		f.Fatal("headless.json.gz: no meta or no threads")
	}
	th = threads[0]
	for name, to := range map[string]any{"samples": &samples, "stackTable": &stackTable, "frameTable": &frameTable, "stringTable": &strs} {
		if err := json.Unmarshal(th[name], to); err != nil {
			f.Fatalf("headless.json.gz: thread 0's %s: %v", name, err)
		}
	}
	// index is the number in column col of row, or -1 (null, or none).
	index := func(row []json.RawMessage, col int) int {
		n := -1
		if col < len(row) {
			json.Unmarshal(row[col], &n)
		}
		return n
	}
	// upTo is one past the largest index in column col of rows.
	upTo := func(rows [][]json.RawMessage, col int) int {
		n := 0
		for _, row := range rows {
			n = max(n, index(row, col)+1)
		}
		return n
	}
	stackTable.Data = stackTable.Data[:min(stacks, len(stackTable.Data))]
	frameTable.Data = frameTable.Data[:upTo(stackTable.Data, stackTable.Schema["frame"])]
	strs = strs[:upTo(frameTable.Data, frameTable.Schema["location"])]
	var kept [][]json.RawMessage
	for _, row := range samples.Data {
		if s := index(row, samples.Schema["stack"]); s >= 0 && s < len(stackTable.Data) {
			kept = append(kept, row)
		}
	}
	samples.Data = kept
	set := func(m map[string]json.RawMessage, name string, v any) { m[name] = marshalT(f, v) }
	set(th, "samples", samples)
	set(th, "stackTable", stackTable)
	set(th, "frameTable", frameTable)
	set(th, "stringTable", strs)
	set(th, "markers", table{Schema: map[string]int{}, Data: [][]json.RawMessage{}})
	set(meta, "markerSchema", []any{})
	set(doc, "meta", meta)
	set(doc, "threads", []any{th})
	set(doc, "libs", []any{})
	set(doc, "processes", []any{})
	seed := marshalT(f, doc)
	if _, _, err := firefox.Parse(seed); err != nil {
		f.Fatalf("the seed cut from headless.json.gz: %v", err)
	}
	return seed
}

// processedSeed cuts firefox/testdata/processed/processed.json.gz, the
// Firefox Profiler's processing of headless.json.gz, as geckoSeed cuts
// that: its first thread's samples of the first stacks, each shared
// table (columns of one length) to the prefix those use, and no markers,
// pages or profiling log.
func processedSeed(f *testing.F, stacks int) []byte {
	const name = "processed.json.gz"
	var doc, meta, shared map[string]json.RawMessage
	var threads []map[string]json.RawMessage
	data := readertest.ReadFile(f, filepath.Join("firefox", "testdata", "processed", name))
	if err := json.Unmarshal(data, &doc); err != nil {
		f.Fatalf("%s: %v", name, err)
	}
	if json.Unmarshal(doc["meta"], &meta) != nil || json.Unmarshal(doc["shared"], &shared) != nil ||
		json.Unmarshal(doc["threads"], &threads) != nil || len(threads) == 0 {
		f.Fatalf("%s: no meta, shared tables or threads", name)
	}
	th := threads[0]
	// cut keeps the rows of table (in m[key]) that keep says, in every
	// column of the table's length.
	cut := func(m map[string]json.RawMessage, key string, keep func(i int) bool) {
		var tbl map[string]json.RawMessage
		var n int
		if json.Unmarshal(m[key], &tbl) != nil || json.Unmarshal(tbl["length"], &n) != nil {
			f.Fatalf("%s: %s is not a table with a length", name, key)
		}
		kept := 0
		for col, raw := range tbl {
			var rows []json.RawMessage
			if json.Unmarshal(raw, &rows) != nil || len(rows) != n {
				continue
			}
			var out []json.RawMessage
			for i, r := range rows {
				if keep(i) {
					out = append(out, r)
				}
			}
			kept = len(out)
			tbl[col] = marshalT(f, append([]json.RawMessage{}, out...))
		}
		tbl["length"] = marshalT(f, kept)
		m[key] = marshalT(f, tbl)
	}
	// col is column c of table (in m[key]), -1 for a null or a non-number.
	col := func(m map[string]json.RawMessage, key, c string) []int {
		var tbl map[string][]json.RawMessage
		json.Unmarshal(m[key], &tbl) // the columns that are lists
		out := make([]int, len(tbl[c]))
		for i, r := range tbl[c] {
			out[i] = -1
			json.Unmarshal(r, &out[i])
		}
		return out
	}
	// upTo is one past the largest index in the columns.
	upTo := func(cols ...[]int) int {
		n := 0
		for _, c := range cols {
			for _, v := range c {
				n = max(n, v+1)
			}
		}
		return n
	}
	below := func(n int) func(int) bool { return func(i int) bool { return i < n } }
	stack := col(th, "samples", "stack")
	cut(th, "samples", func(i int) bool { return stack[i] >= 0 && stack[i] < stacks })
	cut(th, "markers", below(0))
	cut(shared, "stackTable", below(stacks))
	cut(shared, "frameTable", below(upTo(col(shared, "stackTable", "frame"))))
	cut(shared, "funcTable", below(upTo(col(shared, "frameTable", "func"))))
	cut(shared, "resourceTable", below(upTo(col(shared, "funcTable", "resource"))))
	cut(shared, "sources", below(upTo(col(shared, "funcTable", "source"))))
	var strs []json.RawMessage
	if err := json.Unmarshal(shared["stringArray"], &strs); err != nil {
		f.Fatalf("%s: stringArray: %v", name, err)
	}
	strs = strs[:upTo(col(shared, "funcTable", "name"), col(shared, "resourceTable", "name"),
		col(shared, "resourceTable", "host"), col(shared, "sources", "filename"))]
	shared["stringArray"] = marshalT(f, strs)
	var libs []json.RawMessage
	if err := json.Unmarshal(doc["libs"], &libs); err != nil {
		f.Fatalf("%s: libs: %v", name, err)
	}
	doc["libs"] = marshalT(f, libs[:upTo(col(shared, "frameTable", "lib"), col(shared, "resourceTable", "lib"))])
	meta["markerSchema"] = marshalT(f, []any{})
	doc["pages"], doc["profilingLog"] = marshalT(f, []any{}), marshalT(f, map[string]any{})
	doc["meta"], doc["shared"], doc["threads"] = marshalT(f, meta), marshalT(f, shared), marshalT(f, []any{th})
	seed := marshalT(f, doc)
	if _, _, err := firefox.Parse(seed); err != nil {
		f.Fatalf("the seed cut from %s: %v", name, err)
	}
	return seed
}

func marshalT(tb testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FuzzOTLP: OpenTelemetry profiles, protobuf and JSON (the committed files
// made from Go profiles by pdata's helpers and by the Collector contrib
// translator, see otlp/testdata/README.md).
func FuzzOTLP(f *testing.F) {
	var seeds [][]byte
	for _, name := range []string{"cpu-base.otlp.pb", "cpu-base.otlp.json", "cpu-new.otlp.pb", "cpu-base.translator.otlp.pb"} {
		data, err := os.ReadFile(filepath.Join("otlp", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	fuzzReader(f, seeds, "otlp-profiles", "otlp.Parse", otlp.Parse)
}

// fuzzReader fuzzes a format reader, directly and through Parse, from
// seeds and the corpus files of a format.
func fuzzReader(f *testing.F, seeds [][]byte, format, name string, read func([]byte) (*pprofile.Profile, []string, error)) {
	addAll(f, seeds)
	addCorpus(f, format)
	f.Fuzz(func(t *testing.T, data []byte) {
		var p *pprofile.Profile
		var warns []string
		var err error
		readertest.BoundedAlloc(t, name, len(data), func() { p, warns, err = read(data) })
		checkReader(t, name, p, warns, err)
		checkParse(t, data)
	})
}

// FuzzGoTrace: Go execution traces (recorded with runtime/trace at seed
// time, and the corpus's small traces of Go 1.11 to 1.25).
func FuzzGoTrace(f *testing.F) {
	if tr := recordTrace(f); tr != nil {
		f.Add(tr)
	}
	addCorpus(f, "go-exec-trace-binary")
	f.Fuzz(func(t *testing.T, data []byte) {
		var p *pprofile.Profile
		var warns []string
		var err error
		readertest.BoundedAlloc(t, "gotrace.Parse", len(data), func() { p, warns, err = gotrace.Parse(data, gotrace.Options{}) })
		if err == nil && p != nil && len(p.Sample) == 0 {
			p = nil // a trace with no goroutine time: allowed here, an error from Parse
		}
		if p != nil || err != nil {
			checkReader(t, "gotrace.Parse", p, warns, err)
		}
		var b *gotrace.Blamed
		readertest.BoundedAlloc(t, "gotrace.Blame", len(data), func() { b, err = gotrace.Blame(data, gotrace.BlameOptions{}) })
		if err == nil {
			checkProfile(t, "gotrace.Blame locks", b.Locks)
			checkProfile(t, "gotrace.Blame paths", b.Paths)
		} else if strings.TrimSpace(err.Error()) == "" {
			t.Errorf("gotrace.Blame: empty error message")
		} else {
			readertest.NotRecovered(t, "gotrace.Blame", err)
		}
		checkParse(t, data)
	})
}

// FuzzNettrace: .NET EventPipe traces through Parse (the corpus's small
// traces; package nettrace's own targets have its synthetic traces).
func FuzzNettrace(f *testing.F) {
	f.Add([]byte("Nettrace\x14\x00\x00\x00!FastSerialization.1"))
	addCorpus(f, "dotnet-nettrace")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data) })
}

// FuzzLoad: Load on arbitrary bytes from standard input, seeded with every
// format and container: sniffing must send each to a reader or fail
// clearly, and the profiler's samples are dropped without breaking the
// profile.
func FuzzLoad(f *testing.F) {
	seeds := allSeeds(f)
	addAll(f, seeds)
	addAll(f, containerSeeds(f, seeds))
	f.Add([]byte("<html><title>404 page not found</title></html>"))
	f.Add([]byte(`{"traceEvents": [{"ph": "X"}]}`))
	f.Add([]byte(`{"nodes": [], "samples": [], "timeDeltas": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var l *profile.Loaded
		var err error
		readertest.BoundedAlloc(t, "Load", len(data), func() {
			l, err = profile.Load(context.Background(), "-", profile.Options{Stdin: bytes.NewReader(data), MaxSize: fuzzLimit})
		})
		checkLoaded(t, "-", l, err)
		if err == nil && l.Dropped < 0 {
			t.Errorf("Dropped = %d", l.Dropped)
		}
	})
}

// FuzzContainers: a container never changes what its content reads as.
// Layer picks gzip, two gzip layers, zip, or a zip of a gzip around data;
// the wrapped input must load like data itself (the same failure kind, or
// the same format, kind, samples and totals).
func FuzzContainers(f *testing.F) {
	for i, s := range allSeeds(f) {
		f.Add(s, uint8(i))
	}
	f.Add([]byte{}, uint8(2))
	f.Add([]byte(" \n"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, layer uint8) {
		if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) || bytes.HasPrefix(data, []byte("PK\x03\x04")) {
			return // already a container: wrapping it changes the layer count
		}
		if len(data) > fuzzLimit {
			// Its container expands past the limit, which bounds what is
			// decompressed, not bytes already in memory. (The runtime's
			// debug=1 heap seed grows with the tests run before it.)
			return
		}
		wrapped, name := wrap(t, data, layer)
		plain, perr := profile.Parse(fuzzSource, data, fuzzLimit)
		got, gerr := profile.Parse(fuzzSource, wrapped, fuzzLimit)
		checkLoaded(t, fuzzSource, got, gerr)
		if (perr == nil) != (gerr == nil) {
			t.Fatalf("%s changes the outcome: plain %v, wrapped %v", name, perr, gerr)
		}
		if perr != nil {
			if a, b := kindOf(perr), kindOf(gerr); a != b {
				t.Errorf("%s changes the failure: plain %v (%v), wrapped %v (%v)", name, perr, a, gerr, b)
			}
			return
		}
		if a, b := summary(plain), summary(got); a != b {
			t.Errorf("%s changes the profile: plain %s, wrapped %s", name, a, b)
		}
	})
}

// wrap puts data in the containers layer selects.
func wrap(t *testing.T, data []byte, layer uint8) ([]byte, string) {
	switch layer % 4 {
	case 0:
		return gzipBytes(t, data), "gzip"
	case 1:
		return gzipBytes(t, gzipBytes(t, data)), "gzip+gzip"
	case 2:
		return zipBytes(t, "x.prof", data), "zip"
	}
	return zipBytes(t, "x.prof.gz", gzipBytes(t, data)), "zip+gzip"
}

// kindOf is the sentinel an error wraps, or nil.
func kindOf(err error) error {
	for _, k := range []error{profile.ErrUnrecognized, profile.ErrUnsupported, profile.ErrCorrupt, profile.ErrEmpty, profile.ErrTooLarge} {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

// summary is what a container must not change in a loaded profile.
func summary(l *profile.Loaded) string {
	var total float64
	for _, s := range l.Profile.Sample {
		for _, v := range s.Value {
			total += float64(v)
		}
	}
	return fmt.Sprintf("%s/%s: %d samples, %d types, total %g", l.Format, l.Kind, len(l.Profile.Sample), len(l.Profile.SampleType), total)
}

// checkParse parses data as profdiff does and checks the result.
func checkParse(t *testing.T, data []byte) {
	var l *profile.Loaded
	var err error
	readertest.BoundedAlloc(t, "Parse", len(data), func() { l, err = profile.Parse(fuzzSource, data, fuzzLimit) })
	checkLoaded(t, fuzzSource, l, err)
}

// checkLoaded checks what Parse or Load returned for source: either a
// one-line *profile.Error naming it, or a profile whose numbers hold
// together (see checkProfile, checkShares).
func checkLoaded(t *testing.T, source string, l *profile.Loaded, err error) {
	t.Helper()
	if err != nil {
		if l != nil {
			t.Errorf("a profile and an error: %v", err)
		}
		var pe *profile.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v is a %T, not a *profile.Error", err, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, source+": ") || len(msg) == len(source)+2 {
			t.Errorf("error %q does not name the source %q and the problem", msg, source)
		}
		if strings.ContainsAny(msg, "\r\n") {
			t.Errorf("error %q spans lines", msg)
		}
		readertest.NotRecovered(t, "Parse", err)
		return
	}
	if l == nil || l.Profile == nil {
		t.Fatal("no profile and no error")
	}
	checkProfile(t, "Parse", l.Profile)
	if len(l.Profile.Sample) == 0 {
		t.Error("a profile with no samples and no error")
	}
	for _, w := range l.Warnings {
		if !strings.HasPrefix(w, source+": ") || strings.ContainsAny(w, "\r\n") {
			t.Errorf("warning %q is not one line naming the source", w)
		}
	}
	if !isDiff(l.Profile) {
		checkShares(t, l)
	}
}

// checkReader checks a format reader called directly: a non-empty error
// and no profile, or a profile that passes checkProfile.
func checkReader(t *testing.T, reader string, p *pprofile.Profile, warns []string, err error) {
	t.Helper()
	if err != nil {
		if p != nil {
			t.Errorf("%s: a profile and an error: %v", reader, err)
		}
		if strings.TrimSpace(err.Error()) == "" {
			t.Errorf("%s: empty error message", reader)
		}
		readertest.NotRecovered(t, reader, err)
		return
	}
	if p == nil {
		t.Fatalf("%s: no profile and no error", reader)
	}
	checkProfile(t, reader, p)
	for _, w := range warns {
		if strings.TrimSpace(w) == "" {
			t.Errorf("%s: empty warning", reader)
		}
	}
}

// checkProfile: valid per CheckValid, and no negative value unless the
// profile is a diff (pprof's -diff_base output, base samples labelled
// pprof::base).
func checkProfile(t *testing.T, reader string, p *pprofile.Profile) {
	t.Helper()
	if err := p.CheckValid(); err != nil {
		t.Fatalf("%s: invalid profile: %v", reader, err)
	}
	if isDiff(p) {
		return
	}
	for i, s := range p.Sample {
		for j, v := range s.Value {
			if v < 0 {
				t.Fatalf("%s: sample %d value %d (%s) is %d in a profile that is not a diff", reader, i, j, p.SampleType[j].Type, v)
			}
		}
	}
}

func isDiff(p *pprofile.Profile) bool {
	for _, s := range p.Sample {
		if len(s.Label["pprof::base"]) > 0 {
			return true
		}
	}
	return false
}

// shareSlack absorbs float rounding in a sum of shares.
const shareSlack = 1e-9

// checkShares runs the analyzer on l: alone (top), where bucket shares lie
// in [0, 1] and sum to 1 (0 when nothing has a value) and totals are not
// negative; and against itself (diff), where nothing changes.
func checkShares(t *testing.T, l *profile.Loaded) {
	t.Helper()
	a := diff.NewAnalyzer(diff.Options{Top: -1})
	if err := a.Add(result.Base, l); err != nil {
		if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\r\n") {
			t.Errorf("analyzer error %q is not one line", msg)
		}
		return
	}
	r := a.Top()
	if !(r.Total >= 0) || r.Samples < 0 {
		t.Fatalf("top: total %v, samples %d", r.Total, r.Samples)
	}
	var sum float64
	for _, b := range r.Buckets {
		inUnit(t, "bucket "+b.Bucket.String(), b.Share)
		sum += b.Share
	}
	if want := 1.0; r.Total == 0 {
		if sum != 0 {
			t.Errorf("top: bucket shares sum to %v with a zero total", sum)
		}
	} else if math.Abs(sum-want) > shareSlack {
		t.Errorf("top: bucket shares sum to %v, want 1 (total %v)", sum, r.Total)
	}
	for _, m := range r.Methods {
		inUnit(t, "method "+m.Name, m.Share)
	}
	if r.Sched != nil {
		inUnit(t, "scheduler latency", r.Sched.Share)
	}
	a = diff.NewAnalyzer(diff.Options{Top: -1})
	if a.Add(result.Base, l) != nil || a.Add(result.New, l) != nil {
		t.Fatal("a profile the analyzer took once fails the second time")
	}
	d := a.Diff()
	for _, b := range d.Buckets {
		if b.Delta != 0 || b.Base != b.New {
			t.Errorf("diff against itself: bucket %s %v → %v (Δ %v)", b.Bucket, b.Base, b.New, b.Delta)
		}
	}
	for _, m := range d.Methods {
		if m.Delta != 0 || m.Base != m.New {
			t.Errorf("diff against itself: method %s %v → %v (Δ %v)", m.Name, m.Base, m.New, m.Delta)
		}
	}
}

func inUnit(t *testing.T, what string, share float64) {
	t.Helper()
	if !(share >= 0 && share <= 1+shareSlack) {
		t.Errorf("top: %s share %v is not in [0, 1]", what, share)
	}
}

// Seeds.

func addAll(f *testing.F, seeds [][]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
}

// allSeeds are the generated seeds of every format (perf's recording
// only in FuzzPerfScript: it takes a second or two).
func allSeeds(f *testing.F) [][]byte {
	var all [][]byte
	for _, s := range [][][]byte{pprofSeeds(f), legacySeeds(f), foldedSeeds(f), speedscopeSeeds(f), perfSeeds(f, false)} {
		all = append(all, s...)
	}
	if tr := recordTrace(f); tr != nil {
		all = append(all, tr)
	}
	return all
}

// addCorpus adds the corpus files whose format (index.tsv's second column)
// starts with format, up to maxSeed bytes each, unzipping .zip files.
// Without ../shared/corpus it adds nothing.
func addCorpus(f *testing.F, format string) {
	dir := corpus.Dir()
	if dir == "" {
		return
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.tsv"))
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(index), "\n") {
		cols := strings.Split(line, "\t")
		if len(cols) < 2 || !strings.HasPrefix(cols[1], format) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, cols[0]))
		if err != nil || len(data) > maxSeed {
			continue
		}
		if strings.HasSuffix(cols[0], ".zip") {
			if data = unzipFirst(data); len(data) > maxSeed {
				continue
			}
		}
		if data != nil {
			f.Add(data)
		}
	}
}

func unzipFirst(data []byte) []byte {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil || len(zr.File) == 0 {
		return nil
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		return nil
	}
	defer rc.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(rc); err != nil {
		return nil
	}
	return buf.Bytes()
}

// runtimeProfile writes the runtime/pprof profile name at debug level.
func runtimeProfile(f *testing.F, name string, debug int) []byte {
	var buf bytes.Buffer
	if err := pprof.Lookup(name).WriteTo(&buf, debug); err != nil {
		f.Fatalf("writing the %s profile: %v", name, err)
	}
	return buf.Bytes()
}

// pprofSeeds: runtime/pprof's heap and goroutine profiles, gzipped as
// written and uncompressed, and a small synth profile.
func pprofSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, name := range []string{"heap", "goroutine"} {
		gz := runtimeProfile(f, name, 0)
		p, err := pprofile.ParseData(gz)
		if err != nil {
			f.Fatalf("runtime/pprof's %s profile: %v", name, err)
		}
		var raw bytes.Buffer
		if err := p.WriteUncompressed(&raw); err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, gz, raw.Bytes())
	}
	var buf bytes.Buffer
	cfg := synth.Config{Seed: 1, Stacks: 40, MinDepth: 3, MaxDepth: 8, Functions: 30}
	if err := synth.Write(&buf, cfg); err != nil {
		f.Fatal(err)
	}
	return append(seeds, buf.Bytes())
}

// legacySeeds: runtime/pprof's debug=1 text and the legacy text formats
// pprof reads.
func legacySeeds(f *testing.F) [][]byte {
	seeds := [][]byte{
		runtimeProfile(f, "heap", 1),
		runtimeProfile(f, "goroutine", 1),
		runtimeProfile(f, "threadcreate", 1),
		[]byte("--- contentionz 1 ---\ncycles/second = 1000\nsampling period = 1\n  5 2 @ 0x1 0x2\n"),
		[]byte("--- contention ---\ncycles/second=3000000000\n   1000   1 @ 0x401000 0x402000\n"),
		[]byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1\n"),
	}
	return seeds
}

// goStacks are the goroutine profile's stacks, root first, with counts.
func goStacks(f *testing.F) ([][]string, []int64) {
	p, err := pprofile.ParseData(runtimeProfile(f, "goroutine", 0))
	if err != nil {
		f.Fatal(err)
	}
	var stacks [][]string
	var counts []int64
	for _, s := range p.Sample {
		var st []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			for j := len(s.Location[i].Line) - 1; j >= 0; j-- {
				st = append(st, s.Location[i].Line[j].Function.Name)
			}
		}
		stacks, counts = append(stacks, st), append(counts, s.Value[0])
	}
	return stacks, counts
}

// foldedSeeds: this process's goroutines as folded stacks, with CRLF and
// a BOM, and the committed .NET examples.
func foldedSeeds(f *testing.F) [][]byte {
	stacks, counts := goStacks(f)
	var b strings.Builder
	for i, st := range stacks {
		fmt.Fprintf(&b, "%s %d\n", strings.Join(st, ";"), counts[i])
	}
	seeds := [][]byte{[]byte(b.String()), []byte("\uFEFF" + strings.ReplaceAll(b.String(), "\n", "\r\n"))}
	for _, name := range []string{"net10.folded", "net11.folded"} {
		if data, err := os.ReadFile(filepath.Join("..", "testdata", "dotnet", name)); err == nil && len(data) <= maxSeed {
			seeds = append(seeds, data)
		}
	}
	return seeds
}

// speedscopeSeeds: this process's goroutines as a sampled and an evented
// speedscope profile.
func speedscopeSeeds(f *testing.F) [][]byte {
	stacks, counts := goStacks(f)
	type frame struct {
		Name string `json:"name"`
	}
	type event struct {
		Type  string `json:"type"`
		Frame int    `json:"frame"`
		At    int64  `json:"at"`
	}
	var frames []frame
	index := map[string]int{}
	var samples [][]int
	var weights []int64
	var events []event
	var at int64
	for i, st := range stacks {
		var ids []int
		for _, name := range st {
			id, ok := index[name]
			if !ok {
				id = len(frames)
				index[name] = id
				frames = append(frames, frame{name})
			}
			ids = append(ids, id)
		}
		samples, weights = append(samples, ids), append(weights, counts[i])
		for _, id := range ids {
			events = append(events, event{"O", id, at})
		}
		at += counts[i] * 1000
		for j := len(ids) - 1; j >= 0; j-- {
			events = append(events, event{"C", ids[j], at})
		}
	}
	doc := func(prof map[string]any) []byte {
		b, err := json.Marshal(map[string]any{
			"$schema":  "https://www.speedscope.app/file-format-schema.json",
			"shared":   map[string]any{"frames": frames},
			"profiles": []any{prof},
		})
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	return [][]byte{
		doc(map[string]any{"type": "sampled", "name": "goroutines", "unit": "none", "startValue": 0, "endValue": len(samples), "samples": samples, "weights": weights}),
		doc(map[string]any{"type": "evented", "name": "main", "unit": "microseconds", "startValue": 0, "endValue": at, "events": events}),
	}
}

var perfOnce struct {
	sync.Once
	text []byte
	skip string
}

// perfSeeds: header forms perf prints with several events and, with
// record, the `perf script` text of a short shell loop recorded with
// `perf record -e cpu-clock -g` (once per process; not in -short mode,
// where perf's start-up of a second or two is too slow).
func perfSeeds(f *testing.F, record bool) [][]byte {
	seeds := [][]byte{[]byte("app 1234/1235 [001] 100.000001:     250000 cycles:u: \n" +
		"\t4005d6 main+0x10 (/bin/app)\n\t7f00 __libc_start_main+0xf3 (/lib/libc.so.6)\n\n" +
		"app 1234/1235 [001] 100.000002:     120000 instructions:u: \n\t4005d6 main+0x10 (/bin/app)\n\n")}
	if !record || testing.Short() {
		return seeds
	}
	perfOnce.Do(func() {
		perfOnce.text, perfOnce.skip = recordPerf([]string{"-e", "cpu-clock", "-c", "100000", "-g", "--",
			"sh", "-c", `i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done`})
	})
	if perfOnce.skip != "" {
		f.Logf("no perf-recorded seed: %s", perfOnce.skip)
		return seeds
	}
	return append(seeds, perfOnce.text)
}

// recordPerf records a command with perf record's args (events, options,
// --, the command) and prints it with perf script and scriptArgs.
func recordPerf(args []string, scriptArgs ...string) ([]byte, string) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return nil, "perf is not installed"
	}
	dir, err := os.MkdirTemp("", "profdiff-fuzz-perf")
	if err != nil {
		return nil, err.Error()
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "perf.data")
	rec := exec.Command(perf, producertest.PerfRecord(perf, append([]string{"-q", "-o", data}, args...)...)...)
	if out, err := rec.CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("perf cannot record here: %v: %s", err, bytes.TrimSpace(out))
	}
	text, err := exec.Command(perf, append([]string{"script", "-i", data}, scriptArgs...)...).Output()
	if err != nil {
		return nil, fmt.Sprintf("perf script: %v", err)
	}
	if len(text) > maxSeed {
		// Cut at a sample boundary (a blank line).
		text = text[:bytes.LastIndex(text[:maxSeed], []byte("\n\n"))+2]
	}
	return text, ""
}

var traceOnce struct {
	sync.Once
	data []byte
}

// recordTrace records a short execution trace with runtime/trace of
// goroutines that contend on a mutex, wait on a channel and sleep; nil
// when tracing is already on.
func recordTrace(f *testing.F) []byte {
	traceOnce.Do(func() {
		var buf bytes.Buffer
		if err := trace.Start(&buf); err != nil {
			return
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		ch := make(chan int)
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mu.Lock()
				time.Sleep(200 * time.Microsecond) // the scenario: the traced goroutine sleeps holding the mutex, so the others contend
				mu.Unlock()
				ch <- i
			}()
		}
		for i := 0; i < 4; i++ {
			<-ch
			runtime.Gosched()
		}
		wg.Wait()
		trace.Stop()
		traceOnce.data = buf.Bytes()
	})
	if traceOnce.data == nil {
		f.Log("tracing is already on: no recorded trace seed")
	}
	return traceOnce.data
}

// containerSeeds wraps each seed in gzip and zip, and adds the archives
// containers reject: empty, several members, a bomb past the limit.
func containerSeeds(f *testing.F, seeds [][]byte) [][]byte {
	var out [][]byte
	for i, s := range seeds {
		if i%2 == 0 {
			out = append(out, gzipBytes(f, s))
		} else {
			out = append(out, zipBytes(f, "x.prof", s))
		}
	}
	var empty, two bytes.Buffer
	if err := zip.NewWriter(&empty).Close(); err != nil {
		f.Fatal(err)
	}
	zw := zip.NewWriter(&two)
	for _, name := range []string{"a.folded", "b.folded"} {
		w, err := zw.Create(name)
		if err != nil {
			f.Fatal(err)
		}
		fmt.Fprintf(w, "main;f 1\n")
	}
	if err := zw.Close(); err != nil {
		f.Fatal(err)
	}
	bomb := gzipBytes(f, make([]byte, fuzzLimit+1))
	return append(out, empty.Bytes(), two.Bytes(), bomb, gzipBytes(f, nil))
}

func gzipBytes(tb testing.TB, data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func zipBytes(tb testing.TB, name string, data []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}
