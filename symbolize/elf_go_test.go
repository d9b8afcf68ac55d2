package symbolize

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// buildGoprogs returns the builds of testdata/elf/goprog that
// TestObjectGo checks (goprogVariants) by variant name (goprogBuilds).
func buildGoprogs(t *testing.T) map[string]string {
	t.Helper()
	variants := map[string][]string{}
	for _, v := range goprogVariants {
		variants[v.name] = v.flags
	}
	return goprogBuilds(t, variants)
}

// goprogBuilds returns builds of testdata/elf/goprog by name, one for each
// set of go build flags in variants. Each set is built once per test
// binary, into testDir, the missing ones all at once (each go build waits
// on its linker, gcc for the external ones); the binaries are shared:
// tests must not change them or write beside them.
func goprogBuilds(t testing.TB, variants map[string][]string) map[string]string {
	t.Helper()
	goBin := tool(t, "go")
	builds := map[string]*goprogBuild{}
	goprogBuilt.Lock()
	if goprogBuilt.m == nil {
		goprogBuilt.m = map[string]*goprogBuild{}
	}
	for name, flags := range variants {
		key := strings.Join(flags, "\x00")
		if goprogBuilt.m[key] == nil {
			goprogBuilt.m[key] = &goprogBuild{flags: flags}
		}
		builds[name] = goprogBuilt.m[key]
	}
	goprogBuilt.Unlock()
	var wg sync.WaitGroup
	for _, b := range builds {
		wg.Go(func() { b.once.Do(func() { b.build(goBin) }) })
	}
	wg.Wait()
	bins := map[string]string{}
	var errs []error
	for name, b := range builds {
		bins[name] = b.bin
		errs = append(errs, b.err)
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return bins
}

// goprogBuilt holds goprogBuilds' builds by their flags, joined with NUL.
var goprogBuilt struct {
	sync.Mutex
	m map[string]*goprogBuild
}

// goprogBuild is one build of goprog, and its CPU profile (goprogProfile)
// once made.
type goprogBuild struct {
	flags    []string
	once     sync.Once
	bin      string
	err      error
	profOnce sync.Once
	prof     []byte
	profErr  string
}

func (b *goprogBuild) build(goBin string) {
	dir, err := os.MkdirTemp(testDir, "goprog")
	if err != nil {
		b.err = err
		return
	}
	bin := filepath.Join(dir, "goprog")
	args := append(append([]string{"build"}, b.flags...), "-o", bin, "./testdata/elf/goprog")
	if out, err := exec.Command(goBin, args...).CombinedOutput(); err != nil {
		b.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		return
	}
	b.bin = bin
}

// goTools holds the executables of the go tools (nm, addr2line,
// buildid) by name: `go tool NAME` builds each into the build cache and
// runs it, and the tests run them directly, saving the go command's start
// on each of their many runs.
var goTools struct {
	sync.Mutex
	m map[string]string
}

// goTool runs `go tool NAME args...` with stdin and returns its stdout.
func goTool(t *testing.T, stdin, name string, args ...string) string {
	t.Helper()
	goTools.Lock()
	exe, ok := goTools.m[name]
	goTools.Unlock()
	if !ok {
		goBin := tool(t, "go")
		if out, err := exec.Command(goBin, "tool", "-n", name).Output(); err == nil && fileExists(strings.TrimSpace(string(out))) {
			exe = strings.TrimSpace(string(out))
		}
		goTools.Lock()
		if goTools.m == nil {
			goTools.m = map[string]string{}
		}
		goTools.m[name] = exe
		goTools.Unlock()
	}
	if exe == "" { // no path to run it from: through the go command
		return run(t, stdin, tool(t, "go"), append([]string{"tool", name}, args...)...)
	}
	return run(t, stdin, exe, args...)
}

// goprogProfile runs bin, which writes a runtime/pprof CPU profile, and
// returns the profile.
func goprogProfile(t *testing.T, bin string) *pprofile.Profile {
	t.Helper()
	var b *goprogBuild
	goprogBuilt.Lock()
	for _, g := range goprogBuilt.m {
		if g.bin == bin {
			b = g
		}
	}
	goprogBuilt.Unlock()
	if b == nil {
		t.Fatalf("%s is no build of goprogBuilds", bin)
	}
	b.profOnce.Do(func() {
		path := bin + ".pb.gz"
		if out, err := exec.Command(bin, path, "1000").CombinedOutput(); err != nil { // rounds of work: about 0.35 s of CPU
			b.profErr = fmt.Sprintf("%s: %v: %s", bin, err, out)
			return
		}
		var err error
		if b.prof, err = os.ReadFile(path); err != nil {
			b.profErr = err.Error()
		}
	})
	if b.profErr != "" {
		t.Fatal(b.profErr)
	}
	p, err := pprofile.ParseData(b.prof)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// goAddr2line runs go tool addr2line on the addresses and returns, for
// each, the function and "file:line" it printed.
func goAddr2line(t *testing.T, bin string, addrs []uint64) [][2]string {
	t.Helper()
	var in strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	out := goTool(t, in.String(), "addr2line", bin)
	var res [][2]string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		name := sc.Text()
		sc.Scan()
		res = append(res, [2]string{name, sc.Text()})
	}
	if len(res) != len(addrs) {
		t.Fatalf("go tool addr2line answered %d of %d addresses", len(res), len(addrs))
	}
	return res
}

// goprogVariants are the builds of goprog that TestObjectGo checks. twin
// names an earlier build with the same layout (the same link without
// symbols), whose CPU profile the variant is checked against unless
// longTests: a run of goprog costs half a second of CPU.
var goprogVariants = []struct {
	name          string
	flags         []string
	dwarf, symtab bool
	twin          string
}{
	{"default", nil, true, true, ""},
	{"stripped", []string{"-ldflags=-s"}, false, false, "default"},
	{"pie", []string{"-buildmode=pie"}, true, true, ""},
	// gcc links, and puts C code before runtime.text, where the pclntab's
	// offsets start; -w drops DWARF, so the pclntab answers
	{"external", []string{"-ldflags=-linkmode=external -w"}, false, true, ""},
	// the same stripped: runtime.text comes from the module data; go tool
	// addr2line, which takes .text, is wrong here, so only the profile
	// checks it
	{"external-stripped", []string{"-ldflags=-linkmode=external -s"}, false, false, "external"},
}

// TestObjectGo builds goprog normally, with -ldflags=-s (no .symtab, no
// DWARF: the pclntab alone), as PIE and linked by gcc without DWARF, and checks each build against its
// own CPU profile (goprogProfileCheck; a stripped build against its
// twin's, unless longTests) and go tool addr2line
// (goprogAddr2lineCheck); the PIE build's separate debug file (objcopy
// --only-keep-debug) must name the PIE's profile as well.
func TestObjectGo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bins := buildGoprogs(t)
	var layout string // the default build, whose symbols the stripped one shares
	built := map[string]Object{}
	profiles := map[string]*pprofile.Profile{}
	for _, v := range goprogVariants {
		t.Run(v.name, func(t *testing.T) {
			bin := bins[v.name]
			o := openT(t, bin)
			nmBin := bin
			if v.name == "default" {
				layout = bin
			} else if !v.symtab {
				nmBin = layout
			}
			if strings.HasPrefix(v.name, "external") && o.(*elfObject).gopcln.text == o.(*elfObject).ef.Section(".text").Addr {
				t.Errorf("runtime.text taken at the start of .text: wrong, or nothing is tested")
			}
			gnu, goID, err := ReadBuildID(bin)
			if want := strings.TrimSpace(goTool(t, "", "buildid", bin)); err != nil || goID != want || gnu != o.BuildID() {
				t.Errorf("ReadBuildID = %q, %q, %v; want the GNU ID %q and go tool buildid's %q", gnu, goID, err, o.BuildID(), want)
			}
			var p *pprofile.Profile
			if v.twin != "" && !longTests() {
				if profiles[v.twin] == nil {
					t.Fatalf("no profile of %s, the same layout", v.twin)
				}
				goprogProfileCheck(t, o, profiles[v.twin], bins[v.twin], false)
			} else {
				p = goprogProfile(t, bin)
				goprogProfileCheck(t, o, p, bin, true)
			}
			profiles[v.name] = p
			built[v.name] = o
			if v.name == "external-stripped" {
				sameFrames(t, o, built["external"])
			} else {
				goprogAddr2lineCheck(t, o, nmBin, v.dwarf)
			}
			if v.name == "pie" {
				debug := filepath.Join(dir, "pie.debug")
				run(t, "", tool(t, "objcopy"), "--only-keep-debug", bin, debug)
				goprogProfileCheck(t, openT(t, debug), p, bin, true)
			}
		})
	}
}

// sameFrames checks that o names the start and middle of every Go
// function as ref does, ref being the same link with a symbol table (go
// tool nm lists its functions; those ref names without a file are C's,
// which o, stripped, cannot name).
func sameFrames(t *testing.T, o, ref Object) {
	if ref == nil {
		t.Fatal("no reference build")
	}
	n := 0
	for _, s := range nmFuncs(goTool(t, "", "nm", "-size", "-sort", "address", ref.Path()), 10) {
		for _, a := range []uint64{s.addr, s.addr + s.size/2} {
			fr := ref.Frames(nil, a)
			if len(fr) == 0 || fr[0].File == "" {
				continue
			}
			n++
			if got, want := fmt.Sprint(o.Frames(nil, a)), fmt.Sprint(fr); got != want {
				t.Fatalf("%#x: got %s, with a symbol table %s", a, got, want)
			}
		}
	}
	t.Logf("%d addresses named as with a symbol table", n)
}

// goprogProfileCheck symbolizes with o the locations of bin's CPU profile
// p from their addresses and mappings and compares them with what the
// runtime wrote: the whole inline chain (names and lines) for at least
// 99% of the sampled value, from DWARF or, without it (-ldflags=-s), from
// the pclntab's inline tree.
// sameBuild says that o is bin or its debug file, whose build ID the
// profile's mapping must carry; otherwise o is a twin of bin, another
// link with the same layout.
func goprogProfileCheck(t *testing.T, o Object, p *pprofile.Profile, bin string, sameBuild bool) {
	value := locationValues(p)
	var total, same, inlined int64
	for _, loc := range p.Location {
		if loc.Mapping == nil || loc.Mapping.File != bin || len(loc.Line) == 0 {
			continue
		}
		if sameBuild && loc.Mapping.BuildID != o.BuildID() {
			t.Fatalf("build ID %q, the profile says %q", o.BuildID(), loc.Mapping.BuildID)
		}
		total += value[loc.ID]
		if len(loc.Line) > 1 {
			inlined += value[loc.ID]
		}
		got, want := o.Frames(loc.Mapping, loc.Address), runtimeFrames(loc)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			same += value[loc.ID]
		} else {
			t.Logf("%#x: got %v, runtime %v", loc.Address, got, want)
		}
	}
	t.Logf("%d of %d sampled value the same, %d in inlined locations", same, total, inlined)
	if total == 0 || float64(same) < 0.99*float64(total) {
		t.Errorf("%d of %d sampled value symbolized as the runtime did", same, total)
	}
	if inlined == 0 {
		t.Errorf("no sampled location has an inlined frame")
	}
}

// runtimeFrames is what Frames should give for a runtime-symbolized
// location: its lines, innermost first.
func runtimeFrames(loc *pprofile.Location) []SymFrame {
	var fr []SymFrame
	for _, l := range loc.Line {
		fr = append(fr, SymFrame{Name: l.Function.Name, SystemName: l.Function.SystemName,
			File: l.Function.Filename, Line: l.Line})
	}
	return fr
}

// locationValues sums the first sample value at each location.
func locationValues(p *pprofile.Profile) map[uint64]int64 {
	v := map[uint64]int64{}
	for _, s := range p.Sample {
		seen := map[uint64]bool{}
		for _, l := range s.Location {
			if !seen[l.ID] {
				seen[l.ID] = true
				v[l.ID] += s.Value[0]
			}
		}
	}
	return v
}

// goprogAddr2lineCheck names the start and the middle of every function
// go tool nm lists, and compares with go tool addr2line, which reads the
// pclntab: the physical function is the outermost frame and its
// file:line the innermost frame's. From the pclntab alone (-ldflags=-s)
// every answer must be the same; with DWARF at least 99%. Addresses
// go tool addr2line cannot name (C code, which .symtab names) are left
// out.
// The addresses are those of nmBin's symbols (the stripped build has
// none: it is given the default build, whose layout it shares).
func goprogAddr2lineCheck(t *testing.T, o Object, nmBin string, dwarf bool) {
	bin := o.Path()
	var addrs []uint64
	for _, s := range nmFuncs(goTool(t, "", "nm", "-size", "-sort", "address", nmBin), 10) {
		addrs = append(addrs, s.addr, s.addr+s.size/2)
	}
	want := goAddr2line(t, bin, addrs)
	bad, unknown := 0, 0
	for i, a := range addrs {
		fr := o.Frames(nil, a)
		if want[i][0] == "?" { // C code (crt, cgo), or a marker (runtime.etext)
			unknown++
			continue
		}
		got := [2]string{"?", "?:0"}
		if len(fr) > 0 {
			got = [2]string{fr[len(fr)-1].SystemName, fr[0].File + ":" + strconv.FormatInt(fr[0].Line, 10)}
		}
		if got != want[i] {
			bad++
			if bad <= 5 {
				t.Logf("%#x: got %v, go tool addr2line %v", a, got, want[i])
			}
		}
	}
	t.Logf("%d addresses, %d unknown to the pclntab, %d differ", len(addrs), unknown, bad)
	if (!dwarf && bad > 0) || float64(bad) > 0.01*float64(len(addrs)) {
		t.Errorf("%d of %d addresses differ from go tool addr2line", bad, len(addrs))
	}
}
