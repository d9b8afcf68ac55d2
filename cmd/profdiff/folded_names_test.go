package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// topRows is what a top's JSON says: the total and each method row's
// value by name.
type topRows struct {
	Total   float64
	Methods map[string]float64
}

// topJSON runs top --format json --top 0 with args and reads its total
// and rows; warnings are allowed, a failure is not.
func topJSON(t *testing.T, args ...string) topRows {
	t.Helper()
	out, stderr, code := profdiff(t, "", append([]string{"top", "--format", "json", "--top", "0"}, args...)...)
	if code != 0 {
		t.Fatalf("top %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var v struct {
		Total   float64
		Methods []struct {
			Name  string
			Value float64
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	r := topRows{Total: v.Total, Methods: map[string]float64{}}
	for _, m := range v.Methods {
		r.Methods[m.Name] += m.Value
	}
	return r
}

// foldedOf runs top --format folded with args.
func foldedOf(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, code := profdiff(t, "", append([]string{"top", "--format", "folded"}, args...)...)
	if code != 0 {
		t.Fatalf("top --format folded %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return out
}

// checkFoldedRoundTrip writes file's folded stacks (top --format folded
// with args), loads them back with top, and wants the same total, the
// same method rows and the same folded stacks again: folded output is
// data, its frames are the input's and every sample is in it.
func checkFoldedRoundTrip(t *testing.T, file string, args ...string) string {
	t.Helper()
	folded := foldedOf(t, append(args, file)...)
	p := pictureFile(t, "roundtrip.folded", folded)
	orig, back := topJSON(t, append(args, file)...), topJSON(t, p)
	if orig.Total != back.Total || orig.Total == 0 {
		t.Errorf("%s: total %g, its folded stacks load back with %g", file, orig.Total, back.Total)
	}
	if o, b := rowsText(orig.Methods), rowsText(back.Methods); o != b {
		t.Errorf("%s: method rows differ once folded and loaded back:\n%s\nvs\n%s", file, o, b)
	}
	if again := foldedOf(t, p); again != folded {
		t.Errorf("%s: folded stacks loaded back and written again differ:\n%s\nvs\n%s", file, folded, again)
	}
	return folded
}

// rowsText lists rows sorted by name, one "name value" a line.
func rowsText(rows map[string]float64) string {
	var lines []string
	for n, v := range rows {
		lines = append(lines, fmt.Sprintf("%s %g", n, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// A Go heap profile's sample recorded without a stack (google/pprof's
// gobench.heap, written by Go's runtime, in the corpus: 7085 of its 83134
// allocated objects) is counted under the pseudo-frame [no stack]: in the
// method table, in the folded stacks, and back again when they are
// loaded.
func TestFoldedNoStack(t *testing.T) {
	heap := corpusFile(t, "google-pprof/profile__testdata__gobench.heap")
	folded := checkFoldedRoundTrip(t, heap, "--sample-index", "alloc_objects")
	if !strings.Contains(folded, "\n[no stack] 7085\n") && !strings.HasPrefix(folded, "[no stack] 7085\n") {
		t.Errorf("folded stacks lack the stackless sample as [no stack] 7085:\n%s", folded)
	}
	if rows := topJSON(t, "--sample-index", "alloc_objects", heap); rows.Methods["[no stack]"] != 7085 || rows.Total != 83134 {
		t.Errorf("top: [no stack] %g of %g, want 7085 of 83134", rows.Methods["[no stack]"], rows.Total)
	}
}
