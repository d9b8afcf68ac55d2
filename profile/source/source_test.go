package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile"
)

// folded writes n folded-stack files named prefix0.folded ... and returns
// their paths; file i's one stack is main;work<i>.
func folded(t *testing.T, dir, prefix string, n int) []string {
	t.Helper()
	var out []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("%s%d.folded", prefix, i))
		if err := os.WriteFile(p, fmt.Appendf(nil, "main;work%d %d\n", i, i+1), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// shuffled is a prepare step that takes a random while, so that the
// workers finish out of order.
func shuffled(it *Item) (string, error) {
	time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
	return it.Source, nil
}

// Items reach add in side and argument order, however the workers finish,
// each with what prepare made of it.
func TestLoadOrder(t *testing.T) {
	dir := t.TempDir()
	base, nw := folded(t, dir, "a", 9), folded(t, dir, "b", 7)
	var got, sides []string
	_, err := Load(context.Background(), []Side{{Args: base}, {Args: nw}}, Options{Parallel: 4}, shuffled, func(it *Item, v string) error {
		if v != it.Source || it.Loaded == nil || it.Loaded.Source != it.Source {
			t.Errorf("item %s: prepared %q, loaded %+v", it.Source, v, it.Loaded)
		}
		got = append(got, it.Source)
		sides = append(sides, fmt.Sprint(it.Side))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([]string{}, base...), nw...); !reflect.DeepEqual(got, want) {
		t.Errorf("order:\n%q\nwant\n%q", got, want)
	}
	if want := strings.Repeat("0", 9) + strings.Repeat("1", 7); strings.Join(sides, "") != want {
		t.Errorf("sides %s, want %s", strings.Join(sides, ""), want)
	}
}

// The first failing source stops loading: its error is returned, the
// items before it were added, none after it, and no prepare runs once
// Load has returned.
func TestLoadFirstErrorStops(t *testing.T) {
	dir := t.TempDir()
	files := folded(t, dir, "a", 12)
	missing := filepath.Join(dir, "missing.folded")
	args := append(append(append([]string{}, files[:3]...), missing), files[3:]...)
	var running atomic.Int32
	var added []string
	_, err := Load(context.Background(), []Side{{Args: args}}, Options{Parallel: 3}, func(it *Item) (struct{}, error) {
		running.Add(1)
		defer running.Add(-1)
		time.Sleep(time.Millisecond)
		return struct{}{}, nil
	}, func(it *Item, _ struct{}) error {
		added = append(added, it.Source)
		return nil
	})
	var pe *profile.Error
	if !errors.As(err, &pe) || pe.Source != missing || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error %v, want the missing file's", err)
	}
	if !reflect.DeepEqual(added, files[:3]) {
		t.Errorf("added %q, want %q", added, files[:3])
	}
	if n := running.Load(); n != 0 {
		t.Errorf("%d prepare steps still running after Load returned", n)
	}

	// add's own error stops it the same way.
	stop := errors.New("stop")
	n := 0
	_, err = Load(context.Background(), []Side{{Args: files}}, Options{}, nil, func(it *Item, _ struct{}) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Errorf("add's error: %v after %d adds, want %v after 2", err, n, stop)
	}
}

// The end of the context stops loading and is Load's error.
func TestLoadCancel(t *testing.T) {
	dir := t.TempDir()
	files := folded(t, dir, "a", 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	_, err := Load(ctx, []Side{{Args: files}}, Options{Parallel: 2}, nil, func(it *Item, _ struct{}) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Errorf("%v after %d adds, want context.Canceled after 3", err, n)
	}
	// Ended before it starts: nothing is added.
	n = 0
	if _, err := Load(ctx, []Side{{Args: files}}, Options{}, nil, func(*Item, struct{}) error { n++; return nil }); !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("a context ended before: %v after %d adds", err, n)
	}
}

// At most Parallel sources are read and prepared at once, and at most
// Parallel+1 are held (read, or being read, and not yet added), however
// slowly add takes them.
func TestLoadBoundedHeld(t *testing.T) {
	dir := t.TempDir()
	files := folded(t, dir, "a", 24)
	for _, par := range []int{1, 2, 3} {
		var mu sync.Mutex
		reading, held, maxReading, maxHeld := 0, 0, 0, 0
		_, err := Load(context.Background(), []Side{{Args: files[:12]}, {Args: files[12:]}}, Options{Parallel: par}, func(it *Item) (struct{}, error) {
			mu.Lock()
			reading++
			held++
			maxReading, maxHeld = max(maxReading, reading), max(maxHeld, held)
			mu.Unlock()
			time.Sleep(200 * time.Microsecond)
			mu.Lock()
			reading--
			mu.Unlock()
			return struct{}{}, nil
		}, func(it *Item, _ struct{}) error {
			time.Sleep(time.Millisecond) // the workers run ahead
			mu.Lock()
			held--
			mu.Unlock()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if maxReading > par || maxHeld > par+1 {
			t.Errorf("Parallel %d: %d read at once, %d held, want at most %d and %d", par, maxReading, maxHeld, par, par+1)
		}
		if maxHeld < par+1 && runtime.GOMAXPROCS(0) > 1 {
			t.Logf("Parallel %d: at most %d held (the workers did not run ahead)", par, maxHeld)
		}
	}
}

// Each distinct warning is returned once, with the profiles that had it;
// the profiler's dropped samples are summed.
func TestLoadWarnings(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, n := range []string{"a.folded.gz", "b.folded.gz", "c.folded"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("main;work 10\nruntime.goexit;github.com/felixge/fgprof.(*profiler).loop 3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	w, err := Load(context.Background(), []Side{{Args: files[:2]}, {Args: files[1:]}}, Options{}, nil, func(*Item, struct{}) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := Warnings{
		Lines:     []string{"named .gz but not gzip-compressed; read as is (3 profiles: " + files[0] + ", " + files[1] + ")"},
		Dropped:   4,
		DroppedIn: []string{files[0], files[1], files[1], files[2]},
	}
	if !reflect.DeepEqual(w, want) {
		t.Errorf("warnings:\n%+v\nwant\n%+v", w, want)
	}
}

// The lines of warnings: one source's prefixed, several sources' counted
// with the first names, those that named no source as they are.
func TestWarningsLines(t *testing.T) {
	var w warnings
	for _, l := range []*profile.Loaded{
		{Source: "a.pb.gz", Warnings: []string{"a.pb.gz: no period", "unprefixed"}, Dropped: 1000},
		{Source: "b.pb.gz", Warnings: []string{"b.pb.gz: no period", "b.pb.gz: odd", "unprefixed"}},
		{Source: "a.pb.gz", Warnings: []string{"a.pb.gz: no period"}, Dropped: 234},
		{Source: "c.pb.gz", Warnings: []string{"c.pb.gz: no period"}},
		{Source: "d.pb.gz", Warnings: []string{"d.pb.gz: no period"}},
	} {
		w.add(l)
	}
	want := Warnings{
		Lines: []string{
			"no period (5 profiles: a.pb.gz, b.pb.gz, c.pb.gz, …)",
			"unprefixed (2 profiles)",
			"b.pb.gz: odd",
		},
		Dropped:   1234,
		DroppedIn: []string{"a.pb.gz", "a.pb.gz"},
	}
	if got := w.result(); !reflect.DeepEqual(got, want) {
		t.Errorf("lines:\n%+v\nwant\n%+v", got, want)
	}
}

// gzippedPprof writes a small gzipped pprof CPU profile.
func gzippedPprof(t *testing.T, path string) {
	t.Helper()
	fn := &pprofile.Function{ID: 1, Name: "main.work"}
	loc := &pprofile.Location{ID: 1, Line: []pprofile.Line{{Function: fn}}}
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1e7,
		Sample:   []*pprofile.Sample{{Location: []*pprofile.Location{loc}, Value: []int64{1e7}}},
		Location: []*pprofile.Location{loc}, Function: []*pprofile.Function{fn},
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// With Raw a pprof protobuf reaches prepare unparsed and anything else as
// a model; without it, or without a prepare step, everything is a model.
// A capture folder's profile gets the manifest's Go version, set after
// prepare (on the Loaded prepare left).
func TestLoadRawAndGoVersion(t *testing.T) {
	dir := t.TempDir()
	pb := filepath.Join(dir, "cpu.pb.gz")
	gzippedPprof(t, pb)
	data, _ := os.ReadFile(pb)
	capDir := captureDir(t, filepath.Join(dir, "cap"), "go1.26.1", data, "cpu")
	txt := folded(t, dir, "f", 1)[0]
	sides := []Side{{Args: []string{pb, txt}}, {Args: []string{capDir}}}
	type seen struct {
		raw       bool
		goVersion string
	}
	for _, raw := range []bool{true, false} {
		var got []seen
		_, err := Load(context.Background(), sides, Options{Raw: raw}, func(it *Item) (bool, error) {
			if it.Raw != nil {
				in, err := it.Raw.Load() // what a decoder would make of it
				it.Loaded = in
				return true, err
			}
			return false, nil
		}, func(it *Item, wasRaw bool) error {
			got = append(got, seen{wasRaw, it.Loaded.GoVersion})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []seen{{raw, ""}, {false, ""}, {raw, "go1.26.1"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Raw %v: %+v, want %+v", raw, got, want)
		}
	}
	n := 0
	_, err := Load(context.Background(), sides, Options{Raw: true}, nil, func(it *Item, _ struct{}) error {
		if it.Raw != nil || it.Loaded == nil || len(it.Loaded.Profile.Sample) != 1 {
			t.Errorf("%s without prepare: raw %v, loaded %v", it.Source, it.Raw != nil, it.Loaded)
		}
		n++
		return nil
	})
	if err != nil || n != 3 {
		t.Errorf("without prepare: %v after %d adds", err, n)
	}
}

// Resolved sees the sources before any is read, and its error stops Load;
// Wait runs once after the last add, and its error is Load's.
func TestLoadResolvedAndWait(t *testing.T) {
	dir := t.TempDir()
	files := folded(t, dir, "a", 3)
	var calls []string
	opts := Options{
		Resolved: func(srcs [][]string) error {
			calls = append(calls, fmt.Sprintf("resolved %d+%d", len(srcs[0]), len(srcs[1])))
			return nil
		},
		Wait: func() error {
			calls = append(calls, "wait")
			return nil
		},
	}
	_, err := Load(context.Background(), []Side{{Args: files[:1]}, {Args: files[1:]}}, opts, nil, func(it *Item, _ struct{}) error {
		calls = append(calls, "add")
		return nil
	})
	if want := []string{"resolved 1+2", "add", "add", "add", "wait"}; err != nil || !reflect.DeepEqual(calls, want) {
		t.Errorf("calls %q (%v), want %q", calls, err, want)
	}
	bad := errors.New("bad")
	opts.Wait = func() error { return bad }
	if _, err := Load(context.Background(), []Side{{Args: files[:1]}, {Args: files[1:]}}, opts, nil, func(*Item, struct{}) error { return nil }); err != bad {
		t.Errorf("Wait's error: %v", err)
	}
	opts.Resolved = func([][]string) error { return bad }
	n := 0
	if _, err := Load(context.Background(), []Side{{Args: files}}, opts, nil, func(*Item, struct{}) error { n++; return nil }); err != bad || n != 0 {
		t.Errorf("Resolved's error: %v after %d adds", err, n)
	}
	// An argument that names nothing fails before anything is read.
	if _, err := Load(context.Background(), []Side{{Name: "--new", Args: []string{filepath.Join(dir, "*.none")}}}, Options{}, nil, func(*Item, struct{}) error { return nil }); !errors.Is(err, ErrNoMatch) {
		t.Errorf("a pattern matching nothing: %v", err)
	}
}
