package main

import (
	"context"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/profile"
)

const formatsSynopsis = "  profdiff formats [--format table|markdown|csv|json|html]\n"

// formatsCommand lists the input formats of the registry, in the order
// their content is tried, with how each is recorded, the kinds its
// profiles can have and what it cannot tell.
func formatsCommand(fs *flag.FlagSet) runFunc {
	var out outputFlags
	out.register(fs, render.Formats...)
	return func(ctx context.Context, e env, pos []string) error {
		o, err := out.resolveNoArgs("formats", e, pos)
		if err != nil {
			return err
		}
		rep := formatsReport(profile.Formats())
		rep.Title = "profdiff formats"
		return o.write(e.stdout, rep)
	}
}

// formatsReport is the format table; JSON keeps the lists as arrays.
func formatsReport(formats []profile.FormatInfo) *report.Report {
	type row struct {
		Format      string   `json:"format"`
		Description string   `json:"description"`
		Record      []string `json:"record"`
		Kinds       []string `json:"kinds"`
		Blind       string   `json:"cannot_tell"`
	}
	rows := make([]row, len(formats))
	table := &report.Table{Columns: report.Cols("Format", "What", "Record with", "Kinds", "Cannot tell")}
	records := &report.Table{Columns: report.Cols("format", "description", "record", "kinds", "cannot_tell")}
	for i, f := range formats {
		kinds := make([]string, len(f.Kinds))
		for j, k := range f.Kinds {
			kinds[j] = string(k)
		}
		rows[i] = row{string(f.Format), f.Description, f.Record, kinds, f.Blind}
		var rec report.Line
		for j, r := range f.Record {
			if j > 0 {
				rec = append(rec, report.Text("; "))
			}
			rec = append(rec, report.Code(r))
		}
		table.Rows = append(table.Rows, []report.Cell{report.Code(string(f.Format)), report.Text(f.Description).Wrapped(),
			report.Phrase(rec).Wrapped(), report.Text(strings.Join(kinds, ", ")), report.Text(f.Blind).Wrapped()})
		records.Rows = append(records.Rows, []report.Cell{report.Text(string(f.Format)), report.Text(f.Description),
			report.Text(strings.Join(f.Record, "; ")), report.Text(strings.Join(kinds, " ")), report.Text(f.Blind)})
	}
	return &report.Report{Blocks: []report.Block{table}, Records: records, JSON: rows}
}
