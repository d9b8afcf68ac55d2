package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	goldenfile "github.com/profdiff/profdiff/diff/internal/golden"
	"github.com/profdiff/profdiff/diff/present"
	"github.com/profdiff/profdiff/diff/report"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, "./diff/render", name, got)
}

// dotnetReport is the report of the .NET 10 → 11 pair's diff with opts.
func dotnetReport(t *testing.T, opts diff.Options) *report.Report {
	return present.Diff(fixture.Dotnet(t, opts))
}

func TestMarkdownEscapesPipes(t *testing.T) {
	var buf bytes.Buffer
	if err := Report(&buf, present.Diff(fixture.Dotnet(t, diff.Options{})), Markdown); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(buf.String(), "\n") {
		if !strings.Contains(line, "PollGCWorker") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			// Prose (the verdict): a code span there is literal, so a '|'
			// stays as it is.
			if strings.Contains(line, `\|`) {
				t.Errorf("escaped pipe in prose: %s", line)
			}
			continue
		}
		rows++
		// 6 unescaped pipes: the borders of 5 columns.
		if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 6 {
			t.Errorf("PollGCWorker row has %d cell separators: %s", n, line)
		}
	}
	if rows == 0 {
		t.Error("no PollGCWorker table row")
	}
}

func TestFormatting(t *testing.T) {
	cases := map[string]string{Pct(0.0486): "4.86%", Pct(0): "0.00%", PP(0.0459): "+4.59pp", PP(-0.153): "-15.30pp", PP(-0.00001): "0.00pp", Pct1(0.804): "80.4%"}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("xml accepted as a format")
	}
}
