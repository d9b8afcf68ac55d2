package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
	"github.com/profdiff/profdiff/profile/fleet"
	"github.com/profdiff/profdiff/profile/source"
)

const sourcesSynopsis = "  profdiff sources [--allow-remote] [--timeout 60s] 'pyroscope+http://HOST:4040[?from=now-1h&to=now]'\n" +
	"  profdiff sources 'parca+http://HOST:7070[?from=...&to=...]'\n"

// sourcesCommand is `profdiff sources SERVER`: the profile types and labels
// a Pyroscope or Parca server holds over a range, to write a source's
// type=, query= and selector from.
func sourcesCommand(fs *flag.FlagSet) runFunc {
	var out outputFlags
	var allowRemote bool
	var timeout time.Duration
	out.register(fs, render.Table, render.Markdown, render.JSON)
	fs.BoolVar(&allowRemote, "allow-remote", false, "allow a server that is not on loopback")
	durationVar(fs, &timeout, "timeout", fleet.DefaultTimeout, "time limit of each request to the server")
	return func(ctx context.Context, e env, pos []string) error {
		o, err := out.resolve("sources", e)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return usagef("sources: want one server, e.g. 'pyroscope+http://127.0.0.1:4040' or 'parca+http://127.0.0.1:7070'")
		}
		raw := pos[0]
		if fleet.IsSource(raw) && !strings.Contains(raw, "?") {
			raw += "?"
		}
		s, err := parseServer(raw)
		if err != nil {
			return usagef("sources: %v", err)
		}
		if !allowRemote && !source.IsLoopbackHost(s.Server.Hostname()) {
			return usagef("sources: %s is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to query a remote server", s.Server.Hostname())
		}
		opts := fleet.Options{Timeout: timeout}
		if !allowRemote {
			opts.CheckURL = checkLoopback
		}
		cat, err := fleet.Discover(ctx, s, opts)
		if err != nil {
			return err
		}
		return o.write(e.stdout, sourcesReport(s, cat))
	}
}

// parseServer reads a server with an optional range: the source syntax
// without its query, which a placeholder fills in for the parser.
func parseServer(raw string) (*fleet.Source, error) {
	fill := "type=_:_:_:_:_&"
	if strings.HasPrefix(raw, string(fleet.Parca)+"+") {
		fill = "query=_:_:_:_:_&"
	}
	base, q, _ := strings.Cut(raw, "?")
	for _, p := range strings.Split(q, "&") {
		if k, _, _ := strings.Cut(p, "="); k == "type" || k == "query" || k == "windows" {
			return nil, fmt.Errorf("%s= is a query's; sources takes a server and an optional from= and to=", k)
		}
	}
	return fleet.Parse(base+"?"+fill+q, time.Now())
}

// sourcesReport is the catalog as two tables: the types (each a ready
// type= or query= prefix) and the labels with their values.
func sourcesReport(s *fleet.Source, cat *fleet.Catalog) *report.Report {
	param := "type="
	if s.Backend == fleet.Parca {
		param = "query="
	}
	types := &report.Table{Columns: report.Cols("profile type (" + param + ")")}
	for _, t := range cat.Types {
		types.Rows = append(types.Rows, []report.Cell{report.Text(t)})
	}
	labels := &report.Table{Columns: append(report.Cols("label"), report.RCol("values"), report.Column{Name: "examples"})}
	for _, l := range cat.Labels {
		ex := l.Values
		if len(ex) > 5 {
			ex = append(append([]string(nil), ex[:5]...), "…")
		}
		labels.Rows = append(labels.Rows, []report.Cell{report.Text(l.Name), report.Int(int64(len(l.Values))), report.Text(strings.Join(ex, ", "))})
	}
	head := report.Para{Lines: []report.Line{report.Cat(string(s.Backend), " at ", s.Server.Redacted(), ", ",
		s.From.UTC().Format(time.RFC3339), " to ", s.To.UTC().Format(time.RFC3339), ": ",
		report.Int(int64(len(cat.Types))), " profile types, ", report.Int(int64(len(cat.Labels))), " labels")}}
	return &report.Report{
		Title:  "profdiff sources",
		Blocks: []report.Block{head, types, labels},
		JSON:   cat,
	}
}
