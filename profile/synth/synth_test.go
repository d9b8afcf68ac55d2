package synth

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

func small(side Side) Config {
	return Config{Seed: 7, Stacks: 600, MinDepth: 4, MaxDepth: 12, Functions: 300, Side: side}
}

func encode(t *testing.T, cfg Config) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, cfg); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// stackKey names a sample's stack by its locations' addresses, which are
// the same on both sides for the same call site.
func stackKey(s *pprofile.Sample) string {
	var b strings.Builder
	for _, l := range s.Location {
		fmt.Fprintf(&b, "%x;", l.Address)
	}
	return b.String()
}

func TestDeterministic(t *testing.T) {
	for _, side := range []Side{Base, New} {
		if !bytes.Equal(encode(t, small(side)), encode(t, small(side))) {
			t.Errorf("side %d: two runs with one seed differ", side)
		}
	}
	other := small(Base)
	other.Seed++
	if bytes.Equal(encode(t, small(Base)), encode(t, other)) {
		t.Error("seeds 7 and 8 gave the same profile")
	}
	if bytes.Equal(encode(t, small(Base)), encode(t, small(New))) {
		t.Error("base and new are the same profile")
	}
}

func TestShape(t *testing.T) {
	var keys, funcs [2]map[string]bool
	for _, side := range []Side{Base, New} {
		cfg := small(side)
		p, err := pprofile.ParseData(encode(t, cfg))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.CheckValid(); err != nil {
			t.Fatal(err)
		}
		if len(p.Sample) != cfg.Stacks {
			t.Errorf("side %d: %d samples, want %d", side, len(p.Sample), cfg.Stacks)
		}
		keys[side], funcs[side] = map[string]bool{}, map[string]bool{}
		for _, f := range p.Function {
			funcs[side][f.Name] = true
		}
		runtimeFrames := 0
		for _, s := range p.Sample {
			if n := len(s.Location); n < cfg.MinDepth || n > cfg.MaxDepth {
				t.Fatalf("side %d: stack of %d locations, want %d-%d", side, n, cfg.MinDepth, cfg.MaxDepth)
			}
			if s.Value[0] < 1 || s.Value[1] != s.Value[0]*Period {
				t.Fatalf("side %d: values %v", side, s.Value)
			}
			k := stackKey(s)
			if keys[side][k] {
				t.Fatalf("side %d: duplicate stack %s", side, k)
			}
			keys[side][k] = true
			if name := s.Location[0].Line[0].Function.Name; strings.HasPrefix(name, "runtime.") || strings.HasPrefix(name, "sync.") || strings.HasPrefix(name, "internal/") {
				runtimeFrames++
			}
		}
		if runtimeFrames < cfg.Stacks/5 {
			t.Errorf("side %d: only %d of %d leaves are runtime/sync frames", side, runtimeFrames, cfg.Stacks)
		}
	}
	shared := 0
	for k := range keys[Base] {
		if keys[New][k] {
			shared++
		}
	}
	onlyNew := 0
	for f := range funcs[New] {
		if !funcs[Base][f] {
			onlyNew++
		}
	}
	if onlyNew == 0 {
		t.Error("no function is new-only (renamed)")
	}
	// 5% of the stacks are one-sided.
	if lo, hi := small(Base).Stacks*9/10, small(Base).Stacks*96/100; shared < lo || shared > hi {
		t.Errorf("%d stacks on both sides, want %d-%d", shared, lo, hi)
	}
}

func TestBounds(t *testing.T) {
	for _, cfg := range []Config{
		{Seed: 1, Stacks: 50, MinDepth: 1, MaxDepth: 1, Functions: 100},
		{Seed: 1, Stacks: 50, MinDepth: 2, MaxDepth: 4, Functions: 100},
		{Seed: 1, Stacks: 20, MinDepth: 40, MaxDepth: 40, Functions: 1},
		{Seed: 1, Stacks: 0, MinDepth: 5, MaxDepth: 9, Functions: 10},
	} {
		p := Generate(cfg)
		if len(p.Sample) != cfg.Stacks {
			t.Errorf("%+v: %d samples", cfg, len(p.Sample))
		}
		for _, s := range p.Sample {
			if n := len(s.Location); n < cfg.MinDepth || n > cfg.MaxDepth {
				t.Fatalf("%+v: stack of %d locations", cfg, n)
			}
		}
	}
	for _, bad := range []Config{
		{Stacks: -1, MinDepth: 1, MaxDepth: 1, Functions: 1},
		{Stacks: 1, MinDepth: 3, MaxDepth: 2, Functions: 1},
		{Stacks: 1, MinDepth: 1, MaxDepth: 1, Functions: 0},
		{Stacks: 1, MinDepth: 1, MaxDepth: 1, Functions: 1, Side: 2},
	} {
		if err := Write(&bytes.Buffer{}, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestLocations checks the locations look like a Go CPU profile's: one
// mapping, a distinct in-mapping address per location, a location per call
// site (several per function), and PCsPerFunction's cap.
func TestLocations(t *testing.T) {
	for _, pcs := range []int{0, 1, 3} {
		cfg := small(Base)
		cfg.PCsPerFunction = pcs
		p, err := pprofile.ParseData(encode(t, cfg))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Mapping) != 1 || !p.Mapping[0].HasFunctions || p.Mapping[0].File == "" {
			t.Fatalf("pcs %d: mappings %v", pcs, p.Mapping)
		}
		m := p.Mapping[0]
		addrs := map[uint64]bool{}
		perFunc := map[uint64]int{} // locations by their outermost function
		for _, l := range p.Location {
			if l.Mapping != m || l.Address < m.Start || l.Address >= m.Limit || addrs[l.Address] {
				t.Fatalf("pcs %d: location %d: mapping %p, address %#x (mapping %#x-%#x, seen %v)", pcs, l.ID, l.Mapping, l.Address, m.Start, m.Limit, addrs[l.Address])
			}
			addrs[l.Address] = true
			if len(l.Line) == 0 || len(l.Line) > 2 {
				t.Fatalf("pcs %d: location %d has %d lines", pcs, l.ID, len(l.Line))
			}
			for _, ln := range l.Line {
				if ln.Line <= 0 || ln.Function.Filename == "" || ln.Line < ln.Function.StartLine {
					t.Fatalf("pcs %d: location %d: line %d of %s (%s:%d)", pcs, l.ID, ln.Line, ln.Function.Name, ln.Function.Filename, ln.Function.StartLine)
				}
			}
			perFunc[l.Line[len(l.Line)-1].Function.ID]++
		}
		stacks := map[string]bool{}
		for _, s := range p.Sample {
			if k := stackKey(s); stacks[k] {
				t.Fatalf("pcs %d: duplicate stack %s", pcs, k)
			} else {
				stacks[k] = true
			}
		}
		most := 0
		for _, n := range perFunc {
			most = max(most, n)
		}
		ratio := float64(len(p.Location)) / float64(len(perFunc))
		switch {
		case pcs == 0 && (ratio < 2 || most < 6):
			t.Errorf("realistic shape: %.2f locations per function, at most %d", ratio, most)
		case pcs > 0 && most > pcs:
			t.Errorf("PCsPerFunction %d: a function has %d locations", pcs, most)
		case pcs == 1 && ratio != 1:
			t.Errorf("PCsPerFunction 1: %.2f locations per function", ratio)
		}
	}
	bad := small(Base)
	bad.PCsPerFunction = -1
	if err := Write(&bytes.Buffer{}, bad); err == nil {
		t.Error("PCsPerFunction -1: no error")
	}
}
