package render

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/profdiff/profdiff/diff/internal/golden"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/profile"
)

func load(t *testing.T, path string) *profile.Loaded {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := profile.Parse(path, data, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// dotnetResult is the diff of the generated .NET 10 → 11 fixture pair (see
// cmd/genfixtures), with source names made relative to the repository root
// so golden files do not depend on the test's directory.
func dotnetResult(t *testing.T, opts diff.Options) *diff.Result {
	t.Helper()
	a := diff.NewAnalyzer(opts)
	for side, name := range []string{"net10.folded", "net11.folded"} {
		l := load(t, filepath.Join("..", "..", "testdata", "dotnet", name))
		l.Source = "testdata/dotnet/" + name
		if err := a.Add(diff.Side(side), l); err != nil {
			t.Fatal(err)
		}
	}
	return a.Diff()
}

func dotnetTop(t *testing.T) *diff.TopResult {
	t.Helper()
	a := diff.NewAnalyzer(diff.Options{Top: 8})
	l := load(t, filepath.Join("..", "..", "testdata", "dotnet", "net11.folded"))
	l.Source = "testdata/dotnet/net11.folded"
	if err := a.Add(diff.Base, l); err != nil {
		t.Fatal(err)
	}
	return a.Top()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, "./diff/render", name, got)
}

// Golden files are named after the command and flags that produce them.
func TestGoldenDiff(t *testing.T) {
	for _, f := range Tables {
		var buf bytes.Buffer
		if err := Diff(&buf, dotnetResult(t, diff.Options{}), f); err != nil {
			t.Fatal(err)
		}
		golden(t, "diff.dotnet."+string(f)+".golden", buf.Bytes())
	}
	var buf bytes.Buffer
	if err := Diff(&buf, dotnetResult(t, diff.Options{By: diff.ByDecider, Cum: false, Top: 6}), Markdown); err != nil {
		t.Fatal(err)
	}
	golden(t, "diff.dotnet.by-decider.top6.markdown.golden", buf.Bytes())
}

func TestGoldenTop(t *testing.T) {
	for _, f := range Tables {
		var buf bytes.Buffer
		if err := Top(&buf, dotnetTop(t), f); err != nil {
			t.Fatal(err)
		}
		golden(t, "top.dotnet-net11.top8."+string(f)+".golden", buf.Bytes())
	}
}

func TestGoldenRules(t *testing.T) {
	rules := diff.DefaultRules().Rules
	var goRules []*diff.Rule
	for _, r := range rules {
		if r.Runtime == "go" {
			goRules = append(goRules, r)
		}
	}
	for _, f := range []Format{Markdown, CSV} {
		var buf bytes.Buffer
		if err := Rules(&buf, goRules, f); err != nil {
			t.Fatal(err)
		}
		golden(t, "rules.go."+string(f)+".golden", buf.Bytes())
	}
}

// The JSON output keeps the schema in DESIGN.md: these keys with these
// meanings.
func TestJSONSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := Diff(&buf, dotnetResult(t, diff.Options{}), JSON); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SampleType string `json:"sample_type"`
		Base       struct {
			Sources []string `json:"sources"`
			Total   float64  `json:"total"`
			Unit    string   `json:"unit"`
			Samples int64    `json:"samples"`
		} `json:"base"`
		Buckets []struct {
			Bucket           string
			Base, New, Delta float64
		} `json:"buckets"`
		Methods []struct {
			Name, Bucket, Note string
			Base, New, Delta   float64
		} `json:"methods"`
		Warnings any `json:"warnings"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SampleType != "samples/count" || doc.Base.Samples != 10000 || doc.Base.Unit != "count" || len(doc.Base.Sources) != 1 {
		t.Errorf("header = %+v", doc)
	}
	if len(doc.Buckets) != diff.NumBuckets || doc.Buckets[2].Bucket != "lock-contention" {
		t.Errorf("buckets = %+v", doc.Buckets)
	}
	found := false
	for _, m := range doc.Methods {
		if strings.HasSuffix(m.Name, "LowLevelLock.WaitAndAcquire") {
			found = true
			if m.Bucket != "lock-contention" || m.Note != "18x share" || m.Base != 0.0027 || m.New != 0.0486 {
				t.Errorf("WaitAndAcquire = %+v", m)
			}
		}
	}
	if !found {
		t.Error("no WaitAndAcquire row")
	}
	// Warnings go to stderr, never into the data.
	if doc.Warnings != nil {
		t.Errorf("JSON carries warnings: %v", doc.Warnings)
	}
}

func TestCSVIsRectangular(t *testing.T) {
	var buf bytes.Buffer
	if err := Diff(&buf, dotnetResult(t, diff.Options{Top: -1}), CSV); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+diff.NumBuckets+15 {
		t.Errorf("%d records, want header + 6 buckets + 15 methods", len(recs))
	}
}

func TestMarkdownEscapesPipes(t *testing.T) {
	var buf bytes.Buffer
	if err := Diff(&buf, dotnetResult(t, diff.Options{}), Markdown); err != nil {
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
