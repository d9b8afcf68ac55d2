package symbolize

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// withoutInline opens bin and turns off its pclntab's inline tree: how a
// stripped Go binary was symbolized before the tree was read.
func withoutInline(t *testing.T, bin string) Object {
	t.Helper()
	o := openT(t, bin).(*elfObject)
	if o.gopcln == nil {
		t.Fatalf("%s: no pclntab", bin)
	}
	o.gopcln.build()
	if o.gopcln.inl == nil {
		t.Fatalf("%s: inline tree not read: %v", bin, o.gopcln.err)
	}
	o.gopcln.inl = nil
	return o
}

// stackOverlap symbolizes the stack of each sample of p, every location
// of bin's mapping from its address alone, with ref and with o, and
// returns the share of the sampled value (first sample type) whose stacks
// come out identical, and the share of it that ref gives inlined frames.
func stackOverlap(p *pprofile.Profile, bin string, ref, o Object) (same, inlined float64) {
	var total, eq, inl int64
	for _, s := range p.Sample {
		var a, b strings.Builder
		deep := false
		for _, loc := range s.Location {
			if loc.Mapping == nil || loc.Mapping.File != bin {
				continue
			}
			fr := ref.Frames(loc.Mapping, loc.Address)
			deep = deep || len(fr) > 1
			fmt.Fprintln(&a, fr)
			fmt.Fprintln(&b, o.Frames(loc.Mapping, loc.Address))
		}
		total += s.Value[0]
		if a.String() == b.String() {
			eq += s.Value[0]
		}
		if deep {
			inl += s.Value[0]
		}
	}
	if total == 0 {
		return 0, 0
	}
	return float64(eq) / float64(total), float64(inl) / float64(total)
}

// TestGoInlineStripped builds goprog with DWARF, with -ldflags=-s and with
// -ldflags='-s -w', records the DWARF build's CPU profile, and symbolizes
// every sample's stack from its addresses alone with each build: the
// stripped builds, which have only the pclntab, must give the frames
// DWARF gives, inlined calls included, for at least 99% of the sampled
// value; without the inline tree (as before it was read) they must not.
// A stripped PIE, linked by Go or, where gcc is here, externally, must
// name its addresses as the PIE with DWARF does (the external link only
// with PROFDIFF_TEST_LONG set): runtime.text and the
// inline trees are found through the module data's relocations. (In the
// external one, the C code that DWARF names is left unnamed: under 0.5%
// of the addresses.)
func TestGoInlineStripped(t *testing.T) {
	t.Parallel()
	variants := map[string][]string{
		"dwarf":   nil,
		"s":       {"-ldflags=-s"},
		"s-w":     {"-ldflags=-s -w"},
		"pie":     {"-buildmode=pie"},
		"pie-s-w": {"-buildmode=pie", "-ldflags=-s -w"},
	}
	pies := [][2]string{{"pie", "pie-s-w"}}
	if _, err := exec.LookPath("gcc"); err == nil && longTests() { // gcc's links cost seconds
		variants["xpie"] = []string{"-buildmode=pie", "-ldflags=-linkmode=external"}
		variants["xpie-s"] = []string{"-buildmode=pie", "-ldflags=-linkmode=external -s"}
		pies = append(pies, [2]string{"xpie", "xpie-s"})
	}
	bins := goprogBuilds(t, variants)
	p := goprogProfile(t, bins["dwarf"])
	ref := openT(t, bins["dwarf"])
	for _, v := range []string{"s", "s-w"} {
		o := openT(t, bins[v])
		if o.(*elfObject).hasDW {
			t.Fatalf("%s has DWARF", v)
		}
		after, inlined := stackOverlap(p, bins["dwarf"], ref, o)
		before, _ := stackOverlap(p, bins["dwarf"], ref, withoutInline(t, bins[v]))
		t.Logf("%s: overlap with DWARF %.4f (without the inline tree %.4f); %.4f of the value has inlined frames", strings.Join(variants[v], " "), after, before, inlined)
		if err := o.(*elfObject).Err(); err != nil {
			t.Errorf("%s: %v", v, err)
		}
		if after < 0.99 {
			t.Errorf("%s: overlap %.4f with the DWARF build's symbolization, want at least 0.99", v, after)
		}
		if inlined == 0 || before >= after {
			t.Errorf("%s: nothing tested: %.4f of the value inlined, overlap %.4f without the inline tree", v, inlined, before)
		}
	}
	for _, pie := range pies {
		same, inlined, total := sweepSame(t, openT(t, bins[pie[0]]), openT(t, bins[pie[1]]), "", 7)
		t.Logf("%s: %d of %d addresses named as with DWARF, %d with inlined frames", pie[1], same, total, inlined)
		if inlined == 0 || float64(same) < 0.99*float64(total) {
			t.Errorf("%s: %d of %d addresses named as with DWARF", pie[1], same, total)
		}
	}
}

// sweepSame names every step-th address of the Go functions ref's symbol
// table lists whose names start with prefix, and every address of package
// main's, with ref and with o,
// and counts those named the same, and those ref gives inlined frames.
// Functions without a file (C, assembly stubs without line tables) are
// left out.
func sweepSame(t *testing.T, ref, o Object, prefix string, step uint64) (same, inlined, total int) {
	t.Helper()
	bad := 0
	for _, s := range ref.(*elfObject).syms.syms {
		if !strings.HasPrefix(s.name, prefix) {
			continue
		}
		st := step
		if strings.HasPrefix(s.name, "main.") {
			st = 1
		}
		for a := s.addr; a < s.end; a += st {
			want := ref.Frames(nil, a)
			if len(want) == 0 || want[0].File == "" {
				continue
			}
			total++
			if len(want) > 1 {
				inlined++
			}
			got := o.Frames(nil, a)
			if fmt.Sprint(got) == fmt.Sprint(want) {
				same++
			} else if bad++; bad <= 5 {
				t.Logf("%#x: got %v, with DWARF %v", a, got, want)
			}
		}
	}
	return same, inlined, total
}

// TestGoInlineToolchains builds testdata/elf/goinl with each go command
// that PROFDIFF_GO_TOOLCHAINS lists (space-separated paths; the script
// testdata/go-toolchains.sh fetches Go 1.15, 1.16, 1.18 and 1.20 from
// the module proxy and runs this test), with DWARF and with -ldflags=-s,
// and checks that the stripped build names every address of package
// main's functions as the DWARF build does, inlined calls included, for
// at least 99% of them. The other functions are compared and logged, not
// checked: Go 1.15's DWARF lacks some of the runtime's inlined calls,
// which the pclntab has. Skipped when the variable is unset: each
// toolchain is a 100 MB download.
func TestGoInlineToolchains(t *testing.T) {
	gos := strings.Fields(os.Getenv("PROFDIFF_GO_TOOLCHAINS"))
	if len(gos) == 0 {
		t.Skip("PROFDIFF_GO_TOOLCHAINS lists no go commands (testdata/go-toolchains.sh sets it)")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "elf", "goinl", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, goBin := range gos {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(goBin))), func(t *testing.T) {
			dir := t.TempDir()
			// outside any module, with none of this machine's go env
			// settings, which an old go command may not know
			env := append(os.Environ(), "GO111MODULE=off", "GOENV=off", "GOFLAGS=", "GOTOOLCHAIN=local")
			version := exec.Command(goBin, "version")
			version.Env = env
			out, err := version.Output()
			if err != nil {
				t.Fatalf("%s version: %v", goBin, err)
			}
			bins := map[string]string{}
			for name, flags := range map[string]string{"dwarf": "-ldflags=-compressdwarf=false", "s": "-ldflags=-s"} {
				bins[name] = filepath.Join(dir, name)
				cmd := exec.Command(goBin, "build", flags, "-o", bins[name], src)
				cmd.Dir, cmd.Env = dir, env
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s build %s: %v\n%s", goBin, flags, err, out)
				}
			}
			o, ref := openT(t, bins["s"]), openT(t, bins["dwarf"])
			same, inlined, total := sweepSame(t, ref, o, "", 5)
			t.Logf("all functions: %d of %d addresses named as with DWARF, %d with inlined frames; %v", same, total, inlined, o.(*elfObject).Err())
			same, inlined, total = sweepSame(t, ref, o, "main.", 1)
			t.Logf("package main: %d of %d addresses named as with DWARF, %d with inlined frames", same, total, inlined)
			if v := strings.Fields(string(out)); len(v) > 2 && goMinor(v[2]) < 16 {
				// the DWARF of Go 1.13 to 1.15 lacks inlined calls the
				// pclntab has (add in mix in spin): compare the physical
				// functions, and ask for inlined frames
				checkPhysical(t, ref, o)
				return
			}
			if inlined == 0 || float64(same) < 0.99*float64(total) {
				t.Errorf("%d of %d addresses named as with DWARF, %d of them with inlined frames", same, total, inlined)
			}
		})
	}
}

// checkPhysical checks that o names the physical function of every
// address in package main as ref does, and names some inlined calls.
func checkPhysical(t *testing.T, ref, o Object) {
	t.Helper()
	same, inlined, total := 0, 0, 0
	for _, s := range ref.(*elfObject).syms.syms {
		if !strings.HasPrefix(s.name, "main.") {
			continue
		}
		for a := s.addr; a < s.end; a++ {
			want, got := ref.Frames(nil, a), o.Frames(nil, a)
			if len(want) == 0 || len(got) == 0 {
				continue
			}
			total++
			if len(got) > 1 {
				inlined++
			}
			if got[len(got)-1].Name == want[len(want)-1].Name {
				same++
			}
		}
	}
	t.Logf("package main: %d of %d physical functions as with DWARF, %d addresses with inlined frames", same, total, inlined)
	if inlined == 0 || same != total {
		t.Errorf("package main: %d of %d physical functions as with DWARF, %d addresses with inlined frames", same, total, inlined)
	}
}

// TestGoInlineTruncated builds goprog with -ldflags=-s and shortens its
// .gopclntab (the section header's size, so that the file stays whole)
// to cuts through its header, its function and pc-value tables and its
// inline trees, which Go 1.26 puts at its end: no lookup panics; a cut
// the line tables survive names every function as the whole table does,
// without the inline frames it lost, and Err says the tree is malformed.
func TestGoInlineTruncated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := goprogBuilds(t, map[string][]string{"s": {"-ldflags=-s"}})["s"]
	whole := openT(t, bin).(*elfObject)
	whole.gopcln.build()
	if whole.gopcln.inl == nil || whole.ef.Class != elf.ELFCLASS64 {
		t.Skipf("no inline tree to cut (%v), or not ELF64", whole.gopcln.err)
	}
	sect := whole.gopcln.sect
	trees := whole.gopcln.inl.gofunc - sect.Addr
	if trees >= sect.Size {
		t.Fatalf("go:func.* at %#x is not in .gopclntab [%#x, %#x)", whole.gopcln.inl.gofunc, sect.Addr, sect.Addr+sect.Size)
	}
	// addresses: the start of every function and each address of those
	// with inlined calls
	var addrs []uint64
	g := whole.gopcln.inl
	for i := range g.nfunc {
		pc, _ := g.entry(i)
		end, _ := g.entry(i + 1)
		addrs = append(addrs, pc)
		if fr := whole.Frames(nil, pc+1); len(fr) > 1 || strings.HasPrefix(fmt.Sprint(fr), "[{main.") {
			for a := pc + 1; a < end; a++ {
				addrs = append(addrs, a)
			}
		}
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	idx := slices.Index(whole.ef.Sections, sect)
	shoff := binary.LittleEndian.Uint64(b[0x28:])
	shentsize := uint64(binary.LittleEndian.Uint16(b[0x3a:]))
	sizeAt := shoff + uint64(idx)*shentsize + 32 // Elf64_Shdr.sh_size
	for _, cut := range []uint64{4, 16, 64, sect.Size / 16, sect.Size / 2, trees, trees + 16, sect.Size - 1} {
		c := slices.Clone(b)
		binary.LittleEndian.PutUint64(c[sizeAt:], cut)
		path := filepath.Join(dir, fmt.Sprintf("cut%d", cut))
		if err := os.WriteFile(path, c, 0o755); err != nil {
			t.Fatal(err)
		}
		o, err := OpenObject(path)
		if err != nil {
			t.Logf("cut to %d bytes: %v", cut, err)
			continue
		}
		named, inlined := 0, 0
		for _, a := range addrs {
			fr, want := o.Frames(nil, a), whole.Frames(nil, a)
			if len(fr) > 0 {
				named++
				if len(fr) > 1 {
					inlined++
				}
				if cut >= trees && fr[len(fr)-1].Name != want[len(want)-1].Name {
					t.Errorf("cut to %d bytes: %#x named %v, the whole table says %v", cut, a, fr, want)
				}
			}
		}
		oerr := o.(*elfObject).Err()
		t.Logf("cut to %d of %d bytes: %d of %d addresses named, %d with inline frames; %v", cut, sect.Size, named, len(addrs), inlined, oerr)
		if cut == trees && (named != len(addrs) || inlined > 0 || !errors.Is(oerr, errInlineTree)) {
			t.Errorf("cut before the inline trees: %d of %d named, %d inlined, error %v; want all, none inlined, and a malformed tree", named, len(addrs), inlined, oerr)
		}
		if cut < trees && named == len(addrs) && inlined > 0 {
			t.Errorf("cut to %d bytes, before the inline trees: %d addresses have inline frames", cut, inlined)
		}
		o.Close()
	}
}

// flatMem is a memory image of one block of bytes at addr.
type flatMem struct {
	addr uint64
	b    []byte
}

func (m flatMem) read(addr uint64, n int) []byte {
	if addr < m.addr || addr-m.addr > uint64(len(m.b)) || uint64(len(m.b))-(addr-m.addr) < uint64(n) {
		return nil
	}
	return m.b[addr-m.addr:][:n]
}

// FuzzGoInline reads the inline tree of a pclntab: the input is the
// offset of go:func.* in the table (4 bytes, little-endian) followed by
// the table, which is mapped at 0x500000 with runtime.text at 0x401000.
// Seeds: a header alone and, where the go command is here, the pclntab of
// goprog built with -ldflags=-s. Nothing may panic.
func FuzzGoInline(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x00\xf1\xff\xff\xff\x00\x00\x01\x08"))
	if _, err := exec.LookPath("go"); err == nil {
		bin := goprogBuilds(f, map[string][]string{"s": {"-ldflags=-s"}})["s"]
		o, err := OpenObject(bin)
		if err != nil {
			f.Fatal(err)
		}
		t := o.(*elfObject).gopcln
		t.build()
		if t.inl != nil {
			data, _ := t.sect.Data()
			f.Add(append(binary.LittleEndian.AppendUint32(nil, uint32(t.inl.gofunc-t.sect.Addr)), data...))
		}
		o.Close()
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 4 {
			return
		}
		const base, text = 0x500000, 0x401000
		data := in[4:]
		g, err := newGoInline(data, binary.LittleEndian, text, base+uint64(binary.LittleEndian.Uint32(in)), flatMem{base, data})
		if err != nil || g == nil { // nil: a table it does not read (Go 1.2-1.12, 32-bit)
			return
		}
		for i := range min(g.nfunc, 200) {
			pc, _ := g.entry(i)
			for d := range uint64(8) {
				g.inlined(pc + d*5)
			}
		}
	})
}
