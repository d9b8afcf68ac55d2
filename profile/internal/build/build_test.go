package build

import (
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
