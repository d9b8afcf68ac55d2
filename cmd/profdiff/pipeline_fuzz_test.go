package main

// FuzzPipeline drives the whole command, in-process through run, on one
// profile: the reader lets odd-but-valid profiles through (huge values,
// control characters, 5,000 frames, samples without a stack), and this
// target checks what the engine and every renderer make of them. Run it
// with
//
//	go test -run='^$' -fuzz='^FuzzPipeline$' -parallel 1 ./cmd/profdiff

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"
)

// pipelineDeadline bounds one command of FuzzPipeline: a command still
// running after it is a finding (an input that hangs the command).
const pipelineDeadline = 10 * time.Second

// pipelineSeedMax keeps the seeds small: a large seed slows every
// mutation of it.
const pipelineSeedMax = 24 << 10

// pipelineFormats are the formats of diff; top writes all but
// difffolded, wait the first five but github.
var pipelineFormats = []string{"table", "markdown", "github", "csv", "json", "html", "svg", "folded", "difffolded"}

// pipelineVariants are the flags FuzzPipeline adds to top and diff.
var pipelineVariants = [][]string{
	nil,
	{"--cum"},
	{"--by", "decider"},
	{"--by", "caller"},
	{"--kind", "wall"},
	{"--peek", "."},
	{"--top", "0", "--wide"},
	{"--color", "always", "--width", "40"},
}

// recipeMode is the bit of FuzzPipeline's opts that reads its data as a
// recipe (recipePprof) rather than as the profile's bytes.
const recipeMode = 0x40

// FuzzPipeline: one profile and two selector bytes. Each input runs four
// commands: top of it, diff of it against itself, diff of it against
// net11 (either way round) and wait on it, each in a format form picks
// (the three of top and diff differ; over nine values of form each
// command meets each of its formats), with flags opts picks
// (pipelineVariants), and the one of them form picks runs twice. A
// command at a time costs about 10 ms on a small input (a load ends
// with a collection), so an input runs five, not every format of each:
// the fuzzer's coverage steers form and opts as it does the profile.
// With opts' recipeMode bit the data is a recipe of a profile that
// loads, so that mutations explore what follows the reader: any names,
// values, labels and stack shapes, written with the pprof library.
// Each run must: finish within pipelineDeadline without a panic; exit 0,
// or exit 2 with one message naming the source; write warnings to stderr
// once each and escaped; write JSON that parses, CSV that parses with
// one column count and no cell a spreadsheet evaluates, tables, Markdown
// and folded stacks that a terminal cannot act on, Markdown tables that
// keep their shape, SVG that is well-formed XML and an html page whose
// tags and scripts are its own, JSON whose shares are fractions that sum
// to 1 over the buckets; write no NaN or Inf the input did not
// have; and the run repeated writes the same bytes. The diff against
// itself must differ in nothing and change nothing (selfDiffProblems).
func FuzzPipeline(f *testing.F) {
	files := pipelineSeeds(f)
	for i, seed := range files {
		f.Add(seed, uint8(i), uint8(i))
	}
	for i, seed := range recipeSeeds() {
		f.Add(seed, uint8(len(files)+i), uint8(recipeMode|i))
	}
	f.Fuzz(func(t *testing.T, data []byte, form, opts uint8) {
		input := filepath.Join(t.TempDir(), "in.prof")
		file := data
		if opts&recipeMode != 0 {
			file = recipePprof(t, data)
		}
		if err := os.WriteFile(input, file, 0o644); err != nil {
			t.Fatal(err)
		}
		k := int(form) % len(pipelineFormats)
		format := func(i int, have []string) string {
			name := pipelineFormats[(k+i)%len(pipelineFormats)]
			if !slices.Contains(have, name) {
				name = have[(k+i)%len(have)]
			}
			return name
		}
		topFormats := pipelineFormats[:len(pipelineFormats)-1]
		waitFormats := []string{"table", "markdown", "csv", "json", "html"}
		variant := pipelineVariants[int(opts)%len(pipelineVariants)]
		seedSide := []string{input, net11}
		if opts&0x80 != 0 {
			seedSide = []string{net11, input}
		}
		waitVariant := [][]string{nil, {"--top", "0"}, {"--color", "always", "--width", "40"}}[int(opts)%3]
		runs := [][]string{
			slices.Concat([]string{"top", "--format", format(0, topFormats)}, variant, []string{input}),
			slices.Concat([]string{"diff", "--format", format(3, pipelineFormats)}, variant, []string{input, input}),
			slices.Concat([]string{"diff", "--format", format(6, pipelineFormats)}, variant, seedSide),
			slices.Concat([]string{"wait", "--format", format(0, waitFormats)}, waitVariant, []string{input}),
		}
		again := int(form) / len(pipelineFormats) % len(runs)
		special := regexp.MustCompile(`(?i)\bnan\b|\binf(inity)?\b`)
		inputSpecial := special.Match(data)
		for i, args := range runs {
			what := strings.Join(slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == input }), " ")
			out, stderr, code := pipelineRun(t, args)
			if i == again {
				out2, stderr2, code2 := pipelineRun(t, args)
				if out2 != out || stderr2 != stderr || code2 != code {
					t.Errorf("%s: a second run wrote other bytes (exit %d, then %d):\n%s", what, code, code2, firstDiff(out+stderr, out2+stderr2))
				}
			}
			checkStderr(t, what, stderr, code)
			if code != 0 {
				continue
			}
			if !inputSpecial {
				text := out
				if args[2] == "html" {
					text = htmlScript.ReplaceAllString(text, "")
				}
				if m := special.FindStringIndex(text); m != nil {
					t.Errorf("%s: %q in the output, of no such input: %q", what, text[m[0]:m[1]], text[max(0, m[0]-80):min(len(text), m[1]+80)])
				}
			}
			for _, problem := range formatProblems(args[2], out, slices.Contains(args, "always")) {
				t.Errorf("%s: %s", what, problem)
			}
			if i == 1 && !bytes.Contains(data, []byte("differ")) {
				for _, problem := range selfDiffProblems(args[2], out, stderr) {
					t.Errorf("%s: %s", what, problem)
				}
			}
		}
	})
}

// pipelineRun runs profdiff with args within pipelineDeadline and returns
// its stdout, stderr and exit status.
func pipelineRun(t *testing.T, args []string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pipelineDeadline)
	defer cancel()
	var out, errb bytes.Buffer
	err := run(ctx, args, strings.NewReader(""), &out, &errb)
	if ctx.Err() != nil {
		t.Fatalf("%q: still running after %v", args, pipelineDeadline)
	}
	code := exitCode(err, &errb)
	return out.String(), errb.String(), code
}

// checkStderr checks a command's stderr: nothing a terminal acts on,
// each warning once, and for exit 2 one error that names a source.
func checkStderr(t *testing.T, what, stderr string, code int) {
	t.Helper()
	if problem := terminalSafe(stderr); problem != "" {
		t.Errorf("%s: stderr has %s: %.500q", what, problem, stderr)
	}
	var errs []string
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(unwrapped(stderr), "\n"), "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "profdiff: warning: "):
			if seen[line] {
				t.Errorf("%s: warning twice: %.300q", what, line)
			}
			seen[line] = true
		case strings.HasPrefix(line, "profdiff: "):
			errs = append(errs, line)
		default:
			t.Errorf("%s: stderr line %.300q is no message of profdiff's", what, line)
		}
	}
	switch code {
	case 0:
		if len(errs) > 0 {
			t.Errorf("%s: exit 0 with errors: %.500q", what, errs)
		}
	case 2:
		if len(errs) != 1 || !strings.Contains(errs[0], "in.prof") && !strings.Contains(errs[0], "net11.folded") {
			t.Errorf("%s: exit 2 wants one error naming the source, got %.500q", what, errs)
		}
	default:
		t.Errorf("%s: exit %d (0 or 2 documented): %.2000s", what, code, stderr)
	}
}

// formatProblems says what in out, written in format, breaks what the
// format promises (color: tables may hold profdiff's own colours).
func formatProblems(format, out string, color bool) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	switch format {
	case "table", "markdown", "github", "folded", "difffolded":
		text := out
		if color {
			text = sgr.ReplaceAllString(text, "")
		}
		if problem := terminalSafe(text); problem != "" {
			add("stdout has %s", problem)
		}
	}
	switch format {
	case "markdown", "github":
		problems = append(problems, markdownProblems(out)...)
	case "folded", "difffolded":
		counts := 1
		if format == "difffolded" {
			counts = 2
		}
		line := regexp.MustCompile(fmt.Sprintf(`^[^\n]+( [0-9]+){%d}$`, counts))
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if l != "" && !line.MatchString(l) {
				add("a line that is no stack and %d count(s): %.200q", counts, l)
			}
		}
	case "csv":
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			add("CSV: %v", err)
			break
		}
		if len(recs) == 0 || recs[0][0] != "section" {
			add("CSV does not start with its header: %.200q", out)
		}
		for _, rec := range recs {
			for _, c := range rec {
				if c != "" && (strings.IndexByte("=@\t\r", c[0]) >= 0 || strings.IndexByte("+-", c[0]) >= 0 && len(c) > 1 && !strings.ContainsRune("0123456789.", rune(c[1]))) {
					add("a spreadsheet evaluates cell %.80q", c)
				}
			}
		}
	case "json":
		if problem := terminalSafe(out); problem != "" {
			add("stdout has %s", problem)
		}
		dec := json.NewDecoder(strings.NewReader(out))
		var doc any
		if err := dec.Decode(&doc); err != nil {
			add("JSON: %v", err)
		} else if _, err := dec.Token(); err != io.EOF {
			add("JSON: more than one value (%v)", err)
		} else {
			problems = append(problems, shareProblems(out)...)
		}
	case "svg":
		problems = append(problems, svgProblems(out)...)
	case "html":
		problems = append(problems, htmlProblems(out)...)
	}
	return problems
}

// selfDiffProblems: a profile compared with itself differs in nothing
// (no warning or caveat says so) and changes nothing (every delta of the
// JSON document is 0, and its verdict names no bucket).
func selfDiffProblems(format, out, stderr string) []string {
	var problems []string
	for _, line := range strings.Split(unwrapped(stderr), "\n") {
		if strings.HasPrefix(line, "profdiff: warning: ") && strings.Contains(line, " differ") {
			problems = append(problems, fmt.Sprintf("compared with itself: %.300q", line))
		}
	}
	if format != "json" {
		return problems
	}
	var doc struct {
		Buckets, Methods, Peek []map[string]any
		Verdict                struct {
			Bucket  string
			Caveats []struct{ Code string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return problems // formatProblems says so
	}
	for _, row := range slices.Concat(doc.Buckets, doc.Methods, doc.Peek) {
		for k, v := range row {
			if strings.Contains(k, "delta") && v != 0.0 {
				problems = append(problems, fmt.Sprintf("compared with itself: %s %v in %.300v", k, v, row))
			}
		}
	}
	if doc.Verdict.Bucket != "" {
		problems = append(problems, fmt.Sprintf("compared with itself, the verdict names %q", doc.Verdict.Bucket))
	}
	for _, c := range doc.Verdict.Caveats {
		if strings.HasSuffix(c.Code, "-differ") {
			problems = append(problems, fmt.Sprintf("compared with itself: caveat %s", c.Code))
		}
	}
	return problems
}

// shareProblems: in the JSON document of top or diff every share of a
// bucket or method row (share, base, new, bucket_share) is a fraction
// 0..1, and each side's bucket shares sum to 1, or to 0 for a side
// without samples.
func shareProblems(out string) []string {
	var doc struct{ Buckets, Methods []map[string]any }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return nil // formatProblems says so
	}
	var problems []string
	sums := map[string]float64{}
	for i, row := range slices.Concat(doc.Buckets, doc.Methods) {
		for _, k := range []string{"share", "base", "new", "bucket_share"} {
			v, ok := row[k].(float64)
			if !ok {
				continue
			}
			if v < 0 || v > 1+1e-9 {
				problems = append(problems, fmt.Sprintf("%s %v of %.200v is no fraction", k, v, row))
			}
			if i < len(doc.Buckets) {
				sums[k] += v
			}
		}
	}
	for k, sum := range sums {
		if math.Abs(sum) > 1e-9 && math.Abs(sum-1) > 1e-6 {
			problems = append(problems, fmt.Sprintf("the buckets' %s sums to %v", k, sum))
		}
	}
	return problems
}

// svgTags are the elements profdiff's pictures are drawn with.
var svgTags = map[string]bool{"svg": true, "g": true, "rect": true, "text": true, "title": true, "line": true,
	"defs": true, "pattern": true, "polyline": true, "circle": true, "a": true, "style": true}

// svgProblems: an svg picture is well-formed XML of svgTags only, so a
// name is text wherever it lands.
func svgProblems(out string) []string {
	dec := xml.NewDecoder(strings.NewReader(out))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return []string{fmt.Sprintf("SVG is not well-formed XML: %v", err)}
		}
		if el, ok := tok.(xml.StartElement); ok && !svgTags[el.Name.Local] {
			return []string{fmt.Sprintf("SVG element <%s> that profdiff does not draw", el.Name.Local)}
		}
	}
}

// htmlTags are the elements of profdiff's html page (svgTags included:
// the page draws its pictures inline).
var htmlTags = map[string]bool{"html": true, "head": true, "meta": true, "style": true, "body": true, "section": true,
	"div": true, "p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "b": true, "code": true, "table": true, "thead": true,
	"tbody": true, "tr": true, "th": true, "td": true, "canvas": true, "details": true, "summary": true, "span": true,
	"ul": true, "li": true, "br": true, "input": true, "link": true, "script": true}

var (
	htmlOpen   = regexp.MustCompile(`^<script( type="application/json" id="[a-z0-9-]+")?>`)
	htmlTag    = regexp.MustCompile(`</?([A-Za-z][A-Za-z0-9-]*)`)
	htmlScript = regexp.MustCompile(`(?s)<script>.*?</script>`) // the page's code
)

// htmlProblems: the html page's scripts are its own (one of code, the
// rest JSON with no '<' in it) and every tag outside them is one
// the page is made of, so a name is text wherever it lands.
func htmlProblems(out string) []string {
	var problems []string
	var rest strings.Builder
	code := 0
	for s := out; s != ""; {
		i := strings.Index(s, "<script")
		if i < 0 {
			rest.WriteString(s)
			break
		}
		rest.WriteString(s[:i])
		s = s[i:]
		open := htmlOpen.FindStringSubmatch(s)
		end := strings.Index(s, "</script>")
		if open == nil || end < 0 {
			return append(problems, fmt.Sprintf("a <script> not of the page's: %.200q", s))
		}
		body := s[len(open[0]):end]
		if open[1] == "" {
			code++
		} else if i := strings.IndexByte(body, '<'); i >= 0 || !json.Valid([]byte(body)) {
			problems = append(problems, fmt.Sprintf("the page's JSON data is not JSON without a '<': %.200q", body[max(i, 0):]))
		}
		s = s[end+len("</script>"):]
	}
	if strings.Contains(rest.String(), "</script") {
		problems = append(problems, "a </script> outside a script")
	}
	if code > 1 {
		problems = append(problems, fmt.Sprintf("%d scripts of code, not the page's one", code))
	}
	for _, m := range htmlTag.FindAllStringSubmatch(rest.String(), -1) {
		if name := strings.ToLower(m[1]); !htmlTags[name] && !svgTags[name] {
			problems = append(problems, fmt.Sprintf("an element <%s> the page is not made of", name))
		}
	}
	return problems
}

// firstDiff shows where a and b first differ.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Sprintf("at byte %d: %.200q\nthen:      %.200q", i, a[max(0, i-40):], b[max(0, i-40):])
}

// pipelineSeeds are small real profiles: files made by real producers
// that the repository holds, profiles runtime/pprof and runtime/trace
// write now, and the hostile names of TestHostileNamesInEveryFormat as
// pprof.
func pipelineSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, path := range []string{
		"../../profile/otlp/testdata/cpu-base.pb.gz", // runtime/pprof CPU profile
		"../../profile/otlp/testdata/heap.pb.gz",     // runtime/pprof heap profile
		"../../profile/speedscope/testdata/pprof.speedscope.json",
		"../../profile/jfr/testdata/ap2.9-cpu.jfr",
		"../../profile/jfr/testdata/ap4.2.1-lock.jfr",
		"../../profile/testdata/lookalike/ghc-fib.prof", // refused: GHC's profile
		net10,
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	seeds = append(seeds, runtimeSeeds(f)...)

	// The hostile names, as a CPU profile and as a mutex profile whose
	// holders they are.
	names := seedNames()
	seeds = append(seeds,
		namedPprof(f, names, []string{"samples/count", "cpu/nanoseconds"}, 1, 1e7, "", func(n int64) []int64 { return []int64{n, n * 1e7} }),
		namedPprof(f, names, []string{"contentions/count", "delay/nanoseconds"}, 0, 1, "sync.(*Mutex).Unlock", func(n int64) []int64 { return []int64{n, n * 1e6} }),
		oddPprof(f))

	return seeds
}

// seedNames are the hostile names of TestHostileNamesInEveryFormat (the
// 1 MiB one cut to 10 KiB), a script and bytes that are not UTF-8.
func seedNames() []string {
	names := slices.Clone(hostileNames)
	names[len(names)-1] = names[len(names)-1][:10<<10]
	return append(names, "main.script<script>alert(1)</script>", "main.bad\xff\xfeutf8")
}

// recipeSeeds are recipes (recipePprof) of odd shapes: the seed names, a
// stack 5,000 frames deep, one sample, values near the int64 maximum,
// bidi controls, labels and a sample with no stack.
func recipeSeeds() [][]byte {
	var deep strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&deep, "f%d;", i%7)
	}
	var flat strings.Builder
	flat.WriteByte(1) // samples and cpu
	for _, n := range seedNames() {
		fmt.Fprintf(&flat, "main.main;%s 3\n", strings.ReplaceAll(strings.ReplaceAll(n, ";", ","), "\n", `\n`))
	}
	return [][]byte{
		[]byte(flat.String()),
		[]byte("\x00" + strings.TrimSuffix(deep.String(), ";") + " 1\nf0 1\n"),
		[]byte("\x00main.one 1\n"),
		[]byte("\x04a;b 4611686018427387903\nc 4611686018427387903\n"),
		[]byte("\x85a;\u202eb\u202c;\u2066c 5\nsync.(*Mutex).Lock;runtime.gopark 0\n#pid=1;#tid=\x1b[2J;x 1\n 7\n"),
	}
}

// recipeTypes are the sample types a recipe picks from.
var recipeTypes = []*pprofile.ValueType{
	{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}, {Type: "delay", Unit: "nanoseconds"},
	{Type: "contentions", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}, {Type: "wall", Unit: "nanoseconds"},
	{Type: "goroutine", Unit: "count"},
}

// recipePprof writes with the pprof library the profile recipe says, a
// profile that loads whatever the recipe, so that a mutation of it meets
// the engine and the renderers rather than a reader's refusal. The first
// byte picks one to three sample types (recipeTypes, from (b/3)%7 on,
// b%3+1 of them), a 10 ms period when its 0x80 bit is set and a 10 s
// duration when its 0x40 bit is; each further line is a sample, folded
// stacks' way: frames root first split at ';', then a space and the
// value (the line's length when it is no number) for every type. A frame
// "#k=v" is a label instead, and `\n` in a name a line break.
func recipePprof(t *testing.T, recipe []byte) []byte {
	var head byte
	if len(recipe) > 0 {
		head, recipe = recipe[0], recipe[1:]
	}
	p := &pprofile.Profile{}
	for i := range int(head%3) + 1 {
		p.SampleType = append(p.SampleType, recipeTypes[(int(head/3)+i)%len(recipeTypes)])
	}
	p.PeriodType = p.SampleType[0]
	if head&0x80 != 0 {
		p.Period = 1e7
	}
	if head&0x40 != 0 {
		p.DurationNanos = 10e9
	}
	locs := map[string]*pprofile.Location{}
	for _, line := range strings.Split(string(recipe), "\n") {
		stack, value := line, int64(len(line))
		if i := strings.LastIndexByte(line, ' '); i >= 0 {
			if v, err := strconv.ParseInt(line[i+1:], 10, 64); err == nil {
				stack, value = line[:i], v
			}
		}
		s := &pprofile.Sample{}
		for _, name := range strings.Split(stack, ";") {
			if k, v, ok := strings.Cut(strings.TrimPrefix(name, "#"), "="); ok && strings.HasPrefix(name, "#") {
				if s.Label == nil {
					s.Label = map[string][]string{}
				}
				s.Label[k] = append(s.Label[k], v)
				continue
			}
			if name == "" {
				continue
			}
			name = strings.ReplaceAll(name, `\n`, "\n")
			loc, ok := locs[name]
			if !ok {
				fn := &pprofile.Function{ID: uint64(len(locs) + 1), Name: name, SystemName: name}
				loc = &pprofile.Location{ID: fn.ID, Line: []pprofile.Line{{Function: fn}}}
				locs[name] = loc
				p.Function, p.Location = append(p.Function, fn), append(p.Location, loc)
			}
			s.Location = append([]*pprofile.Location{loc}, s.Location...) // leaf first
		}
		for range p.SampleType {
			s.Value = append(s.Value, value)
		}
		p.Sample = append(p.Sample, s)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// runtimeSeeds: this process's goroutine profile, and block and mutex
// profiles and an execution trace of a few milliseconds of channel waits
// and lock contention, as runtime/pprof and runtime/trace write them.
func runtimeSeeds(f *testing.F) [][]byte {
	write := func(name string, debug int) []byte {
		var buf bytes.Buffer
		if err := pprof.Lookup(name).WriteTo(&buf, debug); err != nil {
			f.Fatal(err)
		}
		return buf.Bytes()
	}
	seeds := [][]byte{write("goroutine", 0)}

	runtime.SetBlockProfileRate(1)
	defer runtime.SetBlockProfileRate(0)
	defer runtime.SetMutexProfileFraction(runtime.SetMutexProfileFraction(1))
	var tr bytes.Buffer
	if err := trace.Start(&tr); err != nil {
		f.Logf("no execution trace seed: %v", err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ch := make(chan int)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				mu.Lock()
				if g == 0 {
					ch <- i
				}
				mu.Unlock()
			}
		}()
	}
	for range 50 {
		<-ch
	}
	wg.Wait()
	trace.Stop()
	seeds = append(seeds, write("block", 0), write("mutex", 0))
	if tr.Len() <= pipelineSeedMax {
		seeds = append(seeds, tr.Bytes())
	} else {
		f.Logf("no execution trace seed: %d bytes", tr.Len())
	}
	return seeds
}

// oddPprof is a profile, written with the pprof library, of shapes a
// reader lets through: three sample types, no duration, a sample with no
// stack, one of a single frame, one 5,000 frames deep, one with many
// labels, values near the int64 maximum and of 0.
func oddPprof(f *testing.F) []byte {
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}, {Type: "alloc_space", Unit: "bytes"}},
		PeriodType: &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     1e7,
	}
	var locs []*pprofile.Location
	for i, name := range []string{"runtime.main", "main.main", "main.work", "sync.(*Mutex).Lock", "runtime.selectgo"} {
		fn := &pprofile.Function{ID: uint64(i + 1), Name: name, SystemName: name, Filename: "main.go"}
		loc := &pprofile.Location{ID: fn.ID, Address: uint64(0x1000 + i), Line: []pprofile.Line{{Function: fn, Line: int64(i + 1)}}}
		p.Function, p.Location, locs = append(p.Function, fn), append(p.Location, loc), append(locs, loc)
	}
	deep := make([]*pprofile.Location, 5000)
	for i := range deep {
		deep[i] = locs[2+i%2]
	}
	labels := map[string][]string{}
	for i := range 40 {
		labels[fmt.Sprintf("label%d", i)] = []string{fmt.Sprintf("value\x1b[2J%d", i)}
	}
	p.Sample = []*pprofile.Sample{
		{Value: []int64{1, 1e7, 0}},
		{Location: locs[4:5], Value: []int64{1 << 60, 1 << 61, 1 << 62}},
		{Location: []*pprofile.Location{locs[3], locs[1], locs[0]}, Value: []int64{5, 5e7, 1 << 40}, Label: labels, NumLabel: map[string][]int64{"bytes": {1 << 62}}},
		{Location: deep, Value: []int64{2, 2e7, 64}},
		{Location: locs[2:3], Value: []int64{0, 0, 0}},
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}

// The checks of FuzzPipeline find what they look for.
func TestPipelineChecks(t *testing.T) {
	for _, c := range []struct{ format, out string }{
		{"html", "<html><body><p>main.<img src=x onerror=alert(1)></p></body></html>"},
		{"html", "<html><script>page()</script><p><script>alert(1)</script></p></html>"},
		{"html", `<html><script type="application/json" id="flame1">{"name":"</script><b>"}</script></html>`},
		{"svg", "<svg><text>a<b</text></svg>"},
		{"svg", "<svg><text>a</text><img/></svg>"},
		{"csv", "section,name\nmethod,=1+1\n"},
		{"csv", "section,name\nmethod\n"},
		{"json", `{"a": NaN}`},
		{"json", "{}\nprofdiff: warning: x\n"},
		{"json", `{"buckets":[{"bucket":"cpu","share":0.5},{"bucket":"gc","share":0.4}]}`},
		{"json", `{"methods":[{"name":"f","base":1.5}]}`},
		{"folded", "main;f\n"},
		{"difffolded", "main;f 1\n"},
		{"table", "main.f\x1b[2J\n"},
		{"markdown", "| a | b |\n|---|---|\n| x | y | z |\n"},
	} {
		if len(formatProblems(c.format, c.out, false)) == 0 {
			t.Errorf("%s %q: no problem found", c.format, c.out)
		}
	}
	if p := formatProblems("folded", "main;f 1\n", false); len(p) > 0 {
		t.Errorf("a folded line: %q", p)
	}
	if p := selfDiffProblems("json", `{"buckets":[{"bucket":"cpu","delta":0.5}],"verdict":{"bucket":"cpu"}}`, ""); len(p) != 2 {
		t.Errorf("a self-diff's delta and verdict: %q", p)
	}
}
