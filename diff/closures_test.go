package diff

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/synth"
)

// closureInfo.add keeps each closure's distinct neighbours in the order
// first met, on each side, through the pair set's growth.
func TestClosureNeighbours(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var c closureInfo
	want := [2]map[int32][]int32{{}, {}}
	for range 200_000 {
		side := result.Side(r.Intn(2))
		id := int32(r.Intn(40))
		spread := 4 // closures 0-9 have few neighbours, the rest many
		if id >= 10 {
			spread = 200
		}
		n := int32(r.Intn(spread)) + 1000*id
		c.add(side, id, n)
		if !slices.Contains(want[side][id], n) {
			want[side][id] = append(want[side][id], n)
		}
	}
	for side := range 2 {
		for id := range int32(40) {
			got := c.neighboursOf(result.Side(side), id)
			if !slices.Equal(got, want[side][id]) {
				t.Fatalf("side %d closure %d: neighbours %v, want %v", side, id, got, want[side][id])
			}
		}
		if n, slots := c.pairs[side].n, len(c.pairs[side].slots); n < 4000 || slots <= 1024 || 2*n > slots {
			t.Errorf("side %d: %d pairs in %d slots: the set did not grow, or is over half full", side, n, slots)
		}
	}
	if c.neighboursOf(result.Base, 1000) != nil {
		t.Error("neighbours for a method never seen")
	}
}

// closureProfile is a CPU profile of one stack, main.main → closure →
// main.work, of the main binary build.
func closureProfile(build, closure string) *profile.Loaded {
	fns := []*pprofile.Function{{ID: 1, Name: "main.work"}, {ID: 2, Name: closure}, {ID: 3, Name: "main.main"}}
	m := &pprofile.Mapping{ID: 1, Start: 0x1000, Limit: 0x9000, File: "/bin/prog", BuildID: build, HasFunctions: true}
	var locs []*pprofile.Location
	for i, fn := range fns {
		locs = append(locs, &pprofile.Location{ID: uint64(i + 1), Mapping: m, Address: 0x1000 + 0x100*uint64(i), Line: []pprofile.Line{{Function: fn}}})
	}
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     1, Mapping: []*pprofile.Mapping{m}, Function: fns, Location: locs,
		Sample: []*pprofile.Sample{{Location: locs, Value: []int64{10}}},
	}
	return &profile.Loaded{Source: build + "-" + closure, Format: profile.FormatPprof, Kind: profile.KindCPU, Profile: p}
}

// Walks note closures' neighbours only while pairing may need them: once
// every profile expected (Expect) is registered and both sides name one
// build, or one side has none (top), the rest go unnoted, and the rows
// are those of an Analyzer told nothing, which notes them all. Two
// builds note them on both sides, and pair a renumbered closure by them.
// A profile past the count expected pairs closures as themselves.
func TestClosureNeighboursOnlyForPairing(t *testing.T) {
	for _, c := range []struct {
		name         string
		base, new    *profile.Loaded // new nil: top
		expect       int
		noted        [2]bool // neighbours noted, per side
		renumbered   string  // the new row's RenumberedFrom
		overExpected bool
	}{
		{"one build", closureProfile("b1", "main.run.func1"), closureProfile("b1", "main.run.func1"), 2, [2]bool{true, false}, "", false},
		{"two builds", closureProfile("b1", "main.run.func1"), closureProfile("b2", "main.run.func2"), 2, [2]bool{true, true}, "main.run.func1", false},
		{"top", closureProfile("b1", "main.run.func1"), nil, 1, [2]bool{false, false}, "", false},
		{"more than expected", closureProfile("b1", "main.run.func1"), closureProfile("b2", "main.run.func2"), 1, [2]bool{false, false}, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// run returns the Analyzer, the diff (nil for top) and its
			// method rows.
			run := func(expect int) (*Analyzer, *result.Result, any) {
				a := NewAnalyzer(Options{Top: -1, Cum: true})
				a.Expect(expect)
				for side, l := range []*profile.Loaded{c.base, c.new} {
					if l == nil {
						continue
					}
					if err := a.Add(result.Side(side), l); err != nil {
						t.Fatal(err)
					}
				}
				if c.new == nil {
					return a, nil, a.Top().Methods
				}
				r := a.Diff()
				return a, r, r.Methods
			}
			a, r, rows := run(c.expect)
			for side, want := range c.noted {
				if got := len(a.closures.neighbours[side]) > 0; got != want {
					t.Errorf("side %v: neighbours noted %v, want %v", result.Side(side), got, want)
				}
			}
			if a.overExpected != c.overExpected {
				t.Errorf("overExpected %v, want %v", a.overExpected, c.overExpected)
			}
			if r != nil && c.overExpected != slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "more profiles added than the 1 announced") }) {
				t.Errorf("warnings %q: want one of more profiles than announced only when there were", r.Warnings)
			}
			if c.new != nil {
				row := findMethod(r, c.new.Profile.Function[1].Name) // the closure
				if row == nil || row.RenumberedFrom != c.renumbered || row.NewValue == 0 {
					t.Fatalf("closure row %+v, want new value, renumbered from %q", row, c.renumbered)
				}
			}
			if c.overExpected {
				return
			}
			_, _, all := run(0)
			if !reflect.DeepEqual(rows, all) {
				t.Errorf("rows %+v, want those of an Analyzer that notes every neighbour: %+v", rows, all)
			}
		})
	}
}

// Streamed profiles walked in parallel, cut into parts, see the flag set
// while their walks are in flight: the results with Expect are those
// without, for one build on both sides (neighbours no longer noted) and
// for two builds (noted on both, closures paired by them).
func TestClosureNeighboursParallelWalks(t *testing.T) {
	dir := t.TempDir()
	for _, builds := range [][2]string{{"b1", "b1"}, {"b1", "b2"}} {
		var rs [2]*profile.Raw
		for i, side := range []synth.Side{synth.Base, synth.New} {
			cfg := synth.DefaultConfig()
			cfg.Stacks, cfg.Functions, cfg.Side = 3000, 300, side
			p := synth.Generate(cfg)
			p.Mapping[0].BuildID = builds[i]
			rs[i] = rawFile(t, dir, fmt.Sprintf("%s-%d.pb.gz", builds[i], i), p, profile.Options{})
		}
		diffWith := func(expect int) *result.Result {
			opts := cutFine(Options{Top: -1, Cum: true})
			a := NewAnalyzer(opts)
			a.Expect(expect)
			for side, r := range rs {
				in, err := PrepareWith(r, prepFor(opts, true))
				if err != nil || !in.Streamed() {
					t.Fatalf("Prepare: %v", err)
				}
				if err := a.AddInput(result.Side(side), in); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Wait(); err != nil {
				t.Fatal(err)
			}
			return a.Diff()
		}
		sameJSON(t, fmt.Sprintf("builds %v", builds), diffWith(0), diffWith(2))
	}
}
