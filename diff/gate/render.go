package gate

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/profdiff/profdiff/diff/render"
)

// Render writes r in format f: a terminal table, a Markdown summary ready
// for a pull-request comment or a GitHub step summary, CSV or JSON. The
// text formats list the frames behind each failed check.
func Render(w io.Writer, r *Report, f render.Format) error {
	switch f {
	case render.Table:
		return text(w, r, false)
	case render.Markdown:
		return text(w, r, true)
	case render.CSV:
		return writeCSV(w, r)
	case render.JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return fmt.Errorf("unknown format %q", f)
}

// PValue formats a p-value for a table: "0.008", "<0.001", or "n/a" when
// no test was run.
func PValue(p *float64) string {
	switch {
	case p == nil:
		return "n/a"
	case *p < 0.001:
		return "<0.001"
	}
	return strconv.FormatFloat(*p, 'f', 3, 64)
}

// DeltaCell is the Δ column: the merged growth in percentage points, and
// for a relative threshold also the growth relative to base ("new" when
// the base share is zero).
func DeltaCell(c CheckResult) string {
	s := render.PP(c.Delta)
	if c.Threshold.Relative {
		switch {
		case c.Relative != nil:
			s += " (" + signedPct(*c.Relative) + ")"
		case c.New > 0:
			s += " (new)"
		}
	}
	return s
}

func signedPct(f float64) string {
	s := strconv.FormatFloat(f*100, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + "%"
}

func verdictCell(v Verdict, md bool) string {
	switch v {
	case Fail:
		if md {
			return "**FAIL**"
		}
		return "FAIL"
	case Noise:
		return "pass (not significant)"
	}
	return "pass"
}

func headline(r *Report) string {
	n := len(r.Checks)
	if r.Verdict == Fail {
		return fmt.Sprintf("FAIL (%d of %d %s failed)", r.Failed, n, plural(n, "check", "checks"))
	}
	return fmt.Sprintf("pass (%d %s)", n, plural(n, "check", "checks"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sources(s []string, md bool) string {
	q := func(x string) string {
		if md {
			return render.MarkdownCode(x)
		}
		return x
	}
	if len(s) <= 3 {
		out := make([]string, len(s))
		for i, x := range s {
			out[i] = q(x)
		}
		return strings.Join(out, ", ")
	}
	return fmt.Sprintf("%s, %s and %d more", q(s[0]), q(s[1]), len(s)-2)
}

func method(r *Report) string {
	alpha := strconv.FormatFloat(r.Alpha, 'g', -1, 64)
	if r.Mode == ModeMerged {
		return "no significance test (too few profiles): the merged sides are compared with the thresholds alone"
	}
	n := len(r.Checks)
	return fmt.Sprintf("each profile is one observation: one-sided Mann–Whitney U test per check, p Holm-adjusted over %d %s; a check fails when its growth exceeds the threshold and p ≤ %s",
		n, plural(n, "check", "checks"), alpha)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}

func text(w io.Writer, r *Report, md bool) error {
	bw := &errWriter{w: w}
	if md {
		bw.printf("### profdiff gate: %s\n\n", headline(r))
		bw.printf("Base: %d %s (%s), %d samples. New: %d %s (%s), %d samples. Sample type `%s`, kind `%s`.\n\n",
			r.Base.Profiles, plural(r.Base.Profiles, "profile", "profiles"), sources(r.Base.Sources, true), r.Base.Samples,
			r.New.Profiles, plural(r.New.Profiles, "profile", "profiles"), sources(r.New.Sources, true), r.New.Samples,
			r.SampleType, r.Kind)
	} else {
		bw.printf("profdiff gate: %s\n", headline(r))
		bw.printf("base: %d %s (%s), %d samples\n", r.Base.Profiles, plural(r.Base.Profiles, "profile", "profiles"), sources(r.Base.Sources, false), r.Base.Samples)
		bw.printf("new:  %d %s (%s), %d samples\n", r.New.Profiles, plural(r.New.Profiles, "profile", "profiles"), sources(r.New.Sources, false), r.New.Samples)
		bw.printf("sample type %s, kind %s\n\n", r.SampleType, r.Kind)
	}
	if bw.err != nil {
		return bw.err
	}
	right, left := tw.AlignRight, tw.AlignLeft
	t := render.NewTable(w, md, []string{"Check", "base", "new", "Δ", "threshold", "p", "verdict"},
		[]tw.Align{left, right, right, right, right, right, left})
	for _, c := range r.Checks {
		name := c.Check
		if md {
			name = render.MarkdownCode(c.Name)
			if c.Target == TargetMethod {
				name = "method " + name
			}
		}
		if err := t.Append([]string{name, render.Pct(c.Base), render.Pct(c.New), DeltaCell(c), c.Threshold.String(), PValue(c.P), verdictCell(c.Verdict, md)}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if md {
		bw.printf("\n%s.\n", upperFirst(method(r)))
	} else {
		bw.printf("%s\n", method(r))
	}
	for _, c := range r.Checks {
		if c.Behind == nil {
			continue
		}
		if md {
			bw.printf("\n#### Behind %s (%s, threshold %s)\n\n", render.MarkdownCode(c.Check), render.PP(c.Delta), c.Threshold)
		} else {
			bw.printf("\nbehind %s (%s, threshold %s):\n", c.Check, render.PP(c.Delta), c.Threshold)
		}
		if bw.err != nil {
			return bw.err
		}
		for i, part := range []struct {
			head   string
			frames []Frame
		}{
			{"Frame that decided the bucket", c.Behind.Deciders},
			{"Caller (nearest program frame)", c.Behind.Callers},
		} {
			if i > 0 {
				bw.printf("\n")
			}
			ft := render.NewTable(w, md, []string{part.head, "base", "new", "Δ"}, []tw.Align{left, right, right, right})
			for _, f := range part.frames {
				name := f.Name
				if md {
					name = render.MarkdownCode(name)
				}
				if err := ft.Append([]string{name, render.Pct(f.Base), render.Pct(f.New), render.PP(f.Delta)}); err != nil {
					return err
				}
			}
			if err := ft.Render(); err != nil {
				return err
			}
		}
	}
	return bw.err
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// raw prints a number for CSV: shortest exact representation.
func raw(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func rawP(p *float64) string {
	if p == nil {
		return ""
	}
	return raw(*p)
}

func writeCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"section", "check", "name", "threshold", "base", "new", "delta", "p", "p_raw", "verdict"})
	for _, c := range r.Checks {
		_ = cw.Write([]string{"check", c.Check, c.Name, c.Threshold.String(), raw(c.Base), raw(c.New), raw(c.Delta), rawP(c.P), rawP(c.PRaw), string(c.Verdict)})
	}
	for _, c := range r.Checks {
		if c.Behind == nil {
			continue
		}
		for _, part := range []struct {
			section string
			frames  []Frame
		}{{"decider", c.Behind.Deciders}, {"caller", c.Behind.Callers}} {
			for _, f := range part.frames {
				_ = cw.Write([]string{part.section, c.Check, f.Name, "", raw(f.Base), raw(f.New), raw(f.Delta), "", "", ""})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
