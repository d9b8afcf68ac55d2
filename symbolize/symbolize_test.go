package symbolize

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// jitProfile is an address-only profile of one process with a perf map
// mapping and a [vdso] one: three stacks, values 6, 3 and 1.
func jitProfile(mapFile string) *pprofile.Profile {
	jit := &pprofile.Mapping{ID: 1, File: mapFile}
	vdso := &pprofile.Mapping{ID: 2, File: "[vdso]", Start: 0x7fff0000, Limit: 0x7fff2000}
	loc := func(id, addr uint64, m *pprofile.Mapping) *pprofile.Location {
		return &pprofile.Location{ID: id, Address: addr, Mapping: m}
	}
	a, b, c, v := loc(1, 0x1010, jit), loc(2, 0x2000, jit), loc(3, 0x9000, jit), loc(4, 0x7fff0100, vdso)
	return &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "samples", Unit: "count"}},
		Mapping:    []*pprofile.Mapping{jit, vdso},
		Location:   []*pprofile.Location{a, b, c, v},
		Sample: []*pprofile.Sample{
			{Location: []*pprofile.Location{a, b}, Value: []int64{6}},
			{Location: []*pprofile.Location{c, b}, Value: []int64{3}},
			{Location: []*pprofile.Location{v, a}, Value: []int64{1}},
		},
	}
}

func writeMap(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSymbolizePerfMap(t *testing.T) {
	dir := t.TempDir()
	// b's address 0x2000 is a return address just past jitA's end: only
	// ReturnAddresses looks it up inside jitA.
	writeMap(t, dir, "perf-77.map", "1000 1000 jitA\n2000 100 jitB\n")
	for _, ret := range []bool{false, true} {
		p := jitProfile("/tmp/perf-77.map")
		rep, err := Symbolize(p, Options{Paths: []string{dir}, ReturnAddresses: ret})
		if err != nil {
			t.Fatal(err)
		}
		names := map[uint64]string{}
		for _, l := range p.Location {
			if len(l.Line) > 0 {
				names[l.ID] = l.Line[0].Function.Name
			}
		}
		wantB := "jitB"
		if ret {
			wantB = "jitA"
		}
		if names[1] != "jitA" || names[2] != wantB || names[3] != "" || names[4] != "" {
			t.Errorf("ReturnAddresses=%v: names %v, want 1 jitA, 2 %s, 3 and 4 unnamed", ret, names, wantB)
		}
		if ret && p.Location[0].Line[0].Function != p.Location[1].Line[0].Function {
			t.Error("two locations in jitA have two Functions")
		}
		if len(rep.Mappings) != 2 {
			t.Fatalf("report %+v, want the map and [vdso]", rep.Mappings)
		}
		m := rep.Mappings[0]
		if m.ServedBy != filepath.Join(dir, "perf-77.map") || m.By != ByName || m.Named != 2 || m.Locations != 3 || m.Share != 0.3 {
			t.Errorf("map report %+v", m)
		}
		if p.Mapping[0].HasFunctions {
			t.Error("HasFunctions set on a mapping with an unnamed location")
		}
		if v := rep.Mappings[1]; !v.Skipped || v.Share != 0.1 {
			t.Errorf("[vdso] report %+v, want skipped with 10%%", v)
		}
		want := "symbols: 1 mapping unsymbolized (30.0% of samples): /tmp/perf-77.map: " + filepath.Join(dir, "perf-77.map") + " named 2 of 3 addresses"
		if got := rep.Warning(); got != want {
			t.Errorf("Warning:\n%s\nwant\n%s", got, want)
		}
	}
}

func TestSymbolizeNoFile(t *testing.T) {
	p := jitProfile("/tmp/perf-78.map")
	p.Mapping[0].BuildID = "00112233445566778899"
	rep, err := Symbolize(p, Options{Paths: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	want := "symbols: 1 mapping unsymbolized (100.0% of samples): /tmp/perf-78.map (build ID 001122334455…): no file found in the symbol paths (1 path), PPROF_BINARY_PATH (unset) or the debuginfod cache (none)"
	if got := rep.Warning(); got != want {
		t.Errorf("Warning:\n%s\nwant\n%s", got, want)
	}
	if len(rep.Served()) != 0 {
		t.Errorf("Served: %q", rep.Served())
	}
}

// addressOnly strips a profile to addresses, as an agent that symbolizes
// later writes it: no lines, no functions, no Has* flags.
func addressOnly(p *pprofile.Profile) {
	for _, l := range p.Location {
		l.Line = nil
	}
	p.Function = nil
	for _, m := range p.Mapping {
		m.HasFunctions, m.HasFilenames, m.HasLineNumbers, m.HasInlineFrames = false, false, false, false
	}
}

// A Go CPU profile of testdata/goprog, stripped to addresses and named
// again from the binary, has the functions and lines the runtime wrote
// for at least 99% of its sampled value.
func TestSymbolizeGoBinary(t *testing.T) {
	bin, gnu, _ := progIDs(t)
	orig := goProgProfile(t)
	if orig.Mapping[0].BuildID != gnu {
		t.Fatalf("the profile's main mapping has build ID %q, the binary %q", orig.Mapping[0].BuildID, gnu)
	}
	if _, err := OpenObject(bin); errors.Is(err, ErrNoSymbols) {
		t.Skip("OpenObject is still the skeleton's stub: " + err.Error())
	}
	p := orig.Copy()
	addressOnly(p)
	rep, err := Symbolize(p, Options{Paths: []string{bin}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("served: %q; warning: %q", rep.Served(), rep.Warning())
	var total, same int64
	for i, s := range p.Sample {
		v := s.Value[0]
		total += v
		if stackText(s) == stackText(orig.Sample[i]) {
			same += v
		} else if same < total/2 {
			t.Logf("differs: %s\nwant    %s", stackText(s), stackText(orig.Sample[i]))
		}
	}
	if total == 0 || float64(same) < 0.99*float64(total) {
		t.Errorf("%d of %d sampled value has the runtime's names and lines", same, total)
	}
}

// stackText is a sample's frames, innermost first: function and line.
func stackText(s *pprofile.Sample) string {
	var b strings.Builder
	for _, l := range s.Location {
		for _, ln := range l.Line {
			if ln.Function != nil {
				b.WriteString(ln.Function.Name)
			}
			b.WriteString(":" + strconv.FormatInt(ln.Line, 10) + " ")
		}
		b.WriteString("| ")
	}
	return b.String()
}

// A symbol file whose DWARF is broken still names addresses from its
// symbol table or pclntab, and the report's warning says what was wrong
// with it (inline frames and lines are then missing).
func TestSymbolizeBrokenDWARFWarns(t *testing.T) {
	bin := buildGoProg(t) // its DWARF uncompressed
	orig := goProgProfile(t)
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sec := ef.Section(".debug_info")
	if sec == nil || sec.Flags&elf.SHF_COMPRESSED != 0 {
		t.Skip("no uncompressed .debug_info to break")
	}
	for i := sec.Offset; i < sec.Offset+sec.FileSize; i++ {
		data[i] = 0xff
	}
	broken := filepath.Join(t.TempDir(), filepath.Base(bin))
	if err := os.WriteFile(broken, data, 0o755); err != nil {
		t.Fatal(err)
	}
	p := orig.Copy()
	addressOnly(p)
	rep, err := Symbolize(p, Options{Paths: []string{broken}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) == 0 || !strings.Contains(rep.Warning(), broken+": ") {
		t.Errorf("problems %q, warning %q: want the broken DWARF named", rep.Problems, rep.Warning())
	}
	named := 0
	for _, l := range p.Location {
		if len(l.Line) > 0 {
			named++
		}
	}
	if named == 0 {
		t.Error("nothing named from the symbol table or pclntab")
	}
}
