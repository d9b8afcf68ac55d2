package gate

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
)

// JUnitSuite is the JUnit suite's name, and the class name of its test
// cases.
const JUnitSuite = "profdiff gate"

// JUnit writes r as a JUnit XML report, the test-report format GitLab
// (artifacts:reports:junit), Jenkins and most CI systems read: one
// <testsuite> holding one <testcase> per check, in the report's order,
// named after the check (lock-contention, sync, method ~ RE). A failed
// check has a <failure> whose message is its verdict sentence (base and
// new, the growth, the threshold, p, the frames that led it) and whose
// text lists its figures, the per-profile observations and the frames
// behind it; a passing check says the same figures in <system-out>. The
// suite counts tests and failures (errors and skipped are 0: a check that
// cannot be evaluated is an error of the whole gate, which writes no
// report) and takes elapsed as its time; properties carry the mode,
// alpha, sample type, kind and each side's profile count.
func (r *Report) JUnit(w io.Writer, elapsed time.Duration) error {
	secs := strconv.FormatFloat(elapsed.Seconds(), 'f', 3, 64)
	suite := junitSuite{Name: JUnitSuite, Tests: len(r.Checks), Failures: r.Failed, Time: secs}
	for _, p := range [][2]string{
		{"mode", string(r.Mode)},
		{"alpha", strconv.FormatFloat(r.Alpha, 'g', -1, 64)},
		{"sample_type", r.SampleType},
		{"kind", string(r.Kind)},
		{"base_profiles", strconv.Itoa(r.Base.Profiles)},
		{"new_profiles", strconv.Itoa(r.New.Profiles)},
	} {
		suite.Properties = append(suite.Properties, junitProperty{Name: p[0], Value: p[1]})
	}
	for _, c := range r.Checks {
		tc := junitCase{ClassName: JUnitSuite, Name: c.Check, Time: "0"}
		if c.Verdict == Fail {
			tc.Failure = &junitFailure{Type: "threshold exceeded", Message: render.Plain(failedLine(c)), Text: c.junitFigures()}
		} else {
			tc.SystemOut = render.String(verdictCell(c.Verdict)) + ": " + c.junitFigures()
		}
		suite.Cases = append(suite.Cases, tc)
	}
	doc := junitSuites{Name: JUnitSuite, Tests: suite.Tests, Failures: suite.Failures, Time: secs, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitFigures are a check's figures as text: the merged values, growth,
// threshold and p, each profile's observation, and the frames behind a
// failure.
func (c CheckResult) junitFigures() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: base %s, new %s, growth %s, threshold %s", c.Check, render.String(c.value(c.Base)), render.String(c.value(c.New)),
		render.String(deltaCell(c).WithTone(report.ToneNone)), c.Threshold)
	if c.P != nil {
		fmt.Fprintf(&b, ", p %s (unadjusted %s)", render.String(report.P(c.P)), render.String(report.P(c.PRaw)))
	}
	fmt.Fprintf(&b, ", measure %s\n", c.Measure)
	for _, side := range []struct {
		name string
		obs  []float64
	}{{"base", c.BaseProfiles}, {"new", c.NewProfiles}} {
		if len(side.obs) == 0 {
			continue
		}
		s := make([]string, len(side.obs))
		for i, v := range side.obs {
			s[i] = render.String(c.value(v))
		}
		fmt.Fprintf(&b, "%s profiles: %s\n", side.name, strings.Join(s, ", "))
	}
	if c.Behind != nil {
		for _, part := range []struct {
			head   string
			frames []Frame
		}{{"frames that decided the bucket", c.Behind.Deciders}, {"callers (nearest program frame)", c.Behind.Callers}} {
			if len(part.frames) == 0 {
				continue
			}
			fmt.Fprintf(&b, "%s:\n", part.head)
			for _, f := range part.frames {
				fmt.Fprintf(&b, "  %s: %s → %s (%s)\n", render.Plain(report.Line{report.Code(f.Name)}), render.String(c.value(f.Base)),
					render.String(c.value(f.New)), render.String(c.delta(f.Delta)))
			}
		}
	}
	return b.String()
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}
