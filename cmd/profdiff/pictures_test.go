package main

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// mustProfdiff runs profdiff and fails the test unless it exits 0 with nothing
// on stderr.
func mustProfdiff(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, code := profdiff(t, "", args...)
	if code != 0 || stderr != "" {
		t.Fatalf("profdiff %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return out
}

// jsonTotals reads the totals of a diff's (base, new) or a top's JSON.
func jsonTotals(t *testing.T, out string) (base, new, top float64) {
	t.Helper()
	var v struct {
		Base, New struct{ Total float64 }
		Total     float64
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	return v.Base.Total, v.New.Total, v.Total
}

// pictureFile writes s to a file of the test's temporary folder.
func pictureFile(t *testing.T, name, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPicturesSVG(t *testing.T) {
	out := mustProfdiff(t, "diff", "--format", "svg", net10, net11)
	dec := xml.NewDecoder(strings.NewReader(out))
	root := ""
	frames := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("diff --format svg is not well-formed XML: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = el.Name.Space + " " + el.Name.Local
			}
			if el.Name.Local == "g" && len(el.Attr) > 0 && strings.HasPrefix(el.Attr[0].Value, "frame") {
				frames++
			}
		}
	}
	if root != "http://www.w3.org/2000/svg svg" {
		t.Errorf("root element %q, want an svg element in the SVG namespace", root)
	}
	if frames < 20 || !strings.Contains(out, "SystemNative_WaitForSocketEvents") {
		t.Errorf("%d frames, want the seed's tree (with SystemNative_WaitForSocketEvents)", frames)
	}
	if top := mustProfdiff(t, "top", "--format", "svg", net11); !strings.Contains(top, "<svg") || strings.Contains(top, `class="frame removed"`) {
		t.Errorf("top --format svg is not one side's flame graph")
	}
}

func TestPicturesFoldedRoundTrip(t *testing.T) {
	base, new, _ := jsonTotals(t, mustProfdiff(t, "diff", "--format", "json", net10, net11))
	for _, c := range []struct {
		args []string
		want float64
	}{
		{[]string{"diff", "--format", "folded", net10, net11}, new},
		{[]string{"diff", "--format", "folded", "--side", "new", net10, net11}, new},
		{[]string{"diff", "--format", "folded", "--side", "base", net10, net11}, base},
		{[]string{"top", "--format", "folded", net10}, base},
	} {
		p := pictureFile(t, "side.folded", mustProfdiff(t, c.args...))
		if _, _, total := jsonTotals(t, mustProfdiff(t, "top", "--format", "json", p)); total != c.want {
			t.Errorf("%s loads back with total %g, want %g", strings.Join(c.args, " "), total, c.want)
		}
	}
	// The two sides loaded back diff as the originals do.
	b := pictureFile(t, "base.folded", mustProfdiff(t, "diff", "--format", "folded", "--side", "base", net10, net11))
	n := pictureFile(t, "new.folded", mustProfdiff(t, "diff", "--format", "folded", net10, net11))
	if got := mustProfdiff(t, "diff", "--format", "csv", b, n); !strings.Contains(got, "LowLevelLock.WaitAndAcquire") {
		t.Errorf("the folded sides' diff lacks WaitAndAcquire:\n%s", got)
	}
}

func TestPicturesDiffFolded(t *testing.T) {
	out := mustProfdiff(t, "diff", "--format", "difffolded", net10, net11)
	base, new, _ := jsonTotals(t, mustProfdiff(t, "diff", "--format", "json", net10, net11))
	var sums [2]float64
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf("line %q is not stack base new", line)
		}
		for i := range sums {
			v, err := strconv.ParseFloat(f[len(f)-2+i], 64)
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			sums[i] += v
		}
	}
	if sums != [2]float64{base, new} {
		t.Errorf("difffolded sums to %v, want the totals %g and %g", sums, base, new)
	}
	_, stderr, code := profdiff(t, "", "top", "--format", "difffolded", net11)
	if code != 2 || !strings.Contains(stderr, "want table, markdown, csv, json, html, github, svg or folded") {
		t.Errorf("top --format difffolded: exit %d, %q; want 2 naming the formats top has", code, stderr)
	}
	_, stderr, code = profdiff(t, "", "diff", "--format", "folded", "--side", "sideways", net10, net11)
	if code != 2 || !strings.Contains(stderr, `"sideways" is not base or new`) {
		t.Errorf("--side sideways: exit %d, %q; want 2", code, stderr)
	}
	_, stderr, code = profdiff(t, "", "diff", "--format", "html", "--side", "base", net10, net11)
	if code != 2 || !strings.Contains(stderr, "--side picks the side --format folded writes; --format html shows both") {
		t.Errorf("--side with html: exit %d, %q; want 2 saying --side is folded's", code, stderr)
	}
}
