package main

// TestDocs runs every example in the manual: each README.md in the
// repository (found by walking the tree from the module root; .git,
// hidden folders, testdata and profdiff-out are skipped).
//
// # Writing an example
//
// A fenced block tagged console holds one or more commands and, after each,
// what it prints on standard output:
//
//	```console
//	$ profdiff top --top 3 testdata/dotnet/net11.folded
//	...the exact output...
//	```
//
//   - A command is a line "$ profdiff ARGS" or "$ go run ./cmd/profdiff ARGS".
//     ARGS are split as a shell splits plain words: single and double quotes,
//     a backslash escapes the next character, and a line ending in " \"
//     continues on the next. Nothing is expanded: profdiff expands its own
//     globs (--base 'main/*.pb.gz'). The command runs through run(ctx, args, stdin,
//     stdout, stderr) in a child process, with an empty stdin.
//   - The lines up to the next command (or the end of the block) are its
//     stdout. Stderr is not compared (it is shown when the example fails).
//   - A command that exits non-zero ends its output with a line
//     "[exit status N]"; without it the command must exit 0.
//   - A line "..." stands for any number of lines, none included.
//   - Within a line, "<n>" matches a number and "<*>" any text.
//
// An HTML comment on the line right before the fence (GitHub does not show
// it) sets how the block runs:
//
//	<!-- docs-test: dir=tmp setup=gate-profiles vary -->
//
//   - dir=tmp runs the block's commands, in order, in one fresh temporary
//     folder; without it they run in the repository root, so examples name
//     committed files such as testdata/dotnet/net10.folded.
//   - setup=NAME first prepares that folder (see docSetups): it writes the
//     inputs the example names, recorded in this process by the real
//     writers (runtime/pprof, runtime/trace), starts a server on 127.0.0.1,
//     or links files of ../shared/corpus (the block is skipped when the
//     corpus is absent). A server's setup substitutes its real address for
//     the one the example shows (127.0.0.1:8080 for the JSON server,
//     127.0.0.1:6060 for a /debug/pprof server), in the arguments and back
//     in the output.
//   - vary is for output of live runs (workloads, load, captures): every
//     number in the expected output matches any number (with either sign),
//     and a run of spaces or of "─" any run of one or more, so a table
//     whose columns widen still matches. Words, order and structure must match.
//   - short runs the block even with -short (by default a setup or vary
//     block is skipped under -short).
//
// Blocks run in parallel, each command in a child process (this test
// binary re-executed, see docsExecEnv) with the block's folder as its
// working directory.
//
// Commands that cannot run in a test (go test, go install, perf, curl,
// dotnet-trace) go in blocks tagged sh, CI workflows in blocks tagged yaml.
// Every profdiff command in a sh or yaml block must be covered: each of its flags must appear in a console
// example of the same command, or the command's line must be listed in
// shOnly with the reason it cannot run here. A "$ profdiff" line in a block
// that is not console fails (an example that would never run): recorded
// output of long runs goes in text blocks, with the command in the prose.
//
// The relative links of every README.md (outside code) must name files
// that exist and, for Markdown, headings they have (GitHub's anchors).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	httppprof "net/http/pprof"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/profdiff/profdiff/diff/gate/gatetest"
	"github.com/profdiff/profdiff/diff/wait/waittest"
	"github.com/profdiff/profdiff/profile/fleet/fleettest"
	"github.com/profdiff/profdiff/workloads/jsonserver"
)

// shOnly lists profdiff commands in sh blocks whose flags no console
// example exercises, each with the reason it cannot run in a test.
var shOnly = map[string]string{}

// docBlock is one console example.
type docBlock struct {
	file  string // path relative to the module root
	line  int    // line of the opening fence
	attrs map[string]string
	body  []string
}

// docCommand is one "$ profdiff ..." of a block with its expected output.
type docCommand struct {
	line int // in the file
	args []string
	want []string
	exit int
}

func TestDocs(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	consoles, shells, texts := readDocBlocks(t, root)
	checkDocLinks(t, root, texts)
	if len(consoles) == 0 {
		t.Fatal("no console examples found in any README.md")
	}
	docTempRoot = t.TempDir()
	clear(docSetupCache)
	// Setups whose files later blocks copy record this process's own
	// goroutines and traces: they run now, before anything runs beside
	// this test, so the recordings hold only what they set up.
	for _, b := range consoles {
		_, short := b.attrs["short"]
		if name := b.attrs["setup"]; docCacheable[name] && (!testing.Short() || short) {
			cachedSetup(t, root, name, docSetups[name])
		}
	}
	t.Parallel()
	covered := map[string]map[string]bool{}
	for _, b := range consoles {
		cmds, err := parseDocBlock(b)
		if err != nil {
			t.Errorf("%s:%d: %v", b.file, b.line, err)
			continue
		}
		for _, c := range cmds {
			key, flags := commandFlags(c.args)
			if covered[key] == nil {
				covered[key] = map[string]bool{}
			}
			for _, f := range flags {
				covered[key][f] = true
			}
		}
		t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) { runDocBlock(t, root, b, cmds) })
	}
	checkShellCoverage(t, shells, covered)
}

// readDocBlocks returns the console blocks and the sh blocks of every
// README.md under root, and the text of each file by its path.
func readDocBlocks(t *testing.T, root string) (consoles, shells []docBlock, texts map[string]string) {
	t.Helper()
	texts = map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "profdiff-out") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "README.md" {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		texts[filepath.ToSlash(rel)] = string(data)
		c, s, err := splitFences(filepath.ToSlash(rel), string(data))
		if err != nil {
			return err
		}
		consoles = append(consoles, c...)
		shells = append(shells, s...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return consoles, shells, texts
}

var docLinkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// checkDocLinks fails for a relative link of a README.md (outside code)
// to a file that does not exist, or to a heading a Markdown file lacks.
func checkDocLinks(t *testing.T, root string, texts map[string]string) {
	for _, file := range slices.Sorted(maps.Keys(texts)) {
		for n, line := range proseLines(texts[file]) {
			for _, m := range docLinkRE.FindAllStringSubmatch(line, -1) {
				target, anchor, _ := strings.Cut(m[1], "#")
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path := file
				if target != "" {
					path = filepath.ToSlash(filepath.Join(filepath.Dir(file), target))
				}
				data, err := os.ReadFile(filepath.Join(root, path))
				if err != nil {
					t.Errorf("%s:%d: link %s: %v", file, n, m[1], err)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(headingAnchors(string(data)), anchor) {
					t.Errorf("%s:%d: link %s: %s has no heading with anchor #%s", file, n, m[1], path, anchor)
				}
			}
		}
	}
}

// proseLines returns the lines of a Markdown text outside fenced code, by
// line number (1-based).
func proseLines(text string) map[int]string {
	lines := map[int]string{}
	inFence := false
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			lines[i+1] = l
		}
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text: lower case, punctuation dropped, spaces as hyphens.
func headingAnchors(text string) []string {
	var anchors []string
	for _, l := range proseLines(text) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		var sb strings.Builder
		for _, r := range strings.ToLower(strings.TrimLeft(l, "# ")) {
			switch {
			case r == ' ':
				sb.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				sb.WriteRune(r)
			}
		}
		anchors = append(anchors, sb.String())
	}
	return anchors
}

var docAttrRE = regexp.MustCompile(`^<!-- docs-test: (.*) -->$`)

// splitFences finds the console and sh fenced blocks of one Markdown file.
func splitFences(file, text string) (consoles, shells []docBlock, err error) {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(fence, "```") {
			continue
		}
		indent := lines[i][:strings.Index(lines[i], "```")]
		b := docBlock{file: file, line: i + 1, attrs: map[string]string{}}
		if i > 0 {
			if m := docAttrRE.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				for _, f := range strings.Fields(m[1]) {
					k, v, _ := strings.Cut(f, "=")
					b.attrs[k] = v
				}
			}
		}
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			b.body = append(b.body, strings.TrimPrefix(lines[j], indent))
		}
		if j == len(lines) {
			return nil, nil, fmt.Errorf("%s:%d: fence not closed", file, i+1)
		}
		switch strings.TrimPrefix(fence, "```") {
		case "console":
			consoles = append(consoles, b)
		case "sh", "yaml":
			// CI YAML holds shell commands too (its run: steps).
			shells = append(shells, b)
		default:
			// A prompt outside a console block would be an example that
			// never runs: recorded output says what ran in prose.
			for k, l := range b.body {
				if words, err := shellWords(strings.TrimPrefix(l, "$ ")); err == nil && strings.HasPrefix(l, "$ ") {
					if _, ok := profdiffArgs(words); ok {
						return nil, nil, fmt.Errorf("%s:%d: a \"$ profdiff\" example outside a console block never runs; tag the block console, or say what ran in the text", file, i+2+k)
					}
				}
			}
		}
		i = j
	}
	return consoles, shells, nil
}

// parseDocBlock splits a console block into its commands.
func parseDocBlock(b docBlock) ([]docCommand, error) {
	var cmds []docCommand
	for i := 0; i < len(b.body); i++ {
		l := b.body[i]
		if !strings.HasPrefix(l, "$ ") {
			if len(cmds) == 0 {
				return nil, fmt.Errorf("output before the first \"$ profdiff\" line: %q", l)
			}
			c := &cmds[len(cmds)-1]
			if m := exitLineRE.FindStringSubmatch(l); m != nil {
				c.exit, _ = strconv.Atoi(m[1])
				continue
			}
			c.want = append(c.want, l)
			continue
		}
		line := i + 1
		cmd := strings.TrimPrefix(l, "$ ")
		for strings.HasSuffix(cmd, " \\") && i+1 < len(b.body) {
			i++
			cmd = strings.TrimSuffix(cmd, "\\") + strings.TrimPrefix(strings.TrimSpace(b.body[i]), "> ")
		}
		words, err := shellWords(cmd)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", b.line+line, err)
		}
		args, ok := profdiffArgs(words)
		if !ok {
			return nil, fmt.Errorf("line %d: a console example runs profdiff (or go run ./cmd/profdiff), not %q", b.line+line, cmd)
		}
		cmds = append(cmds, docCommand{line: b.line + line, args: args})
	}
	return cmds, nil
}

var exitLineRE = regexp.MustCompile(`^\[exit status (\d+)\]$`)

// profdiffArgs returns the arguments of a profdiff command line.
func profdiffArgs(words []string) ([]string, bool) {
	switch {
	case len(words) >= 1 && words[0] == "profdiff":
		return words[1:], true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/profdiff":
		return words[3:], true
	}
	return nil, false
}

// shellWords splits a command line as a shell splits plain words.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && strings.IndexByte(`"\$`, s[j+1]) >= 0 {
					j++
				}
				cur.WriteByte(s[j])
			}
			if j == len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			i = j
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// docsExecEnv, set in a re-executed test binary, makes TestMain run its
// arguments as profdiff does (runDocsCommandIfAsked) instead of the tests.
const docsExecEnv = "PROFDIFF_DOCS_EXEC"

// runDocsCommandIfAsked is called first thing in TestMain (after the
// workload child check): in a process started by a parallel doc block (or
// a test that needs a real process, as the signal tests do), it runs the
// command as main does, signals included, and exits with its status.
func runDocsCommandIfAsked() {
	if os.Getenv(docsExecEnv) != "1" {
		return
	}
	os.Exit(exitCode(run(announcedSignalContext(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr), os.Stderr))
}

// runDocBlock runs a block's commands and compares their output. Blocks
// run in parallel (up to -parallel at a time), each command in a process of
// its own whose working directory is the block's folder (see docsExecEnv),
// so no block changes this process's directory or environment.
func runDocBlock(t *testing.T, root string, b docBlock, cmds []docCommand) {
	t.Parallel()
	_, vary := b.attrs["vary"]
	_, short := b.attrs["short"]
	if testing.Short() && !short && (vary || b.attrs["setup"] != "") {
		t.Skip("live example skipped with -short")
	}
	dir := root
	switch b.attrs["dir"] {
	case "":
	case "tmp":
		dir = docTempDir(t)
	default:
		t.Fatalf("%s:%d: unknown dir=%s (want tmp, or none for the repository root)", b.file, b.line, b.attrs["dir"])
	}
	var subst map[string]string
	if name := b.attrs["setup"]; name != "" {
		setup, ok := docSetups[name]
		if !ok {
			t.Fatalf("%s:%d: unknown setup=%s", b.file, b.line, name)
		}
		if docCacheable[name] {
			copyDir(t, cachedSetup(t, root, name, setup), dir)
		} else {
			subst = setup(t, root, dir)
		}
	}
	for _, c := range cmds {
		if msg := runDocCommandIn(t, dir, b.file, c, subst, vary); msg != "" {
			t.Error(msg)
		}
	}
}

// cachedSetup runs a setup that only writes files once per test run, in a
// folder of its own, and returns that folder; blocks running at the same
// time wait for the first.
func cachedSetup(t *testing.T, root, name string, setup func(t *testing.T, root, dir string) map[string]string) string {
	docSetupMu.Lock()
	c := docSetupCache[name]
	if c == nil {
		c = &docSetupDone{}
		docSetupCache[name] = c
	}
	docSetupMu.Unlock()
	c.once.Do(func() {
		dir := docTempDir(t)
		setup(t, root, dir)
		c.dir = dir
	})
	if c.dir == "" {
		t.Fatalf("setup=%s failed in another block", name)
	}
	return c.dir
}

// runDocCommandIn runs one example in a child process whose working
// directory is dir (see docsExecEnv), with an empty stdin and no CI step
// summary, and returns why its output or exit status differs from the
// README, or "".
func runDocCommandIn(t *testing.T, dir, file string, c docCommand, subst map[string]string, vary bool) string {
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = replaceAll(a, subst, false)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exe, err := os.Executable() // os.Args[0] may be relative to another folder
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Args[0] = "profdiff" // as a shell starts it from the PATH: what the demo's follow-ups print
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), docsExecEnv+"=1", "GITHUB_STEP_SUMMARY=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s:%d: running the example: %v\n%s", file, c.line, err, stderr.String())
		}
		code = ee.ExitCode()
	}
	return compareDocOutput(file, c, subst, vary, code, &stdout, &stderr)
}

// compareDocOutput says why a command's exit status or output differs
// from its example, or returns "".
func compareDocOutput(file string, c docCommand, subst map[string]string, vary bool, code int, stdout, stderr *bytes.Buffer) string {
	var got []string
	if stdout.Len() > 0 {
		got = strings.Split(strings.TrimSuffix(replaceAll(stdout.String(), subst, true), "\n"), "\n")
	}
	if code == c.exit && matchLines(c.want, got, vary) {
		return ""
	}
	return fmt.Sprintf("%s:%d: profdiff %s\nexit status %d, want %d\n--- %s:%d (want)\n+++ profdiff output (got)\n%s\nstderr:\n%s",
		file, c.line, strings.Join(c.args, " "), code, c.exit, file, c.line,
		unifiedDiff(c.want, got, vary), stderr.String())
}

// Setups that only write files run once per test run; later blocks get a
// copy of what the first wrote, to keep the test fast.
var (
	docCacheable  = map[string]bool{"gate-profiles": true, "lock-profiles": true, "traces": true}
	docSetupMu    sync.Mutex
	docSetupCache = map[string]*docSetupDone{} // setup name → the folder it wrote
	docTempRoot   string                       // kept until TestDocs ends
)

type docSetupDone struct {
	once sync.Once
	dir  string
}

// docTempDir returns a fresh folder that lives until TestDocs ends (so a
// setup's files can be copied from it by later blocks).
func docTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp(docTempRoot, "block")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyDir copies the files under src (folders and regular files) to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// replaceAll substitutes a setup's real addresses for the documented ones
// (back, in output).
func replaceAll(s string, subst map[string]string, back bool) string {
	keys := make([]string, 0, len(subst))
	for k := range subst {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, doc := range keys {
		if back {
			s = strings.ReplaceAll(s, subst[doc], doc)
		} else {
			s = strings.ReplaceAll(s, doc, subst[doc])
		}
	}
	return s
}

// matchLines reports whether got matches the expected lines, where "..."
// matches any run of lines.
func matchLines(want, got []string, vary bool) bool {
	pats := make([]*regexp.Regexp, len(want))
	for i, w := range want {
		pats[i] = linePattern(w, vary)
	}
	memo := map[[2]int]bool{}
	var match func(i, j int) bool
	match = func(i, j int) bool {
		if i == len(want) {
			return j == len(got)
		}
		k := [2]int{i, j}
		if r, ok := memo[k]; ok {
			return r
		}
		var r bool
		if want[i] == "..." {
			r = match(i+1, j) || (j < len(got) && match(i, j+1))
		} else {
			r = j < len(got) && pats[i].MatchString(got[j]) && match(i+1, j+1)
		}
		memo[k] = r
		return r
	}
	return match(0, 0)
}

// docTokenRE finds the parts of an expected line that are not literal:
// the wildcards, and in vary blocks numbers and runs of spaces or of ─.
var (
	docTokenRE     = regexp.MustCompile(`<n>|<\*>`)
	docVaryTokenRE = regexp.MustCompile(`<n>|<\*>|[+-]?[0-9]+(?:\.[0-9]+)?| +|─+`)
)

const docNumber = `[+-]?[0-9]+(?:\.[0-9]+)?`

// linePattern compiles an expected line into an anchored regexp.
func linePattern(w string, vary bool) *regexp.Regexp {
	re := docTokenRE
	if vary {
		re = docVaryTokenRE
	}
	var sb strings.Builder
	sb.WriteString("^")
	last := 0
	for _, m := range re.FindAllStringIndex(w, -1) {
		sb.WriteString(regexp.QuoteMeta(w[last:m[0]]))
		switch tok := w[m[0]:m[1]]; {
		case tok == "<*>":
			sb.WriteString(".*")
		case tok == "<n>":
			sb.WriteString(docNumber)
		case strings.HasPrefix(tok, " "):
			sb.WriteString(" +")
		case strings.HasPrefix(tok, "─"):
			sb.WriteString("─+")
		default:
			sb.WriteString(docNumber)
		}
		last = m[1]
	}
	sb.WriteString(regexp.QuoteMeta(w[last:]))
	sb.WriteString("$")
	return regexp.MustCompile(sb.String())
}

// unifiedDiff shows want against got, line by line, in the style of
// diff -u (without line numbers in the hunks): "-" for lines only the
// README has, "+" for lines only the output has, with two lines of context.
func unifiedDiff(want, got []string, vary bool) string {
	// Longest common subsequence, with "..." lines of the README left out
	// (they match anything).
	var w []string
	for _, l := range want {
		if l != "..." {
			w = append(w, l)
		}
	}
	pats := make([]*regexp.Regexp, len(w))
	for i, l := range w {
		pats[i] = linePattern(l, vary)
	}
	n, m := len(w), len(got)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if pats[i].MatchString(got[j]) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && pats[i].MatchString(got[j]) && lcs[i][j] == lcs[i+1][j+1]+1:
			out = append(out, "  "+got[j])
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+w[i])
			i++
		default:
			out = append(out, "+ "+got[j])
			j++
		}
	}
	if d := trimContext(out, 2); d != "" {
		return d
	}
	return "(the output matches)\n"
}

// trimContext keeps changed lines and ctx lines around them.
func trimContext(lines []string, ctx int) string {
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if !strings.HasPrefix(l, "  ") {
			for k := max(0, i-ctx); k <= min(len(lines)-1, i+ctx); k++ {
				keep[k] = true
			}
		}
	}
	var sb strings.Builder
	gap := false
	for i, l := range lines {
		if !keep[i] {
			gap = true
			continue
		}
		if gap || i == 0 {
			sb.WriteString("@@\n")
			gap = false
		}
		sb.WriteString(l + "\n")
	}
	return sb.String()
}

// commandFlags returns the command a profdiff invocation runs ("diff",
// "workload json") and the flags it names.
func commandFlags(args []string) (string, []string) {
	if len(args) == 0 {
		return "", nil
	}
	key := args[0]
	if key == "workload" && len(args) > 1 {
		key += " " + args[1]
	}
	var flags []string
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") && a != "-" {
			name, _, _ := strings.Cut(a, "=")
			flags = append(flags, name)
		}
	}
	return key, flags
}

// checkShellCoverage fails for a profdiff command of a sh block with a
// flag no console example uses, unless shOnly lists it.
func checkShellCoverage(t *testing.T, shells []docBlock, covered map[string]map[string]bool) {
	used := map[string]bool{}
	defer func() {
		for _, cmd := range slices.Sorted(maps.Keys(shOnly)) {
			if !used[cmd] {
				t.Errorf("shOnly lists %q, which no sh block of a README.md runs any more", cmd)
			}
		}
	}()
	for _, b := range shells {
		for i, cmd := range shellCommands(b.body) {
			words, err := shellWords(cmd)
			if err != nil {
				t.Errorf("%s:%d: %v", b.file, b.line, err)
				continue
			}
			args, ok := profdiffArgs(words)
			if !ok {
				continue
			}
			if _, listed := shOnly[cmd]; listed {
				used[cmd] = true
				continue
			}
			key, flags := commandFlags(args)
			flags = slices.Compact(slices.Sorted(slices.Values(flags)))
			if covered[key] == nil {
				t.Errorf("%s:%d (command %d of the sh block): no console example runs %q; add one, or list %q in shOnly with the reason", b.file, b.line, i+1, "profdiff "+key, cmd)
				continue
			}
			for _, f := range flags {
				if !covered[key][f] {
					t.Errorf("%s:%d (command %d of the sh block): no console example runs %q with %s; add one, or list %q in shOnly with the reason", b.file, b.line, i+1, "profdiff "+key, f, cmd)
				}
			}
		}
	}
}

// shellCommands returns the simple commands of a sh block: continuation
// lines joined, comments dropped, split at &&, || , ; and |.
func shellCommands(body []string) []string {
	var cmds []string
	var cur string
	for _, l := range body {
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\")
			continue
		}
		cur += l
		for _, seg := range regexp.MustCompile(`&&|\|\||;|\|`).Split(cur, -1) {
			seg = strings.Join(strings.Fields(seg), " ")
			if seg != "" {
				cmds = append(cmds, seg)
			}
		}
		cur = ""
	}
	return cmds
}

// docSetups prepare a block's folder; each returns the addresses to
// substitute (documented → real), if any.
var docSetups = map[string]func(t *testing.T, root, dir string) map[string]string{
	// net10.folded and net11.folded, the committed .NET pair.
	"dotnet": func(t *testing.T, root, dir string) map[string]string {
		for _, f := range []string{"net10.folded", "net11.folded"} {
			data, err := os.ReadFile(filepath.Join(root, "testdata", "dotnet", f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	},
	// base/run-{1..5}.pb.gz and new/run-{1..5}.pb.gz: goroutine snapshots
	// of a test program without and with a mutex on its hot path
	// (captureGateRun in gate_test.go), interleaved.
	"gate-profiles": func(t *testing.T, root, dir string) map[string]string {
		for _, side := range []string{"base", "new"} {
			if err := os.Mkdir(filepath.Join(dir, side), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for i := 1; i <= 5; i++ {
			captureGateRun(t, filepath.Join(dir, "base", fmt.Sprintf("run-%d.pb.gz", i)), false)
			captureGateRun(t, filepath.Join(dir, "new", fmt.Sprintf("run-%d.pb.gz", i)), true)
		}
		return nil
	},
	// mutex/{base,new}/run-{1..5}.pb.gz and block/{base,new}/run-{1..5}.pb.gz:
	// the mutex and block profiles of the gate's lock test program
	// (diff/gate/testdata/lockprog), holding its mutex only to fold each
	// result (base) or across all its work (new), interleaved.
	"lock-profiles": func(t *testing.T, root, dir string) map[string]string {
		gatetest.Record(t, dir, 5, gatetest.Variant{Name: "base"}, gatetest.Variant{Name: "new", Lock: "hold"})
		return nil
	},
	// base/ and new/: capture folders (mutex and block profiles, execution
	// trace) of package wait's test program, holdSlow holding its lock 4
	// ms, then 8 ms, each followed by 8 ms of work outside it, while four
	// goroutines wait in waitHere (waitCapture in wait_test.go).
	"wait-captures": func(t *testing.T, root, dir string) map[string]string {
		waitCapture(t, filepath.Join(dir, "base"), "4ms", "-outside", "8ms")
		waitCapture(t, filepath.Join(dir, "new"), "8ms", "-outside", "8ms")
		return nil
	},
	// waker.txt: perf script of a perf recording (sched_switch,
	// sched_waking, DWARF call graphs) of profile/perfscript's waker.c,
	// whose holder holds its waiters' mutexes in hold_work while they
	// wait in wait_here (waittest.PerfWaker; skipped where perf cannot
	// record the tracepoints).
	"wait-perf": func(t *testing.T, root, dir string) map[string]string {
		waittest.PerfWaker(t, filepath.Join(dir, "waker.txt"))
		return nil
	},
	// chain.txt: a perf recording of profile/perfscript's chain.c, where
	// C waits on B, which waits on the mutex A holds in a_work
	// (waittest.PerfChain; skipped where perf cannot record).
	"wait-chain": func(t *testing.T, root, dir string) map[string]string {
		waittest.PerfChain(t, filepath.Join(dir, "chain.txt"))
		return nil
	},
	// holders.jfr: a JFR recording of profile/jfr's Holders.java, whose
	// thread "holder" holds the three monitors its waiters block on
	// (waittest.JFRHolders; skipped without a JDK).
	"wait-jfr": func(t *testing.T, root, dir string) map[string]string {
		waittest.JFRHolders(t, filepath.Join(dir, "holders.jfr"))
		return nil
	},
	// old.trace and new.trace: execution traces of four goroutines that
	// sleep, without and with a mutex held across the sleep (recordTrace in
	// trace_test.go).
	"traces": func(t *testing.T, root, dir string) map[string]string {
		recordTrace(t, filepath.Join(dir, "old.trace"), false)
		recordTrace(t, filepath.Join(dir, "new.trace"), true)
		return nil
	},
	// base.cpuprofile and new.cpuprofile: a Node program profiled with
	// node --cpu-prof, then with its busy loop doubled and more garbage
	// (recordNodePair in node_test.go; skipped without node).
	"node": func(t *testing.T, root, dir string) map[string]string {
		recordNodePair(t, dir)
		return nil
	},
	// base.out and new.out: callgrind runs of a C program holding a
	// pthread mutex, the held work doubled (recordCallgrindPair in
	// record_native_test.go; skipped without gcc or valgrind).
	"callgrind": func(t *testing.T, root, dir string) map[string]string {
		recordCallgrindPair(t, dir)
		return nil
	},
	// base.prof and new.prof: cProfile runs of a Python program waiting
	// for a threading.Lock and sleeping, the hold and sleep doubled
	// (recordCProfilePair in record_native_test.go; skipped without
	// python3).
	"cprofile": func(t *testing.T, root, dir string) map[string]string {
		recordCProfilePair(t, dir)
		return nil
	},
	// base.json and new.json: a Ruby program recorded with stackprof in
	// wall mode, the second time holding its Mutex twice as long
	// (recordRubyPair in ruby_test.go; skipped without ruby-stackprof).
	"ruby": func(t *testing.T, root, dir string) map[string]string {
		recordRubyPair(t, dir)
		return nil
	},
	// PerfView's two NoNativeStacks test traces from ../shared/corpus.
	"nettrace": func(t *testing.T, root, dir string) map[string]string {
		for _, f := range []string{"only_managed_samples.nettrace.zip", "mixed_managed_external_samples.nettrace.zip"} {
			src := corpusFile(t, nettraceDir+f)
			abs, err := filepath.Abs(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(abs, filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	},
	// unknown.txt, named.txt and maps/perf-PID.map: perf script of the
	// test JIT with and without its perf map (recordJIT in
	// symbols_test.go; skipped where perf cannot record), the map's pid
	// shown as 4242. perf samples the JIT only while it has a CPU, and a
	// recording with few samples of it ranks its two functions by chance:
	// jit_spin_A (2/3 of the JIT's time) ties or trails jit_spin_B in 18%
	// of recordings of 12 samples (as perf once got beside the other
	// blocks), in 0.04% of those of 100. A recording under 100 is made
	// again, three times at most, then the block skipped with the counts.
	"jit": func(t *testing.T, root, dir string) map[string]string {
		const attempts, minSamples = 3, 100
		var counts []string
		for attempt := 1; ; attempt++ {
			r := recordJIT(t, t.TempDir())
			text, err := os.ReadFile(r.unknown)
			if err != nil {
				t.Fatal(err)
			}
			n := 0 // samples with a frame in the JIT's code
			for _, s := range strings.Split(string(text), "\n\n") {
				if strings.Contains(s, fmt.Sprintf("(/tmp/perf-%d.map)", r.pid)) {
					n++
				}
			}
			if n >= minSamples {
				t.Logf("perf recorded %d samples of the JIT", n)
				for _, f := range []string{r.unknown, r.named, r.maps} {
					if err := os.Rename(f, filepath.Join(dir, filepath.Base(f))); err != nil {
						t.Fatal(err)
					}
				}
				return map[string]string{"perf-4242.map": fmt.Sprintf("perf-%d.map", r.pid)}
			}
			counts = append(counts, strconv.Itoa(n))
			if attempt == attempts {
				t.Skipf("perf recorded %s samples of the JIT in %d recordings, fewer than the %d that rank its functions reliably: the machine is too busy", strings.Join(counts, ", "), attempts, minSamples)
			}
			t.Logf("perf recorded %d samples of the JIT, fewer than %d: recording again", n, minSamples)
		}
	},
	// The built-in JSON server (variant baseline) in this process, shown
	// as 127.0.0.1:8080.
	"json-server": func(t *testing.T, root, dir string) map[string]string {
		h, err := jsonserver.Handler("baseline")
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewServer(h)
		t.Cleanup(s.Close)
		return map[string]string{"127.0.0.1:8080": s.Listener.Addr().String()}
	},
	// Pyroscope's query protocol (profile/fleet/fleettest), shown as
	// 127.0.0.1:4040, serving two CPU profiles of this process as
	// service api version v1 and v2, taken at 2026-12-01T10:00:00Z and a
	// minute later (fleetProfiles in fleet_test.go).
	"pyroscope": func(t *testing.T, root, dir string) map[string]string {
		base := pyroscopeFleet(t, &fleettest.Pyroscope{}, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), 1, dir)
		return map[string]string{"127.0.0.1:4040": strings.TrimPrefix(base, "http://")}
	},
	// A real Parca (parca_test.go; the block is skipped without its
	// binary), shown as 127.0.0.1:7070, holding the same two CPU profiles
	// as process_cpu{job="api",version="v1"} and version v2.
	"parca": func(t *testing.T, root, dir string) map[string]string {
		base := startParca(t)
		for i, p := range fleetProfiles(t) {
			parcaIngest(t, base, fmt.Sprintf("v%d", i+1), p)
		}
		return map[string]string{"127.0.0.1:7070": strings.TrimPrefix(base, "http://")}
	},
	// net/http/pprof's handlers for this process, shown as 127.0.0.1:6060.
	"pprof-server": func(t *testing.T, root, dir string) map[string]string {
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", httppprof.Index)
		mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
		s := httptest.NewServer(mux)
		t.Cleanup(s.Close)
		return map[string]string{"127.0.0.1:6060": s.Listener.Addr().String()}
	},
}

// TestDocsMatcher keeps the example syntax honest: wildcards, "...",
// vary and the exit line.
func TestDocsMatcher(t *testing.T) {
	for _, c := range []struct {
		want, got string
		vary, ok  bool
	}{
		{"a\nb", "a\nb", false, true},
		{"a\nb", "a\nc", false, false},
		{"a\n...\nd", "a\nb\nc\nd", false, true},
		{"a\n...\nd", "a\nd", false, true},
		{"a\n...", "a\nb", false, true},
		{"x <n> y", "x 12.5 y", false, true},
		{"x <n> y", "x z y", false, false},
		{"x 1 y", "x 2 y", false, false},
		{"x 1 y", "x 2 y", true, true},
		{"│  1.5% │ ab │", "│ 12.25% │ ab │", true, true},
		{"│  1.5% │ ab │", "│ 12.25% │ ac │", true, false},
		{"┌──┬─┐", "┌────┬──┐", true, true},
		{"total +1.5pp <*>", "total -0.2pp (new)", true, true},
	} {
		got := strings.Split(c.got, "\n")
		if ok := matchLines(strings.Split(c.want, "\n"), got, c.vary); ok != c.ok {
			t.Errorf("matchLines(%q, %q, vary=%v) = %v, want %v", c.want, c.got, c.vary, ok, c.ok)
		}
	}
	cmds, err := parseDocBlock(docBlock{body: []string{"$ profdiff gate 'a b' \\", "    --x \"c\\\"d\"", "out", "[exit status 1]"}})
	if err != nil || len(cmds) != 1 || strings.Join(cmds[0].args, "|") != `gate|a b|--x|c"d` || cmds[0].exit != 1 || len(cmds[0].want) != 1 {
		t.Errorf("parseDocBlock: %+v, %v", cmds, err)
	}
	if d := unifiedDiff([]string{"a", "b", "c"}, []string{"a", "x", "c"}, false); !strings.Contains(d, "- b\n+ x\n") {
		t.Errorf("unifiedDiff:\n%s", d)
	}
	if _, _, err := splitFences("x.md", "```text\n$ profdiff top a.pb.gz\n```\n"); err == nil || !strings.Contains(err.Error(), "x.md:2:") {
		t.Errorf("a prompt in a text block: %v", err)
	}

	// A README whose example prints something else fails with the file and
	// line of the command and a diff.
	root := filepath.Join("..", "..")
	msg := runDocCommandIn(t, root, "x/README.md", docCommand{line: 7, args: []string{"top", "--top", "1", "testdata/dotnet/net11.folded"},
		want: []string{"profile: net11.folded (10000 samples, total 10000 count)", "sample type samples/count; kind cpu", "..."}}, nil, false)
	for _, want := range []string{"x/README.md:7: profdiff top --top 1", "- sample type samples/count; kind cpu\n+ sample type samples/count; kind unknown"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure message lacks %q:\n%s", want, msg)
		}
	}
	if msg := runDocCommandIn(t, root, "x/README.md", docCommand{line: 7, args: []string{"top", "no-such-file"}, exit: 0}, nil, false); !strings.Contains(msg, "exit status 2, want 0") {
		t.Errorf("a failing command passed: %q", msg)
	}
}
