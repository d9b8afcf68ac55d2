package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/diff/render"
	"github.com/profdiff/profdiff/diff/report"
)

// outputFlags are --format, --width and --color, the same in every command
// that prints a report; formats are the ones its report has.
type outputFlags struct {
	format  string
	width   int
	color   string
	csvRaw  bool
	ghLimit string // --github-limit, for commands with the github format
	wide    bool
	formats []render.Format
	fs      *flag.FlagSet
}

// register registers the flags on fs; the first of formats is the default.
func (o *outputFlags) register(fs *flag.FlagSet, formats ...render.Format) {
	o.fs, o.formats = fs, formats
	fs.StringVar(&o.format, "format", string(formats[0]), "output format: "+formatWords(formats))
	fs.IntVar(&o.width, "width", 0, "fit tables into N columns, shortening long names to their class and method, and wrap messages on stderr to N (default: the terminal's width when stdout is a terminal, else unlimited, and messages to stderr's terminal or 80; 0 is unlimited)")
	fs.BoolVar(&o.wide, "wide", false, "keep names whole in tables (a name too wide for its column wraps) and name input files by their paths as given (JSON and CSV always have them whole)")
	fs.StringVar(&o.color, "color", "auto", "colour failures, new rows and growth in tables: auto (when stdout is a terminal and NO_COLOR is unset), always or never")
	if slices.Contains(formats, render.CSV) {
		fs.BoolVar(&o.csvRaw, "csv-raw", false, "write CSV text cells as they are, even those a spreadsheet would run as a formula (=, +, -, @), which otherwise start with '")
	}
	if slices.Contains(formats, render.GitHub) {
		fs.StringVar(&o.ghLimit, "github-limit", "comment", "most bytes --format github writes: comment (65536, a PR or issue comment), summary (1048576, a job summary) or a number")
	}
}

// output is how a command writes its report: the validated output flags.
type output struct {
	format render.Format
	opts   render.Options
}

// write writes the report r on w.
func (o output) write(w io.Writer, r *report.Report) error {
	return render.Write(w, r, o.format, o.opts)
}

// resolve validates the flags for writing to e.stdout: --width defaults
// to the terminal's width, --color auto to colour on a terminal without
// NO_COLOR. A --width given also fits the messages on e.stderr.
// resolveNoArgs is resolve for a command that takes no arguments (rules,
// formats): a bad format or a stray argument is a usage error.
func (o *outputFlags) resolveNoArgs(cmd string, e env, pos []string) (output, error) {
	out, err := o.resolve(cmd, e)
	if err == nil {
		err = noArgs(cmd, pos)
	}
	return out, err
}

func (o *outputFlags) resolve(cmd string, e env) (output, error) {
	f, err := parseFormatOf(cmd, o.format, o.formats)
	if err != nil {
		return output{}, err
	}
	width, tty := terminalWidth(e.stdout)
	if o.fs.Changed("width") {
		if o.width < 0 {
			return output{}, usagef("%s: --width must be 0 (unlimited) or positive, not %d", cmd, o.width)
		}
		width = o.width
		setWidth(e.stderr, width) // the messages too
	}
	color, err := colorOn(o.color, tty, os.Getenv)
	if err != nil {
		return output{}, usagef("%s: --color: %v%s", cmd, err, didYouMean(o.color, []string{"auto", "always", "never"}))
	}
	limit, err := o.githubLimit(cmd, f)
	if err != nil {
		return output{}, err
	}
	return output{format: f, opts: render.Options{Width: width, Color: color, CSVRaw: o.csvRaw, GitHubLimit: limit, Wide: o.wide}}, nil
}

// githubLimit reads --github-limit: comment, summary or a number of
// bytes, at least render.GitHubMinLimit; given with another format than
// github it is a usage error.
func (o *outputFlags) githubLimit(cmd string, f render.Format) (int, error) {
	if o.fs.Lookup("github-limit") == nil {
		return 0, nil
	}
	if o.fs.Changed("github-limit") && f != render.GitHub {
		return 0, usagef("%s: --github-limit sizes --format github, not --format %s", cmd, f)
	}
	switch strings.ToLower(o.ghLimit) {
	case "comment":
		return render.GitHubCommentLimit, nil
	case "summary":
		return render.GitHubSummaryLimit, nil
	}
	n, err := strconv.Atoi(o.ghLimit)
	if err != nil || n < render.GitHubMinLimit {
		return 0, usagef("%s: --github-limit: %q is not comment, summary or a number of bytes of at least %d", cmd, o.ghLimit, render.GitHubMinLimit)
	}
	return n, nil
}

// colorOn decides --color: always, never, or auto, which colours only a
// terminal and never when the NO_COLOR environment variable is set and not
// empty (https://no-color.org); an explicit always wins over NO_COLOR.
func colorOn(mode string, tty bool, getenv func(string) string) (bool, error) {
	switch strings.ToLower(mode) {
	case "auto":
		return tty && getenv("NO_COLOR") == "", nil
	case "always":
		return true, nil
	case "never":
		return false, nil
	}
	return false, fmt.Errorf("%q is not auto, always or never", mode)
}

// parseFormatOf reads --format, case-insensitively, for a command whose
// report has the formats in have. "text", the load report's old word, is
// table.
func parseFormatOf(cmd, s string, have []render.Format) (render.Format, error) {
	if strings.EqualFold(s, "text") {
		s = string(render.Table)
	}
	f, err := render.ParseFormat(s)
	if err != nil {
		return f, usagef("%s: --format: unknown format %q (want %s)%s", cmd, s, formatWords(have), didYouMean(s, formatNames(have)))
	}
	if !slices.Contains(have, f) {
		return f, usagef("%s: --format: this report has no %s form (want %s)", cmd, f, formatWords(have))
	}
	return f, nil
}

// formatNames is the formats' names, as typed.
func formatNames(fs []render.Format) []string {
	words := make([]string, len(fs))
	for i, f := range fs {
		words[i] = string(f)
	}
	return words
}

// formatWords lists formats as "table, markdown or json".
func formatWords(fs []render.Format) string {
	words := formatNames(fs)
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Formats of the reports that have no CSV form (workload sweeps, load)
// and of capture's (a line, or the manifest as JSON).
var (
	textAndJSON   = []render.Format{render.Table, render.Markdown, render.JSON}
	captureFormat = []render.Format{render.Table, render.JSON}
)
