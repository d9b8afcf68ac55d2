// Package render turns analysis results into every output format profdiff
// writes: terminal tables, GitHub-flavoured Markdown, CSV and JSON. Renderers
// only lay out numbers that package diff computed; they never compute.
//
// Shares are printed as percentages with two decimals, deltas in percentage
// points (pp). A delta within sampling noise is followed by "~" in the text
// formats and flagged `noisy` in CSV and JSON. Scheduler latency (runnable
// time in a Go execution trace) is a line of its own under the bucket
// table, a "sched" row in CSV and "sched_latency" in JSON, never a bucket.
package render

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/profdiff/profdiff/diff"
)

// Format is an output format.
type Format string

const (
	Table    Format = "table"
	Markdown Format = "markdown"
	CSV      Format = "csv"
	JSON     Format = "json"
)

// Formats lists the formats in help order.
var Formats = []Format{Table, Markdown, CSV, JSON}

// ParseFormat validates a --format value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q (want table, markdown, csv or json)", s)
}

// Pct formats a share (fraction 0..1) as a percentage: 0.0486 → "4.86%".
func Pct(f float64) string {
	return strconv.FormatFloat(f*100, 'f', 2, 64) + "%"
}

// PP formats a share delta in percentage points with its sign: "+4.59pp".
func PP(d float64) string {
	s := strconv.FormatFloat(d*100, 'f', 2, 64)
	if s == "-0.00" || s == "0.00" {
		return "0.00pp"
	}
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + "pp"
}

// Pct1 formats a share with one decimal, for summary lines: "80.4%".
func Pct1(f float64) string {
	return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}

func deltaCell(d float64, noisy bool, note string) string {
	s := PP(d)
	if noisy {
		s += " ~"
	}
	if note != "" {
		s += " (" + note + ")"
	}
	return s
}

// Diff writes r in format f.
func Diff(w io.Writer, r *diff.Result, f Format) error {
	switch f {
	case Table:
		return diffText(w, r, false)
	case Markdown:
		return diffText(w, r, true)
	case CSV:
		return diffCSV(w, r)
	case JSON:
		return writeJSON(w, r)
	}
	return fmt.Errorf("unknown format %q", f)
}

// Top writes t in format f.
func Top(w io.Writer, t *diff.TopResult, f Format) error {
	switch f {
	case Table:
		return topText(w, t, false)
	case Markdown:
		return topText(w, t, true)
	case CSV:
		return topCSV(w, t)
	case JSON:
		return writeJSON(w, t)
	}
	return fmt.Errorf("unknown format %q", f)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// NewTable returns a table for the terminal (box drawing) or Markdown
// (pipes), with headers kept as written and no wrapping, since wrapped
// method names cannot be pasted into an issue. Every profdiff table is made
// here, so all of them look alike.
func NewTable(w io.Writer, md bool, header []string, align []tw.Align) *tablewriter.Table {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	}
	if md {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	return t
}

// code wraps a method name for Markdown so `*` and `_` in names such as
// `sync.(*Mutex).Lock` are not read as emphasis.
func code(s string, md bool) string {
	if !md {
		return s
	}
	return MarkdownCode(s)
}

// MarkdownCode writes a name as a Markdown code span that is safe in a
// table cell.
func MarkdownCode(s string) string {
	s = strings.ReplaceAll(s, "`", "'")
	// GitHub ends a table cell at '|' even inside a code span; '\|' is the
	// escape it honours there.
	s = strings.ReplaceAll(s, "|", `\|`)
	return "`" + s + "`"
}

func kindPhrase(k string) string {
	switch k {
	case "cpu":
		return "CPU profile: buckets are CPU time spent in each kind of machinery"
	case "wall":
		return "wall-clock profile: buckets are time spent in each state"
	case "mutex":
		return "mutex profile: every sample is lock contention, recorded at the unlocker"
	case "block":
		return "block profile: off-CPU time split into lock contention and wait"
	case "goroutine":
		return "goroutine profile: goroutine counts per state"
	case "heap":
		return "heap profile: buckets are not time"
	case "trace":
		return "execution trace: time per state"
	}
	return "kind unknown: frame rules applied as for wall-clock time"
}

func sourcesLabel(s []string) string {
	if len(s) <= 3 {
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%s, %s and %d more", s[0], s[1], len(s)-2)
}

func diffText(w io.Writer, r *diff.Result, md bool) error {
	bw := &errWriter{w: w}
	sb, sn := r.SyncShare()
	mode := "self"
	if r.Cum {
		mode = "inclusive"
	}
	if md {
		bw.printf("### profdiff: %s → %s\n\n", sourcesLabel(r.Base.Sources), sourcesLabel(r.New.Sources))
		bw.printf("**Total wait/synchronization: %s → %s** (%s)\n\n", Pct1(sb), Pct1(sn), PP(sn-sb))
		bw.printf("Sample type `%s`, %s. Base: %d samples; new: %d samples. Methods by %s, %s shares.\n\n",
			r.SampleType, kindPhrase(string(r.Kind)), r.Base.Samples, r.New.Samples, r.By, mode)
	} else {
		bw.printf("base: %s (%d samples)\nnew:  %s (%d samples)\n", sourcesLabel(r.Base.Sources), r.Base.Samples, sourcesLabel(r.New.Sources), r.New.Samples)
		bw.printf("sample type %s; %s\n", r.SampleType, kindPhrase(string(r.Kind)))
		bw.printf("Total wait/synchronization: %s → %s (%s)\n\n", Pct1(sb), Pct1(sn), PP(sn-sb))
	}
	if bw.err != nil {
		return bw.err
	}
	right := tw.AlignRight
	bt := NewTable(w, md, []string{"Bucket", "base", "new", "Δ"}, []tw.Align{tw.AlignLeft, right, right, right})
	for _, b := range r.Buckets {
		if err := bt.Append([]string{b.Bucket.String(), Pct(b.Base), Pct(b.New), deltaCell(b.Delta, b.Noisy, "")}); err != nil {
			return err
		}
	}
	if err := bt.Render(); err != nil {
		return err
	}
	if sr := r.Sched; sr != nil {
		bw.printf("\n%s: %s → %s (%s) of all goroutine time; not in the buckets above\n",
			schedTitle(md), Pct(sr.Base), Pct(sr.New), PP(sr.Delta))
	}
	bw.printf("\n")
	mt := NewTable(w, md, []string{"Method", "base", "new", "Δ", "Bucket"}, []tw.Align{tw.AlignLeft, right, right, right, tw.AlignLeft})
	for _, m := range r.Methods {
		if err := mt.Append([]string{code(m.Name, md), Pct(m.Base), Pct(m.New), deltaCell(m.Delta, m.Noisy, m.Note), m.Bucket.String()}); err != nil {
			return err
		}
	}
	if err := mt.Render(); err != nil {
		return err
	}
	if hasNoisy(r) {
		bw.printf("\n~ marks a delta within two standard errors of sampling noise.\n")
	}
	return bw.err
}

// schedTitle names scheduler latency, the time goroutines spent runnable
// (Go execution traces), which is reported beside the buckets.
func schedTitle(md bool) string {
	if md {
		return "**Scheduler latency (runnable)**"
	}
	return "Scheduler latency (runnable)"
}

func hasNoisy(r *diff.Result) bool {
	for _, b := range r.Buckets {
		if b.Noisy {
			return true
		}
	}
	for _, m := range r.Methods {
		if m.Noisy {
			return true
		}
	}
	return false
}

func topText(w io.Writer, t *diff.TopResult, md bool) error {
	bw := &errWriter{w: w}
	if md {
		bw.printf("### profdiff top: %s\n\n", sourcesLabel(t.Sources))
		bw.printf("**Total wait/synchronization: %s**\n\n", Pct1(t.SyncShare()))
		bw.printf("Sample type `%s`, %s. %d samples, total %s %s.\n\n", t.SampleType, kindPhrase(string(t.Kind)), t.Samples, num(t.Total), t.Unit)
	} else {
		bw.printf("profile: %s (%d samples, total %s %s)\n", sourcesLabel(t.Sources), t.Samples, num(t.Total), t.Unit)
		bw.printf("sample type %s; %s\n", t.SampleType, kindPhrase(string(t.Kind)))
		bw.printf("Total wait/synchronization: %s\n\n", Pct1(t.SyncShare()))
	}
	if bw.err != nil {
		return bw.err
	}
	right := tw.AlignRight
	bt := NewTable(w, md, []string{"Bucket", "share", "value"}, []tw.Align{tw.AlignLeft, right, right})
	for _, b := range t.Buckets {
		if err := bt.Append([]string{b.Bucket.String(), Pct(b.Share), num(b.Value)}); err != nil {
			return err
		}
	}
	if err := bt.Render(); err != nil {
		return err
	}
	if ts := t.Sched; ts != nil {
		bw.printf("\n%s: %s of all goroutine time (%s %s); not in the buckets above\n",
			schedTitle(md), Pct(ts.Share), num(ts.Value), t.Unit)
	}
	bw.printf("\n")
	mt := NewTable(w, md, []string{"Method", "share", "value", "Bucket"}, []tw.Align{tw.AlignLeft, right, right, tw.AlignLeft})
	for _, m := range t.Methods {
		if err := mt.Append([]string{code(m.Name, md), Pct(m.Share), num(m.Value), m.Bucket.String()}); err != nil {
			return err
		}
	}
	if err := mt.Render(); err != nil {
		return err
	}
	return bw.err
}

// num prints a raw value compactly and exactly enough to read: integers as
// integers, others with up to 6 significant digits.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// raw prints a number for CSV: shortest exact representation.
func raw(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func diffCSV(w io.Writer, r *diff.Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"section", "name", "bucket", "base", "new", "delta", "base_value", "new_value", "note", "noisy"})
	for _, b := range r.Buckets {
		_ = cw.Write([]string{"bucket", b.Bucket.String(), b.Bucket.String(), raw(b.Base), raw(b.New), raw(b.Delta), "", "", "", strconv.FormatBool(b.Noisy)})
	}
	if sr := r.Sched; sr != nil {
		_ = cw.Write([]string{"sched", "scheduler-latency", "", raw(sr.Base), raw(sr.New), raw(sr.Delta), raw(sr.BaseValue), raw(sr.NewValue), "runnable; share of all goroutine time, not in the buckets", "false"})
	}
	for _, m := range r.Methods {
		_ = cw.Write([]string{"method", m.Name, m.Bucket.String(), raw(m.Base), raw(m.New), raw(m.Delta), raw(m.BaseValue), raw(m.NewValue), m.Note, strconv.FormatBool(m.Noisy)})
	}
	cw.Flush()
	return cw.Error()
}

func topCSV(w io.Writer, t *diff.TopResult) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"section", "name", "bucket", "share", "value"})
	for _, b := range t.Buckets {
		_ = cw.Write([]string{"bucket", b.Bucket.String(), b.Bucket.String(), raw(b.Share), raw(b.Value)})
	}
	if ts := t.Sched; ts != nil {
		_ = cw.Write([]string{"sched", "scheduler-latency", "", raw(ts.Share), raw(ts.Value)})
	}
	for _, m := range t.Methods {
		_ = cw.Write([]string{"method", m.Name, m.Bucket.String(), raw(m.Share), raw(m.Value)})
	}
	cw.Flush()
	return cw.Error()
}

// Rules writes the rule table: runtime, bucket, strength, pattern, note.
func Rules(w io.Writer, rules []*diff.Rule, f Format) error {
	switch f {
	case JSON:
		type row struct {
			Runtime  string `json:"runtime"`
			Bucket   string `json:"bucket"`
			Strength string `json:"strength"`
			Pattern  string `json:"pattern"`
			Note     string `json:"note"`
			Source   string `json:"source"`
		}
		rows := make([]row, len(rules))
		for i, r := range rules {
			rows[i] = row{r.Runtime, r.BucketName(), r.Modifiers(), r.Pattern, r.Note, r.Source}
		}
		return writeJSON(w, rows)
	case CSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"runtime", "bucket", "strength", "pattern", "note", "source"})
		for _, r := range rules {
			_ = cw.Write([]string{r.Runtime, r.BucketName(), r.Modifiers(), r.Pattern, r.Note, r.Source})
		}
		cw.Flush()
		return cw.Error()
	case Table, Markdown:
		md := f == Markdown
		t := NewTable(w, md, []string{"Runtime", "Bucket", "Strength", "Pattern", "Note"}, []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft})
		for _, r := range rules {
			pat := r.Pattern
			if md {
				pat = code(pat, true)
			}
			if err := t.Append([]string{r.Runtime, r.BucketName(), r.Modifiers(), pat, r.Note}); err != nil {
				return err
			}
		}
		return t.Render()
	}
	return fmt.Errorf("unknown format %q", f)
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
