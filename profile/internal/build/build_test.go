package build

import (
	"fmt"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

func TestInternsAndNumbersInFirstSeenOrder(t *testing.T) {
	b := New[string, string](nil)
	loc := func(frame, module string) *pprofile.Location {
		if l, ok := b.Location(frame); ok {
			return l
		}
		fn := b.Function(frame, pprofile.Function{Name: frame, SystemName: frame})
		l := &pprofile.Location{Line: []pprofile.Line{{Function: fn}}}
		if module != "" {
			l.Mapping = b.Mapping(module)
		}
		return b.AddLocationAs(frame, l)
	}
	a, c, a2 := loc("a", "m1"), loc("c", "m2"), loc("a", "m1")
	d := loc("d", "m1")
	if a != a2 {
		t.Errorf("the same key gave two locations")
	}
	for i, l := range []*pprofile.Location{a, c, d} {
		if l.ID != uint64(i+1) || b.P.Location[i] != l {
			t.Errorf("location %d has ID %d", i, l.ID)
		}
	}
	if len(b.P.Function) != 3 || b.P.Function[2].Name != "d" || b.P.Function[2].ID != 3 {
		t.Errorf("functions %v", b.P.Function)
	}
	if len(b.P.Mapping) != 2 || d.Mapping != a.Mapping || c.Mapping.ID != 2 || !c.Mapping.HasFunctions {
		t.Errorf("mappings %v", b.P.Mapping)
	}
	b.AddSample(&pprofile.Sample{Location: []*pprofile.Location{a, c}, Value: []int64{1}})
	b.P.SampleType = []*pprofile.ValueType{{Type: "samples", Unit: "count"}}
	if err := b.P.CheckValid(); err != nil {
		t.Error(err)
	}
}

func TestFunctionKeepsTheFirstValue(t *testing.T) {
	b := New[int, int](&pprofile.Profile{})
	f1 := b.Function(7, pprofile.Function{Name: "first"})
	f2 := b.Function(7, pprofile.Function{Name: "second"})
	if f1 != f2 || f1.Name != "first" || f1.ID != 1 {
		t.Errorf("got %+v and %+v", f1, f2)
	}
	if f := b.AddFunction(&pprofile.Function{Name: "dense"}); f.ID != 2 {
		t.Errorf("AddFunction numbered %d, want 2", f.ID)
	}
}

func TestSplitModule(t *testing.T) {
	for _, tc := range []struct{ in, module, name string }{
		{"System.Private.CoreLib!System.Threading.Monitor.Wait", "System.Private.CoreLib", "System.Threading.Monitor.Wait"},
		{"no module", "", "no module"},
		{"!leading", "", "!leading"},
		{"trailing!", "", "trailing!"},
		{"a b!c", "", "a b!c"},
		{"f(x!y)", "", "f(x!y)"},
	} {
		if m, n := SplitModule(tc.in); m != tc.module || n != tc.name {
			t.Errorf("SplitModule(%q) = %q, %q; want %q, %q", tc.in, m, n, tc.module, tc.name)
		}
	}
}

// Check says what CheckValid says, on profiles numbered densely (its fast
// path) and otherwise.
func TestCheckAgreesWithCheckValid(t *testing.T) {
	build := func() *pprofile.Profile {
		b := New[string, string](&pprofile.Profile{SampleType: []*pprofile.ValueType{{Type: "samples", Unit: "count"}}})
		m := b.Mapping("app")
		var locs []*pprofile.Location
		for _, name := range []string{"a", "b", "c"} {
			fn := b.Function(name, pprofile.Function{Name: name})
			locs = append(locs, b.AddLocationAs(name, &pprofile.Location{Mapping: m, Line: []pprofile.Line{{Function: fn}}}))
		}
		b.AddSample(&pprofile.Sample{Location: locs, Value: []int64{1}})
		return b.P
	}
	for _, c := range []struct {
		name   string
		mutate func(p *pprofile.Profile)
		valid  bool
	}{
		{"valid", func(*pprofile.Profile) {}, true},
		{"not dense", func(p *pprofile.Profile) { p.Function[0].ID, p.Function[1].ID = 2, 1 }, true},
		{"duplicate id", func(p *pprofile.Profile) { p.Location[1].ID = 1 }, false},
		{"reserved id", func(p *pprofile.Profile) { p.Function[0].ID = 0 }, false},
		{"foreign function", func(p *pprofile.Profile) { p.Location[2].Line[0].Function = &pprofile.Function{ID: 3} }, false},
		{"function id past the table", func(p *pprofile.Profile) {
			p.Location[2].Line[0].Function = &pprofile.Function{ID: 9}
		}, false},
		{"nil line function", func(p *pprofile.Profile) { p.Location[0].Line[0].Function = nil }, false},
		{"foreign mapping", func(p *pprofile.Profile) { p.Location[0].Mapping = &pprofile.Mapping{ID: 1} }, false},
		{"value count", func(p *pprofile.Profile) { p.Sample[0].Value = []int64{1, 2} }, false},
		{"no sample types", func(p *pprofile.Profile) { p.SampleType = nil }, false},
		{"nil sample", func(p *pprofile.Profile) { p.Sample = append(p.Sample, nil) }, false},
		{"nil sample location", func(p *pprofile.Profile) { p.Sample[0].Location[1] = nil }, false},
		{"nil function", func(p *pprofile.Profile) { p.Function[1] = nil }, false},
	} {
		p := build()
		c.mutate(p)
		got, want := Check(p), p.CheckValid()
		if (got == nil) != c.valid || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: Check says %v, CheckValid %v", c.name, got, want)
		}
	}
}
