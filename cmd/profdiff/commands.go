package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/profdiff/profdiff/profile"
)

// env is what a command reads and writes besides its arguments.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// runFunc runs a command once its flags are parsed; args are the
// positional arguments left.
type runFunc func(ctx context.Context, e env, args []string) error

// A command is one entry of the command table. The usage text, 'profdiff
// help [COMMAND]', 'profdiff COMMAND --help' and the unknown-command
// message are all made from the table.
type command struct {
	// name as typed; a command with subcommands ("workload json",
	// "workload wasm") is one entry per subcommand.
	name string
	// lines are the command's lines in the usage text: a synopsis and a
	// one-line summary each.
	lines []usageLine
	// synopsis is what 'profdiff help NAME' prints above the flags.
	synopsis string
	// flags registers the command's flags on fs and returns the function
	// that runs the command with them.
	flags func(fs *flag.FlagSet) runFunc
}

type usageLine struct{ synopsis, summary string }

// commands is the command table, in the order of the usage text.
func commands() []*command {
	return []*command{
		{"diff", []usageLine{
			{"diff [flags] BASE NEW", "compare two profiles"},
			{"diff [flags] --base A --new B", "several profiles per side (repeat the flags)"},
		}, diffSynopsis, diffCommand},
		{"top", one("top [flags] PROFILE...", "one profile (or several, merged): buckets and top methods"), topSynopsis, topCommand},
		{"series", one("series [flags] NAME=SRC...", "a series of steps: the step where each change appeared"), seriesSynopsis, seriesCommand},
		{"gate", one("gate [flags] --base A --new B", "CI gate: exit 1 when lock contention (or wait, gc...) grew significantly"), gateSynopsis, gateCommand},
		{"wait", []usageLine{
			{"wait [flags] PROFILE...", "who made it wait: lock holders beside waiters, wake-ups, critical paths"},
			{"wait [flags] --base A --new B", "the same, compared"},
		}, waitSynopsis, waitCommand},
		{"symbolize", one("symbolize [flags] PROFILE -o OUT", "name address-only frames (--symbols FILE|DIR), write pprof"), symbolizeSynopsis, symbolizeCommand},
		{"rules", one("rules [--format F] [--rules F]", "print the classification rules"), rulesSynopsis, rulesCommand},
		{"formats", one("formats [--format F]", "the input formats: how to record each, its kinds, what it cannot tell"), formatsSynopsis, formatsCommand},
		{"demo", one("demo", "run the built-in JSON server with and without a global lock, diff them"), demoSynopsis, demoCommand},
		{"workload json", one("workload json [flags]", "run the built-in JSON server at several core counts: scaling table + captures"), workloadJSONSynopsis, workloadJSONCommand},
		{"workload wasm", one("workload wasm [flags]", "run the Wasm plugin host: keep-resident sweep, loop vs concurrent load"), workloadWasmSynopsis, workloadWasmCommand},
		{"load", one("load [flags] URL", "closed-loop HTTP load, like wrk: requests/s, latency, errors"), loadSynopsis, loadCommand},
		{"sources", one("sources SERVER", "list a Pyroscope or Parca server's profile types and labels"), sourcesSynopsis, sourcesCommand},
		{"capture", one("capture URL --out DIR", "pull cpu, wall, mutex, block, goroutine and trace from a live server"), captureSynopsis, captureCommand},
		{"version", one("version", "the version and VCS revision it was built from (also --version)"), "  profdiff version\n  profdiff --version\n", versionCommand},
		{"help", one("help [COMMAND]", "this text, or a command's flags (also COMMAND --help)"), "  profdiff help [COMMAND]\n", helpCommand},
	}
}

// one is a command's single line in the usage text.
func one(synopsis, summary string) []usageLine { return []usageLine{{synopsis, summary}} }

const (
	topSynopsis          = "  profdiff top [flags] PROFILE [PROFILE ...]\n"
	rulesSynopsis        = "  profdiff rules [--format table|markdown|csv|json|html] [--runtime go] [--rules FILE]\n"
	demoSynopsis         = "  profdiff demo [--duration 3s] [--cores N]\n"
	workloadJSONSynopsis = "  profdiff workload json [--variant baseline|global-lock|sharded|gc|gc-lock] [--cores 1,2,4,8] [--duration 5s]\n"
	workloadWasmSynopsis = "  profdiff workload wasm [--mode loop,concurrent] [--keep-resident 0,64KiB,256KiB,1MiB,2MiB] [--touch 16KiB,1MiB] [--modules 1,8] [--connections 16] [--pool-size N]\n"
)

const usageHead = `profdiff compares profiles by how programs wait.

Usage:
`

// usageSources is the paragraph of the usage that says what a profile
// argument may be, its list of formats from the format registry.
func usageSources() string {
	return "A profile is a file of a format profdiff reads (" + profile.ReadsList() +
		"; 'profdiff formats' says how to record each), gzipped or not, or alone in a .zip; " +
		`"-" for standard input; an http(s) URL of a /debug/pprof endpoint; or a query of a continuous profiler, merged on its server: ` +
		`'pyroscope+http://HOST:4040?type=T&query={...}&from=now-1h&to=now' or 'parca+http://HOST:7070?query=T{...}&from=...&to=...' (see 'profdiff sources'). ` +
		"A folder written by 'profdiff capture --out DIR' (or by demo and workload) stands for its profile of --kind's kind. " +
		"The format is detected from the content."
}

const usageTail = `
Run 'profdiff COMMAND --help' for a command's flags.
Exit status: 0 ok, 1 gate failed, 2 usage or input error, 130 SIGINT,
143 SIGTERM.
`

// usageText is the top-level usage: every command's lines from the table.
func usageText() string {
	var b strings.Builder
	b.WriteString(usageHead)
	for _, c := range commands() {
		for _, l := range c.lines {
			// The summary wraps under itself to fit 80 columns.
			summary := strings.Join(wrapWords(l.summary, 80-44), "\n"+strings.Repeat(" ", 44))
			fmt.Fprintf(&b, "  %-42s%s\n", "profdiff "+l.synopsis, summary)
		}
	}
	b.WriteString("\n" + strings.Join(wrapWords(usageSources(), 76), "\n") + "\n")
	b.WriteString(usageTail)
	return b.String()
}

// commandNames lists the names users type first, in table order
// ("workload" once).
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		first, _, _ := strings.Cut(c.name, " ")
		if len(names) == 0 || names[len(names)-1] != first {
			names = append(names, first)
		}
	}
	return names
}

// lookup finds the command args start with. A name with subcommands
// ("workload") takes the subcommand that is its first positional argument
// once its flags are parsed (flags may come first), else one named
// anywhere among the arguments, else its first.
func lookup(args []string) (*command, error) {
	var subs []*command
	for _, c := range commands() {
		if c.name == args[0] {
			return c, nil
		}
		if first, _, ok := strings.Cut(c.name, " "); ok && first == args[0] {
			subs = append(subs, c)
		}
	}
	if len(subs) == 0 {
		return nil, unknownCommand(args[0])
	}
	for _, c := range subs {
		fs, _ := c.flagSet(io.Discard)
		if fs.Parse(args[1:]) == nil && c.name == args[0]+" "+fs.Arg(0) {
			return c, nil
		}
	}
	for _, c := range subs {
		_, sub, _ := strings.Cut(c.name, " ")
		if slices.Contains(args[1:], sub) {
			return c, nil
		}
	}
	return subs[0], nil
}

// unknownCommand says so, suggests the nearest command, and lists them all.
func unknownCommand(name string) error {
	names := commandNames()
	if s := nearest(name, names); s != "" {
		return usagef("unknown command %q; did you mean %s? (commands: %s)", name, s, strings.Join(names, ", "))
	}
	return usagef("unknown command %q (commands: %s)", name, strings.Join(names, ", "))
}

// nearest returns the name that name most likely misspells: among the
// names it is a prefix of (or that are a prefix of it), else among those
// at most two letters (or a third of a longer name) away, the closest by
// edit distance, the first of equals; "" when none is near.
func nearest(name string, names []string) string {
	name = strings.ToLower(name)
	best, bestD, bestPrefix := "", 0, false
	for _, n := range names {
		d := editDistance(name, n)
		prefix := len(name) >= 2 && (strings.HasPrefix(n, name) || strings.HasPrefix(name, n))
		if !prefix && d > max(2, len(n)/3) || bestPrefix && !prefix {
			continue
		}
		if best == "" || prefix && !bestPrefix || d < bestD {
			best, bestD, bestPrefix = n, d, prefix
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (in bytes;
// command names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// flagSet makes the command's flag set, writing errors and --help to w,
// and registers the command's flags on it.
func (c *command) flagSet(w io.Writer) (*flag.FlagSet, runFunc) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.SortFlags = false
	fs.Usage = func() { c.writeHelp(w, fs) }
	return fs, c.flags(fs)
}

// run parses the command's flags from args and runs it. --help prints
// the command's help on stdout. A usage error is marked as this command's,
// so that its message points at 'profdiff COMMAND --help'.
func (c *command) run(ctx context.Context, e env, args []string) error {
	fs, run := c.flagSet(e.stdout)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return errHelp
	case err != nil:
		err = flagError(fs, err)
	default:
		err = run(ctx, e, fs.Args())
	}
	var ue *usageError
	if errors.As(err, &ue) && ue.cmd == "" && c.name != "help" {
		ue.cmd = c.name
	}
	return err
}

var errHelp = errors.New("help requested")

// helpCommand is 'profdiff help [COMMAND]': the usage text, or the
// command's synopsis and flags, on stdout.
func helpCommand(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, e env, args []string) error {
		if len(args) == 0 {
			fmt.Fprint(e.stdout, usageText())
			return nil
		}
		name := strings.Join(args, " ")
		var found []*command
		for _, c := range commands() {
			if c.name == name || strings.HasPrefix(c.name, name+" ") {
				found = append(found, c)
			}
		}
		if len(found) == 0 {
			return unknownCommand(name)
		}
		for i, c := range found {
			if i > 0 {
				fmt.Fprintln(e.stdout)
			}
			cfs, _ := c.flagSet(e.stdout)
			cfs.Usage()
		}
		return nil
	}
}
