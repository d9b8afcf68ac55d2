package render

import (
	"bytes"
	_ "embed"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/profdiff/profdiff/diff/internal/stop"
	"github.com/profdiff/profdiff/diff/report"
)

// The html format is one self-contained page: its style and script
// (page/page.css, page/page.js, embedded) are written inline and nothing
// is fetched, so the file works offline from file://. The page holds, in
// order, the title, the verdict, the warnings and every block shown in
// Markdown or HTML; tables are sortable (by each cell's raw value, in a
// data-v attribute) and, above filterRows rows, filterable; a flame graph
// is its data as JSON (flameData, html_flame.go) drawn by the script.

//go:embed page/page.css
var pageCSS string

//go:embed page/page.js
var pageJS string

// filterRows is the row count above which a table gets a filter box.
const filterRows = 10

// writeHTML writes the html format.
func writeHTML(w io.Writer, r *report.Report, o Options) error {
	ew := &errWriter{w: w}
	// The first heading is the page's title (and its h1), not repeated.
	title, first := "profdiff report", -1
	if r.Title != "" {
		title = r.Title
	}
	for i, b := range r.Blocks {
		if h, ok := b.(report.Heading); ok && b.In(report.Markdown) {
			title, first = plainLine(h.Line), i
			break
		}
	}
	ew.printf("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	ew.printf("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	ew.printf("<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", html.EscapeString(title), pageCSS)
	ew.printf("<h1>%s</h1>\n", html.EscapeString(title))
	if v := r.Verdict; v != nil && len(v.Lines) > 0 {
		ew.printf("<div class=\"verdict%s\" id=\"verdict\"><b>Verdict:</b>", toneClass(v.Tone))
		for _, l := range v.Lines {
			ew.printf(" %s", htmlLine(l))
		}
		ew.printf("</div>\n")
	}
	if len(r.Warnings) > 0 {
		ew.printf("<ul class=\"warnings\" id=\"warnings\">\n")
		for _, s := range r.Warnings {
			ew.printf("<li>%s</li>\n", html.EscapeString(s))
		}
		ew.printf("</ul>\n")
	}
	flames := 0
	for i, b := range r.Blocks {
		if i == first || !b.In(report.Markdown) && !b.In(report.HTML) {
			continue
		}
		switch b := b.(type) {
		case report.Heading:
			lv := min(max(b.Level, 1)+1, 6) // h1 is the page's title
			ew.printf("<h%d>%s</h%d>\n", lv, htmlLine(b.Line), lv)
		case report.Para:
			ew.printf("<p>")
			for i, l := range b.Lines {
				if i > 0 {
					ew.printf("<br>\n")
				}
				ew.printf("%s", htmlLine(l))
			}
			ew.printf("</p>\n")
		case *report.Table:
			htmlTable(ew, b)
		case *report.Chart:
			if ew.err == nil {
				ew.err = chartSVG(ew, b)
			}
		case *report.Flame:
			flames++
			if ew.err == nil {
				ew.err = writeFlame(ew, b, fmt.Sprintf("flame%d", flames), stop.New(o.Context))
			}
		}
	}
	ew.printf("<script>\n%s</script>\n</body>\n</html>\n", pageJS)
	return ew.err
}

// toneClass is the class attribute suffix of a tone (" grew", …).
func toneClass(t report.Tone) string {
	switch t {
	case report.ToneFail:
		return " fail"
	case report.ToneGrowth:
		return " grew"
	case report.ToneShrink:
		return " shrank"
	case report.ToneNew:
		return " new"
	}
	return ""
}

// htmlLine is a line as Markdown shows it (its cells' Markdown forms,
// bold runs), in HTML: escaped, code cells as <code>.
func htmlLine(l report.Line) string {
	var b strings.Builder
	for _, c := range l {
		b.WriteString(htmlCell(c))
	}
	return b.String()
}

func htmlCell(c report.Cell) string {
	var s string
	switch {
	case c.Markdown != nil:
		return htmlLine(c.Markdown)
	case c.Kind == report.KindCode:
		s = "<code>" + html.EscapeString(c.Text) + "</code>"
	case c.Kind == report.KindGroup:
		parts := make([]string, len(c.Parts))
		for i, p := range c.Parts {
			parts[i] = htmlCell(p)
		}
		s = strings.Join(parts, " · ")
	default:
		s = html.EscapeString(human(c, report.HTML))
	}
	if c.Tone != report.ToneNone {
		s = "<span class=\"" + strings.TrimSpace(toneClass(c.Tone)) + "\">" + s + "</span>"
	}
	if c.Strong {
		s = "<b>" + s + "</b>"
	}
	if c.Link != "" && chartLink(c.Link) {
		s = "<a href=\"" + html.EscapeString(c.Link) + "\">" + s + "</a>"
	}
	return s
}

// plainLine is a line's text without markup, for the page's title.
func plainLine(l report.Line) string {
	var b strings.Builder
	for _, c := range l {
		b.WriteString(human(c, report.HTML))
	}
	return b.String()
}

// htmlTable writes a table: numeric cells carry their raw value (data-v)
// for sorting; a long table gets a filter box.
func htmlTable(ew *errWriter, t *report.Table) {
	ew.printf("<div class=\"table\">\n")
	if len(t.Rows) > filterRows {
		ew.printf("<div class=\"filter\"><input type=\"search\" placeholder=\"filter rows (regexp)\"> <span class=\"count\">%d of %d rows</span></div>\n", len(t.Rows), len(t.Rows))
	}
	ew.printf("<table class=\"sortable\">\n<thead><tr>")
	for _, c := range t.Columns {
		cls := ""
		if c.Align == report.AlignRight {
			cls = " class=\"num\""
		}
		ew.printf("<th%s>%s</th>", cls, html.EscapeString(c.Name))
	}
	ew.printf("</tr></thead>\n<tbody>\n")
	var b bytes.Buffer
	for _, row := range t.Rows {
		b.WriteString("<tr>")
		for i, c := range row {
			attr := ""
			if i < len(t.Columns) && t.Columns[i].Align == report.AlignRight {
				attr = " class=\"num\""
			}
			if v, ok := sortValue(c); ok {
				attr += " data-v=\"" + v + "\""
			}
			b.WriteString("<td" + attr + ">" + htmlCell(c) + "</td>")
		}
		b.WriteString("</tr>\n")
	}
	ew.printf("%s</tbody>\n</table>\n</div>\n", b.Bytes())
}

// sortValue is a cell's raw value for sorting, when it is a number.
func sortValue(c report.Cell) (string, bool) {
	switch c.Kind {
	case report.KindText, report.KindCode, report.KindNone, report.KindPhrase:
		return "", false
	case report.KindGroup:
		if len(c.Parts) == 0 {
			return "", false
		}
		return sortValue(c.Parts[0])
	}
	return raw(c), true
}
