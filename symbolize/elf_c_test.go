package symbolize

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// a2lFrame is one frame GNU addr2line -f -i printed.
type a2lFrame struct {
	name, file string
	line       int64
}

// addr2lineC runs GNU addr2line -a -f -i on the addresses and returns
// each address's frames, innermost first.
func addr2lineC(t *testing.T, bin string, addrs []uint64) map[uint64][]a2lFrame {
	t.Helper()
	var in strings.Builder
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	out := run(t, in.String(), tool(t, "addr2line"), "-a", "-f", "-i", "-e", bin)
	res := map[uint64][]a2lFrame{}
	var cur uint64
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "0x") {
			cur, _ = strconv.ParseUint(l[2:], 16, 64)
			continue
		}
		if !sc.Scan() {
			break
		}
		fl, _, _ := strings.Cut(sc.Text(), " (discriminator")
		i := strings.LastIndexByte(fl, ':')
		f := a2lFrame{name: l, file: fl[:i]}
		f.line, _ = strconv.ParseInt(fl[i+1:], 10, 64)
		res[cur] = append(res[cur], f)
	}
	return res
}

// textAddrs returns every byte address of the sized function symbols and
// the start of the sizeless ones.
func textAddrs(syms []nmSym) []uint64 {
	var addrs []uint64
	for _, s := range syms {
		addrs = append(addrs, s.addr)
		for a := s.addr + 1; a < s.addr+s.size; a++ {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// TestObjectCDWARF compares the frames of every byte of every function of
// hot.c (gcc -O2 -g: PIE and not, DWARF 4 and 5, with sections collected
// by the linker) with GNU addr2line -f -i: names, files and lines, inlined
// frames included.
func TestObjectCDWARF(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, v := range []struct {
		name  string
		flags []string
	}{
		{"pie", []string{"-pie"}},
		{"nopie", []string{"-no-pie"}},
		{"dwarf4", []string{"-gdwarf-4"}},
		// discarded sections leave ranges at address 0 in the units
		{"gc-sections", []string{"-ffunction-sections", "-Wl,--gc-sections"}},
	} {
		t.Run(v.name, func(t *testing.T) {
			bin := buildC(t, dir, "hot-"+v.name, "hot.c", append([]string{"-O2", "-g"}, v.flags...)...)
			syms := nmFuncs(run(t, "", tool(t, "nm"), "-n", "-S", "--defined-only", bin), 16)
			addrs := textAddrs(syms)
			want := addr2lineC(t, bin, addrs)
			o := openT(t, bin)
			inlined, bad := 0, 0
			for _, a := range addrs {
				got, w := o.Frames(nil, a), want[a]
				if len(w) > 1 {
					inlined++
				}
				if msg := diffA2L(got, w); msg != "" {
					bad++
					if bad <= 5 {
						t.Errorf("%#x: %s", a, msg)
					}
				}
			}
			t.Logf("%d addresses, %d with inlined frames, %d differ", len(addrs), inlined, bad)
			if fr := o.Frames(nil, 0x10); fr != nil {
				t.Errorf("address 0x10, in the ELF header, is named %v", fr)
			}
			if inlined == 0 {
				t.Errorf("no address has an inlined frame: scale was not inlined")
			}
		})
	}
}

// diffA2L says how frames differ from addr2line's; where addr2line has no
// line (??:?, or crtstuff.c:0 from a file symbol), only the name is
// compared.
func diffA2L(got []SymFrame, want []a2lFrame) string {
	if len(want) == 1 && (want[0].file == "??" || want[0].line == 0) {
		if len(got) != 1 || got[0].Name != want[0].name {
			return fmt.Sprintf("got %v, addr2line %v", got, want)
		}
		return ""
	}
	if len(got) != len(want) {
		return fmt.Sprintf("got %v, addr2line %v", got, want)
	}
	for i, w := range want {
		if g := got[i]; g.Name != w.name || g.File != w.file || g.Line != w.line {
			return fmt.Sprintf("frame %d: got %v, addr2line %v", i, got, want)
		}
	}
	return ""
}

// TestObjectCSymtab strips the debug information: every byte of every
// function, sized or not (crt's frame_dummy), is named as nm names the
// symbol holding it, without a line; a sizeless one (_init) ends at the
// next symbol or the end of its section. Fully stripped, the file has no
// function symbol left and OpenObject says so.
func TestObjectCSymtab(t *testing.T) {
	dir := t.TempDir()
	bin := buildC(t, dir, "hot", "hot.c", "-O2", "-g")
	syms := nmFuncs(run(t, "", tool(t, "nm"), "-n", "-S", "--defined-only", bin), 16)
	nodebug := filepath.Join(dir, "hot-nodebug")
	run(t, "", tool(t, "strip"), "--strip-debug", "-o", nodebug, bin)
	o := openT(t, nodebug)
	ef, err := elf.Open(nodebug)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	for i, s := range syms {
		end := s.addr + s.size
		if s.size == 0 && i+1 < len(syms) {
			end = syms[i+1].addr
			for _, sec := range ef.Sections {
				if s.addr >= sec.Addr && s.addr < sec.Addr+sec.Size {
					end = min(end, sec.Addr+sec.Size)
				}
			}
		}
		for a := s.addr; a < end; a++ {
			fr := o.Frames(nil, a)
			if len(fr) != 1 || fr[0].Name != s.name || fr[0].File != "" {
				t.Fatalf("%#x: got %v, nm says %s", a, fr, s.name)
			}
		}
	}
	if o.BuildID() == "" {
		t.Errorf("no GNU build ID")
	}
	stripped := filepath.Join(dir, "hot-stripped")
	run(t, "", tool(t, "strip"), "-s", "-o", stripped, bin)
	_, err = OpenObject(stripped)
	if !errors.Is(err, ErrNoSymbols) || !strings.Contains(err.Error(), stripped) {
		t.Errorf("stripped: got %v, want ErrNoSymbols naming the file", err)
	}
	gnu, _, err := ReadBuildID(stripped)
	if err != nil || gnu != o.BuildID() {
		t.Errorf("ReadBuildID(stripped) = %q, %v; want %q (strip keeps the note)", gnu, err, o.BuildID())
	}
}

// TestObjectPerfOffsets checks the file-offset translation against perf:
// perf script prints callchain addresses of a DSO as file offsets, with
// the symbol perf found there. Frames(&Mapping{}, off) must name the same
// function (the outermost frame: perf does not expand inlining; see
// sameFunc for the names of shared libraries). The
// build is non-PIE, whose text is linked at 0x401000 rather than at its
// file offset, so the offset read as a vaddr must name nothing (a gcc PIE
// links its text at its file offset; a recording costs half a second, so
// it is not recorded too). libc, under main on every stack, is
// checked the same way through its distribution debug file
// (/usr/lib/debug/.build-id/), as perf reads it, when one is installed.
func TestObjectPerfOffsets(t *testing.T) {
	t.Parallel()
	perf := tool(t, "perf")
	dir := t.TempDir()
	bin := buildC(t, dir, "hot-nopie", "hot.c", "-O2", "-g", "-fno-omit-frame-pointer", "-no-pie")
	data := filepath.Join(dir, "perf.data")
	if out, err := perfRecord(perf, "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", data, bin, "400000"); err != nil {
		t.Skipf("perf record cannot record here: %v: %s", err, out)
	}
	objs := map[string]Object{bin: openT(t, bin)}
	aliases := map[string]map[string]uint64{} // per library: symbol name → address
	n := map[string]int{}
	for _, l := range strings.Split(run(t, "", perf, "script", "-i", data, "-F", "ip,sym,dso"), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || !strings.HasPrefix(f[2], "(/") || f[1] == "[unknown]" || strings.HasSuffix(f[1], "@plt") {
			continue // perf synthesizes PLT names from relocations; Frames does not
		}
		dso := strings.Trim(f[2], "()")
		o, ok := objs[dso]
		if !ok && !strings.HasPrefix(filepath.Base(dso), "libc.so") {
			continue // ld.so's samples fall anywhere in its startup work
		}
		if !ok {
			o = distroDebugFile(t, dso)
			objs[dso] = o
			if o != nil {
				aliases[dso] = symbolAddrs(t, o.Path())
			}
		}
		off, err := strconv.ParseUint(f[0], 16, 64)
		if o == nil || err != nil {
			continue
		}
		n[dso]++
		fr := o.Frames(&pprofile.Mapping{}, off)
		if len(fr) == 0 || !sameFunc(fr[len(fr)-1].Name, f[1], aliases[dso]) {
			t.Fatalf("%s offset %#x: got %v, perf says %s", dso, off, fr, f[1])
		}
		if dso == bin && o.Frames(nil, off) != nil {
			t.Fatalf("offset %#x read as a vaddr names something in the non-PIE build", off)
		}
	}
	t.Logf("addresses checked per file: %v", n)
	if n[bin] < 10 {
		t.Fatalf("perf script gave %d addresses of %s", n[bin], bin)
	}
}

// cloneSuffix is what gcc appends to the symbol of a function's clone
// (get_common_cache_info.constprop.0).
var cloneSuffix = regexp.MustCompile(`(\.(constprop|isra|part|cold|lto_priv)(\.[0-9]+)?)+$`)

// sameFunc says whether Frames' name is perf's, but for a clone suffix or
// for being another symbol at the same address (mmap64 and __mmap64):
// perf names a symbol, DWARF the function.
func sameFunc(got, perf string, addrs map[string]uint64) bool {
	if got == perf || got == cloneSuffix.ReplaceAllString(perf, "") {
		return true
	}
	a, ok := addrs[got]
	return ok && a == addrs[perf]
}

// symbolAddrs returns the addresses of the symbols of an ELF file, by
// name.
func symbolAddrs(t *testing.T, path string) map[string]uint64 {
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, _ := ef.Symbols()
	m := map[string]uint64{}
	for _, s := range syms {
		m[s.Name] = s.Value
	}
	return m
}

// distroDebugFile opens the installed debug file of a shared library,
// found by its GNU build ID; nil when there is none.
func distroDebugFile(t *testing.T, lib string) Object {
	gnu, _, err := ReadBuildID(lib)
	if err != nil || len(gnu) < 3 {
		return nil
	}
	o, err := OpenObject(filepath.Join("/usr/lib/debug/.build-id", gnu[:2], gnu[2:]+".debug"))
	if err != nil {
		return nil
	}
	t.Cleanup(func() { o.Close() })
	if o.BuildID() != gnu {
		t.Errorf("%s: build ID %s, its library's %s", o.Path(), o.BuildID(), gnu)
	}
	return o
}

// TestObjectCDebugFile: a separate debug file (objcopy --only-keep-debug),
// whose sections hold no code and whose segments lost their file offsets,
// names the file offsets of the stripped non-PIE binary as the
// unstripped one does, and carries its build ID.
func TestObjectCDebugFile(t *testing.T) {
	dir := t.TempDir()
	bin := buildC(t, dir, "hot", "hot.c", "-O2", "-g", "-no-pie")
	debug := filepath.Join(dir, "hot.debug")
	run(t, "", tool(t, "objcopy"), "--only-keep-debug", bin, debug)
	stripped := filepath.Join(dir, "hot-stripped")
	run(t, "", tool(t, "strip"), "-s", "-o", stripped, bin)
	o, d := openT(t, bin), openT(t, debug)
	if gnu, _, err := ReadBuildID(stripped); err != nil || gnu != d.BuildID() || gnu == "" {
		t.Errorf("debug file's build ID %q, the stripped binary's %q (%v)", d.BuildID(), gnu, err)
	}
	syms := nmFuncs(run(t, "", tool(t, "nm"), "-n", "-S", "--defined-only", bin), 16)
	for _, a := range textAddrs(syms) {
		if got, want := d.Frames(&pprofile.Mapping{}, a), o.Frames(&pprofile.Mapping{}, a); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%#x: debug file %v, binary %v", a, got, want)
		}
	}
}

// TestObjectCSharedLib: a shared library stripped of .symtab
// (strip --strip-unneeded) keeps its exported functions in .dynsym, which
// name them as nm -D does.
func TestObjectCSharedLib(t *testing.T) {
	dir := t.TempDir()
	lib := buildC(t, dir, "libhot.so", "hot.c", "-O2", "-shared", "-fPIC")
	run(t, "", tool(t, "strip"), "--strip-unneeded", lib)
	syms := nmFuncs(run(t, "", tool(t, "nm"), "-D", "-n", "-S", "--defined-only", lib), 16)
	o := openT(t, lib)
	n := 0
	for _, s := range syms {
		for a := s.addr; a < s.addr+s.size; a++ {
			n++
			if fr := o.Frames(&pprofile.Mapping{}, a); len(fr) != 1 || fr[0].Name != s.name {
				t.Fatalf("offset %#x: got %v, nm -D says %s", a, fr, s.name)
			}
		}
	}
	if n == 0 {
		t.Fatalf("nm -D lists no sized function in %s", lib)
	}
}

// TestObjectConcurrent: goroutines sharing an Object, whose DWARF each
// lookup may be the first to read, get the answers of a lone caller.
func TestObjectConcurrent(t *testing.T) {
	dir := t.TempDir()
	bin := buildC(t, dir, "hot", "hot.c", "-O2", "-g")
	addrs := textAddrs(nmFuncs(run(t, "", tool(t, "nm"), "-n", "-S", "--defined-only", bin), 16))
	want := make([]string, len(addrs))
	alone := openT(t, bin)
	for i, a := range addrs {
		want[i] = fmt.Sprint(alone.Frames(nil, a))
	}
	o := openT(t, bin)
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range addrs {
				j := (i + g*len(addrs)/4) % len(addrs)
				if got := fmt.Sprint(o.Frames(nil, addrs[j])); got != want[j] {
					errs <- fmt.Errorf("%#x: got %s, alone %s", addrs[j], got, want[j])
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
