package render

import (
	"bytes"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// writeJSON streams the method rows; what it writes is what encoding the
// whole value writes, byte for byte: for results with rows, with one row,
// with none, and with names that spell the key it looks for.
func TestWriteJSONIsTheEncoder(t *testing.T) {
	r, top := fixture.SynthPair(t)
	if len(r.Methods) < 300 || len(top.Methods) < 300 {
		t.Fatalf("%d and %d method rows, want a few hundred", len(r.Methods), len(top.Methods))
	}
	odd := *r
	odd.Methods = append([]result.MethodRow(nil), r.Methods[:3]...)
	odd.Methods[0].Name = "\n  \"methods\": []"
	odd.Methods[1].Note = "]\n  \"methods\": [],"
	one := *r
	one.Methods = r.Methods[:1]
	none := *r
	none.Methods = nil
	empty := *top
	empty.Methods = []result.TopMethod{}
	values := map[string]any{"diff": r, "top": top, "odd names": &odd, "one row": &one, "no rows": &none, "empty top": &empty,
		"the rule table": rules.Default().Rules, "dotnet": fixture.Dotnet(t, diff.Options{Top: -1})}
	for name, v := range values {
		// The report's JSON value (package present's) is the result
		// wrapped with its rows, which must encode as the result does.
		w := v
		switch v := v.(type) {
		case *result.Result:
			w = present.DiffFor(v, report.PartJSON).JSON
		case *result.TopResult:
			w = present.TopFor(v, report.PartJSON).JSON
		}
		var want, got bytes.Buffer
		if err := encodeJSON(&want, v, ""); err != nil {
			t.Fatal(err)
		}
		if err := writeJSON(&got, w); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: writeJSON differs from the encoder at byte %d of %d:\n%s", name, firstDiff(got.Bytes(), want.Bytes()), want.Len(), got.String())
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
