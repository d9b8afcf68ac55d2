package diff

import (
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

func TestScriptFile(t *testing.T) {
	for file, want := range map[string]bool{
		"https://example.com/app.js":                   true,
		"resource://gre/modules/ConduitsChild.sys.mjs": true,
		"chrome://global/content/customElements.js":    true,
		"file:///tmp/ff/busy.html":                     true,
		"node:internal/fs/utils":                       true,
		"internal/timers.js":                           true, // Node 10's built-ins
		"/srv/app/server.mjs":                          true,
		`C:\app\server.ts`:                             true,
		"/usr/lib/python3.11/socket.py":                true,
		"<frozen posixpath>":                           true,
		"<string>":                                     true,
		"/usr/lib/ruby/3.1.0/net/protocol.rb":          true,
		"<internal:io>":                                true,
		"":                                             false, // a native frame, V8's (program), cProfile's built-ins in pstats' model
		"~":                                            false, // cProfile's built-in
		"<cfunc>":                                      false, // stackprof's C function
		"<unknown>":                                    false,
		"/usr/src/glibc/io/read.c":                     false,
		`C:\src\read.c`:                                false,
		"/usr/lib/go/src/syscall/syscall_linux.go":     false,
		"library/std/src/sys/pal/unix/fd.rs":           false,
		"FileInputStream.java":                         false,
	} {
		if got := scriptFile(file); got != want {
			t.Errorf("scriptFile(%q) = %v, want %v", file, got, want)
		}
	}
}

// A script's function named like a C library call is the program's own:
// a JavaScript read, _send or write is cpu, while libc's read in the
// same profile is a system call (a CPU profile), whatever sight of the
// location (the resolver's first, or its fast path after) and on the
// model's path and the streaming decoder's. The rules that name script
// functions keep theirs: Node's node:fs.readSync and cProfile's socket
// recv are io, and posix.read, which no rule names, cpu.
func TestScriptFramesNotNative(t *testing.T) {
	libc := &pprofile.Mapping{ID: 1, Start: 0x7f0000, Limit: 0x7f9000, File: "/lib/x86_64-linux-gnu/libc.so.6", HasFunctions: true}
	fn := func(id uint64, name, file string) *pprofile.Function {
		return &pprofile.Function{ID: id, Name: name, SystemName: name, Filename: file}
	}
	fns := []*pprofile.Function{
		fn(1, "read", "https://example.com/app.js"),
		fn(2, "main", "https://example.com/app.js"),
		fn(3, "read", ""),
		fn(4, "_send", "resource://gre/modules/ConduitsParent.sys.mjs"),
		fn(5, "write", "/srv/app/log.py"),
		fn(6, "node:fs.readSync", "node:fs"),
		fn(7, "<method 'recv' of '_socket.socket' objects>", "~"),
		fn(8, "<built-in method posix.read>", "~"),
	}
	loc := func(id uint64, m *pprofile.Mapping, fs ...*pprofile.Function) *pprofile.Location {
		l := &pprofile.Location{ID: id, Address: 0x7f0000 + id*0x100, Mapping: m}
		for _, f := range fs {
			l.Line = append(l.Line, pprofile.Line{Function: f, Line: 1})
		}
		return l
	}
	jsRead, root, libcRead := loc(1, nil, fns[0]), loc(2, nil, fns[1]), loc(3, libc, fns[2])
	inlined := loc(4, nil, fns[3], fns[4]) // two lines: the resolver's arena, not its one-frame entry
	readSync, recv, posixRead := loc(5, nil, fns[5]), loc(6, nil, fns[6]), loc(7, nil, fns[7])
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     1, Function: fns, Mapping: []*pprofile.Mapping{libc},
		Location: []*pprofile.Location{jsRead, root, libcRead, inlined, readSync, recv, posixRead},
	}
	for range 3 { // the first sight of each location and two after
		for _, s := range []struct {
			leaf *pprofile.Location
			v    int64
		}{{jsRead, 1}, {libcRead, 2}, {inlined, 4}, {readSync, 8}, {recv, 16}, {posixRead, 32}} {
			p.Sample = append(p.Sample, &pprofile.Sample{Location: []*pprofile.Location{s.leaf, root}, Value: []int64{s.v}})
		}
	}
	// libc's read under the JavaScript one: the native frame decides.
	p.Sample = append(p.Sample, &pprofile.Sample{Location: []*pprofile.Location{libcRead, jsRead, root}, Value: []int64{64}})
	const total = 3*(1+2+4+8+16+32) + 64
	want := map[rules.Bucket]float64{
		rules.CPU:     3 * (1 + 4 + 32) / float64(total),
		rules.Syscall: (3*2 + 64) / float64(total),
		rules.IO:      3 * (8 + 16) / float64(total),
	}
	r := rawFile(t, t.TempDir(), "script.pb.gz", p, profile.Options{})
	model, stream := bothPaths(t, Options{}, [2][]*profile.Raw{{r}, {r}})
	for path, a := range map[string]*Analyzer{"model": model, "stream": stream} {
		for _, b := range a.Diff().Buckets {
			if !near(b.Base, want[b.Bucket]) || !near(b.New, want[b.Bucket]) {
				t.Errorf("%s path, %v: shares %v / %v, want %v on each side", path, b.Bucket, b.Base, b.New, want[b.Bucket])
			}
		}
	}
}

// Firefox's profile of its own headless start (profile/firefox/testdata)
// has JavaScript functions of the browser's modules named like C library
// calls: _send and _recv (ConduitsChild.sys.mjs), send, read, _write,
// wait and _wait. They are script frames (resource:// URLs), so no rule
// of the native pack is theirs: the recording has no syscall time, and its
// io is what its own frames and categories say. The Firefox Profiler's
// processing of the recording reads the same.
func TestFirefoxScriptFunctions(t *testing.T) {
	libcNamed := map[string]bool{"send": true, "_send": true, "_recv": true, "read": true, "_write": true, "wait": true, "_wait": true}
	for _, path := range []string{"../profile/firefox/testdata/headless.json.gz", "../profile/firefox/testdata/processed/processed.json.gz"} {
		l := loadFile(t, path)
		a := NewAnalyzer(Options{})
		seen := map[string]bool{}
		a.OnSample(func(s *Sample) {
			for i, id := range s.Stack {
				if name := a.MethodName(id); libcNamed[name] {
					seen[name] = true
					if s.frames[i].Ruled() {
						t.Errorf("%s: the JavaScript function %s has a rule (the sample is %v)", path, name, s.Bucket)
					}
				}
			}
		})
		if err := a.Add(result.Base, l); err != nil {
			t.Fatal(err)
		}
		checkBuckets(t, a.Top(), map[rules.Bucket]float64{rules.CPU: 3013e6, rules.Wait: 1215e6, rules.GC: 31e6, rules.IO: 36e6})
		if len(seen) != len(libcNamed) {
			t.Errorf("%s: met %v of the functions %v", path, seen, libcNamed)
		}
	}
}
