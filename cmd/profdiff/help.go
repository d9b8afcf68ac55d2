package main

import (
	"fmt"
	"io"
	"strings"

	flag "github.com/spf13/pflag"
)

// helpWidth is the width a command's help wraps to: the terminal's when
// w is one, else 80.
func helpWidth(w io.Writer) int {
	if n, ok := terminalWidth(w); ok && n > 0 {
		return n
	}
	return 80
}

// flagGroups are the groups a command's help lists its flags in, in this
// order; a command's other flags come last, as its own.
var flagGroups = []struct {
	title string
	names []string
}{
	{"Input", []string{"base", "new", "sample-index", "max-size", "allow-remote", "symbols", "keep-profiler", "modules"}},
	{"Classification", []string{"kind", "rules", "runtime", "by", "cum", "focus", "ignore", "normalize", "peek"}},
	{"Output", []string{"format", "width", "wide", "color", "csv-raw", "top", "side", "output-pprof"}},
}

// examples are a command line per command that its help shows; a test
// parses each with the command's flags.
var examples = map[string][]string{
	"diff":          {"profdiff diff --width 80 before/cpu.pb.gz after/cpu.pb.gz", "profdiff diff --format markdown --base 'main/*.pb.gz' --new 'pr/*.pb.gz'"},
	"top":           {"profdiff top --top 10 cpu.pb.gz"},
	"gate":          {"profdiff gate --base 'main/*.pb.gz' --new 'pr/*.pb.gz' --max gc=+25%", "profdiff gate --base 'main/*' --new 'pr/*' --max lock-contention=+2pp --format github --junit gate.xml"},
	"series":        {"profdiff series base=v1/ alpha=v2/ fix=v3/ --metric req/s=41200,38000,41000"},
	"wait":          {"profdiff wait profdiff-out/capture", "profdiff wait --base before/ --new after/ --format markdown"},
	"symbolize":     {"profdiff symbolize --symbols ./bin/server cpu.pb.gz -o named.pb.gz"},
	"rules":         {"profdiff rules --runtime go"},
	"formats":       {"profdiff formats --format markdown"},
	"demo":          {"profdiff demo --duration 3s"},
	"workload json": {"profdiff workload json --variant global-lock --cores 1,2,4"},
	"workload wasm": {"profdiff workload wasm --mode loop --keep-resident 0,1MiB"},
	"load":          {"profdiff load -c 16 -d 10s http://127.0.0.1:8080/"},
	"sources":       {"profdiff sources pyroscope+http://127.0.0.1:4040"},
	"capture":       {"profdiff capture http://127.0.0.1:6060 --out before"},
	"version":       {"profdiff version"},
	"help":          {"profdiff help diff"},
}

// writeHelp writes the command's help on w, wrapped to helpWidth: its
// synopsis, examples, and flags by group.
func (c *command) writeHelp(w io.Writer, fs *flag.FlagSet) {
	width := helpWidth(w)
	fmt.Fprintf(w, "Usage:\n%s", wrapHelp(c.synopsis, width))
	if ex := examples[c.name]; len(ex) > 0 {
		fmt.Fprintf(w, "\nExample:\n")
		for _, e := range ex {
			fmt.Fprint(w, wrapHelp("  "+e+"\n", width))
		}
	}
	grouped := map[string]bool{}
	any := false
	for _, g := range flagGroups {
		sub := flag.NewFlagSet(g.title, flag.ContinueOnError)
		sub.SortFlags = false
		fs.VisitAll(func(f *flag.Flag) {
			for _, n := range g.names {
				if f.Name == n {
					sub.AddFlag(f)
					grouped[n] = true
				}
			}
		})
		if u := sub.FlagUsagesWrapped(width); u != "" {
			fmt.Fprintf(w, "\n%s flags:\n%s", g.title, u)
			any = true
		}
	}
	rest := flag.NewFlagSet("rest", flag.ContinueOnError)
	rest.SortFlags = false
	fs.VisitAll(func(f *flag.Flag) {
		if !grouped[f.Name] {
			rest.AddFlag(f)
		}
	})
	if u := rest.FlagUsagesWrapped(width); u != "" {
		title := "Flags"
		if any {
			title = "Other flags"
		}
		fmt.Fprintf(w, "\n%s:\n%s", title, u)
	}
}

// wrapHelp wraps each line of s wider than width at its spaces, each
// continuation indented four columns more than the line it continues.
func wrapHelp(s string, width int) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		nl := strings.HasSuffix(line, "\n")
		line = strings.TrimSuffix(line, "\n")
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		for len([]rune(line)) > width {
			cut := strings.LastIndex(string([]rune(line)[:width+1]), " ")
			if cut <= len(indent)+4 {
				break // one word wider than the line: as it is
			}
			b.WriteString(line[:cut] + "\n")
			line = indent + "    " + strings.TrimLeft(line[cut:], " ")
		}
		b.WriteString(line)
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// wrapWords breaks s at its spaces into lines of at most width
// characters (a longer word alone on its line).
func wrapWords(s string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		if cur != "" && len([]rune(cur))+1+len([]rune(w)) > width {
			lines, cur = append(lines, cur), ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	return append(lines, cur)
}
