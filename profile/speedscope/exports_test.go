package speedscope

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

// framePositions maps each function name to the line and column of its
// locations.
func framePositions(p *pprofile.Profile) map[string][2]int64 {
	out := map[string][2]int64{}
	for _, l := range p.Location {
		out[l.Line[0].Function.Name] = [2]int64{l.Line[0].Line, l.Line[0].Column}
	}
	return out
}

func parseTestdata(t *testing.T, name string) (*pprofile.Profile, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("%s: CheckValid: %v", name, err)
	}
	return p, data
}

// TestSpeedscopeExportsNegativeLine reads speedscope's own export of a Node
// heap profile (testdata/README.md), whose frames without a position have
// line and column -1: they load with no line, the others keep theirs, and
// the total is the one a plain decode of the file finds.
func TestSpeedscopeExportsNegativeLine(t *testing.T) {
	p, data := parseTestdata(t, "node-heap.speedscope.json")
	if got := p.SampleType[len(p.SampleType)-1]; got.Type != "space" || got.Unit != "bytes" {
		t.Errorf("sample type %s/%s, want space/bytes", got.Type, got.Unit)
	}
	var total int64
	for _, s := range p.Sample {
		total += s.Value[len(s.Value)-1]
	}
	if want := expect(t, data).total; math.Abs(float64(total)-want) > float64(len(p.Sample)) {
		t.Errorf("total %d, want %v", total, want)
	}
	pos := framePositions(p)
	if got := pos["(root)"]; got != [2]int64{0, 0} {
		t.Errorf("(root), written with line and col -1: line, col = %v, want none", got)
	}
	positioned := 0
	for _, lc := range pos {
		if lc[0] > 0 {
			positioned++
		}
	}
	if positioned == 0 {
		t.Errorf("no frame kept its line: %v", pos)
	}
}

// TestSpeedscopeExportsLongLines reads speedscope's export of its pprof
// importer's result with lines written as protobufjs Long objects
// ({"low":…,"high":…,"unsigned":…}); it must load exactly as the same export
// with plain numbers does.
func TestSpeedscopeExportsLongLines(t *testing.T) {
	long, _ := parseTestdata(t, "pprof-long-lines.speedscope.json")
	plain, _ := parseTestdata(t, "pprof.speedscope.json")
	if got, want := framePositions(long), framePositions(plain); !reflect.DeepEqual(got, want) {
		t.Errorf("positions from Long lines %v, want %v", got, want)
	}
	if got := framePositions(long)["main.main"][0]; got != 49 {
		t.Errorf("main.main: line %d, want 49", got)
	}
	if got, want := stackValues(long, 0), stackValues(plain, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("stacks from Long lines %v, want %v", got, want)
	}
}

// TestLongPositions checks the arithmetic of Long objects beyond what a real
// export holds: the high word, the sign and unsigned values.
func TestLongPositions(t *testing.T) {
	frame := func(line string) string {
		return `{` + schema + `, "shared": {"frames": [{"name": "a", "line": ` + line + `}]}, "profiles": [{"type": "sampled", "unit": "none", "samples": [[0]], "weights": [1]}]}`
	}
	for _, c := range []struct {
		line string
		want int64
		err  string
	}{
		{`{"low": 7, "high": 0, "unsigned": false}`, 7, ""},
		{`{"low": -1, "high": -1, "unsigned": false}`, 0, ""}, // -1: no line
		{`{"low": 0, "high": 1, "unsigned": false}`, 0, "is not a valid line"},
		{`{"low": -1, "high": -1, "unsigned": true}`, 0, "is not a valid line"},
		{`{"low": 7}`, 0, "expected a number, got an object"},
		{`-1`, 0, ""},
		{`1.5`, 0, "is not a valid line"},
	} {
		p, _, err := Parse([]byte(frame(c.line)))
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("line %s: error %v, want %q", c.line, err, c.err)
			}
		case err != nil:
			t.Errorf("line %s: %v", c.line, err)
		case p.Location[0].Line[0].Line != c.want:
			t.Errorf("line %s: read as %d, want %d", c.line, p.Location[0].Line[0].Line, c.want)
		}
	}
}
