package present

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/internal/fixture"
	goldenfile "github.com/profdiff/profdiff/diff/internal/golden"
	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// dotnetResult is the diff of the .NET 10 → 11 pair (fixture.Dotnet).
func dotnetResult(t *testing.T, opts diff.Options) *result.Result { return fixture.Dotnet(t, opts) }

// dotnetTop is the top 8 of the pair's .NET 11 side.
func dotnetTop(t *testing.T) *result.TopResult { return fixture.DotnetTop(t, diff.Options{Top: 8}) }

// diffTo writes the report of r in format f, built for that format's
// parts as the command builds it.
func diffTo(w io.Writer, r *result.Result, f render.Format) error {
	return render.Report(w, DiffFor(r, f.Parts()), f)
}

// topTo is diffTo for a top listing.
func topTo(w io.Writer, t *result.TopResult, f render.Format) error {
	return render.Report(w, TopFor(t, f.Parts()), f)
}

// rulesTo writes the rule table in format f.
func rulesTo(w io.Writer, rules []*rules.Rule, f render.Format) error {
	return render.Report(w, Rules(rules), f)
}

// write lays out r in format f for o.
func write(t *testing.T, r *report.Report, f render.Format, o render.Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := render.Write(&buf, r, f, o); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, "./diff/present", name, got)
}

// Golden files are named after the command and flags that produce them.
func TestGoldenDiff(t *testing.T) {
	for _, f := range render.Tables {
		var buf bytes.Buffer
		if err := diffTo(&buf, dotnetResult(t, diff.Options{}), f); err != nil {
			t.Fatal(err)
		}
		golden(t, "diff.dotnet."+string(f)+".golden", buf.Bytes())
	}
	var buf bytes.Buffer
	if err := diffTo(&buf, dotnetResult(t, diff.Options{By: result.ByDecider, Cum: false, Top: 6}), render.Markdown); err != nil {
		t.Fatal(err)
	}
	golden(t, "diff.dotnet.by-decider.top6.markdown.golden", buf.Bytes())
}

func TestGoldenTop(t *testing.T) {
	for _, f := range render.Tables {
		var buf bytes.Buffer
		if err := topTo(&buf, dotnetTop(t), f); err != nil {
			t.Fatal(err)
		}
		golden(t, "top.dotnet-net11.top8."+string(f)+".golden", buf.Bytes())
	}
}

func TestGoldenRules(t *testing.T) {
	all := rules.Default().Rules
	var goRules []*rules.Rule
	for _, r := range all {
		if r.Runtime == "go" {
			goRules = append(goRules, r)
		}
	}
	for _, f := range []render.Format{render.Markdown, render.CSV} {
		var buf bytes.Buffer
		if err := rulesTo(&buf, goRules, f); err != nil {
			t.Fatal(err)
		}
		golden(t, "rules.go."+string(f)+".golden", buf.Bytes())
	}
}

// The JSON output keeps the schema in DESIGN.md: these keys with these
// meanings.
func TestJSONSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := diffTo(&buf, dotnetResult(t, diff.Options{}), render.JSON); err != nil {
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
	if len(doc.Buckets) != rules.NumBuckets || doc.Buckets[2].Bucket != "lock-contention" {
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
	if err := diffTo(&buf, dotnetResult(t, diff.Options{Top: -1}), render.CSV); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+rules.NumBuckets+15 {
		t.Errorf("%d records, want header + 6 buckets + 15 methods", len(recs))
	}
}
