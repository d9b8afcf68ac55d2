package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/synth"
)

const (
	net10 = "../../testdata/dotnet/net10.folded"
	net11 = "../../testdata/dotnet/net11.folded"
)

// profdiff runs the command in-process and returns stdout, stderr and the
// exit status main would use.
func profdiff(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	code := exitCode(err, &errb)
	return out.String(), errb.String(), code
}

// fixtures is the folder of what several tests share (sharedDemo): made
// at the first fixtureDir, removed when the tests end (TestMain).
var fixtures struct {
	sync.Mutex
	root string
}

// fixtureDir returns a new folder under fixtures' root, named after
// pattern (os.MkdirTemp), that lives until the test binary's tests end.
func fixtureDir(pattern string) (string, error) {
	fixtures.Lock()
	defer fixtures.Unlock()
	if fixtures.root == "" {
		root, err := os.MkdirTemp("", "profdiff-fixtures")
		if err != nil {
			return "", err
		}
		fixtures.root = root
	}
	return os.MkdirTemp(fixtures.root, pattern)
}

// removeFixtures removes fixtures' root, after the tests.
func removeFixtures() {
	fixtures.Lock()
	defer fixtures.Unlock()
	if fixtures.root != "" {
		os.RemoveAll(fixtures.root)
	}
}

// unwrapped is a command's stderr with each message on one line again:
// the lines a message wraps onto at the width (indented two spaces, see
// messages) joined to it.
func unwrapped(stderr string) string { return strings.ReplaceAll(stderr, "\n  ", " ") }

func TestDiffDefaultDemo(t *testing.T) {
	out, stderr, code := profdiff(t, "", "diff", "--format", "markdown", net10, net11)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Notes say what they compare: shares, as the folded profiles have no
	// duration.
	for _, want := range []string{
		`\*\*Total wait/synchronization: 80\.4% → 92\.3%\*\*`,
		`\| Method `,
		`\+4\.59pp \(18x share\)`,
		`\+5\.39pp \(doubled share\)`,
		`\+15\.51pp \(was in native\)`,
		`WaitSubsystem\+ThreadWaitInfo\.Wait`,
		`\+4\.56pp \(new\)`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("markdown lacks %s", want)
		}
	}
	// The name is shortened to fit a PR comment, whole under Full names.
	if !strings.Contains(out, "- `Threading.LowLevelLock.WaitAndAcquire`: `System.Threading.LowLevelLock.WaitAndAcquire`\n") {
		t.Errorf("no full name of LowLevelLock.WaitAndAcquire:\n%s", out)
	}
	if !regexp.MustCompile("(?m)^\\| `Threading\\.LowLevelLock\\.WaitAndAcquire` +\\| +0\\.27% \\| +4\\.86% \\| +\\+4\\.59pp \\(18x share\\) \\| lock-contention +\\|$").MatchString(out) {
		t.Errorf("no LowLevelLock.WaitAndAcquire row with 0.27%% → 4.86%%, 18x share, lock-contention:\n%s", out)
	}
	if stderr != "" {
		t.Errorf("unexpected stderr: %s", stderr)
	}
}

func TestExitCodesAndErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pb.gz")
	os.WriteFile(empty, nil, 0o644)
	garbage := filepath.Join(dir, "garbage.bin")
	os.WriteFile(garbage, []byte{0x00, 0x01, 0x02, 0xff, 0xfe, 0x10, 0x11}, 0o644)
	rules := filepath.Join(dir, "bad.rules")
	os.WriteFile(rules, []byte("go\tnope\tstrong\t^x$\n"), 0o644)

	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "no command given"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"help"}, 0, ""},
		{[]string{"diff", "--help"}, 0, ""},
		{[]string{"diff", net10}, 2, "want two profiles"},
		{[]string{"diff", "--format", "xml", net10, net11}, 2, `unknown format "xml"`},
		{[]string{"diff", "--by", "callee", net10, net11}, 2, `--by: unknown attribution "callee"`},
		{[]string{"diff", "--focus", "(", net10, net11}, 2, "--focus: invalid regexp"},
		{[]string{"diff", "--max-size", "lots", net10, net11}, 2, "--max-size"},
		{[]string{"diff", "--kind", "weird", net10, net11}, 2, "--kind"},
		{[]string{"diff", net10, filepath.Join(dir, "missing.pb.gz")}, 2, "missing.pb.gz: no such file or directory"},
		{[]string{"diff", net10, empty}, 2, "empty.pb.gz: empty file"},
		{[]string{"diff", net10, garbage}, 2, "garbage.bin: "},
		{[]string{"diff", "--base", filepath.Join(dir, "*.nothing"), "--new", net11}, 2, "matches no files"},
		{[]string{"diff", "--base", net10, net11}, 2, "not both"},
		{[]string{"diff", "--rules", rules, net10, net11}, 2, `bad.rules:1: unknown bucket "nope"`},
		{[]string{"diff", "-", "-"}, 2, "standard input (-) can be read only once"},
		{[]string{"top"}, 2, "at least one profile"},
		// A text report whose rows end in numbers, made by GHC: not stacks.
		{[]string{"top", filepath.Join("..", "..", "profile", "testdata", "lookalike", "ghc-fib.prof")}, 2, "GHC cost-centre report (`+RTS -p` .prof text), a table, not stacks (fold it with stackcollapse-ghc"},
		{[]string{"rules", "--runtime", "cobol"}, 2, `no runtime "cobol"`},
	}
	for _, c := range cases {
		_, stderr, code := profdiff(t, "", c.args...)
		if code != c.code {
			t.Errorf("profdiff %s: exit %d, want %d (stderr %q)", strings.Join(c.args, " "), code, c.code, stderr)
		}
		if c.msg != "" && !strings.Contains(stderr, c.msg) {
			t.Errorf("profdiff %s: stderr %q lacks %q", strings.Join(c.args, " "), stderr, c.msg)
		}
		if code == 2 && strings.Count(strings.TrimSpace(stderr), "\n") > 1 && !strings.Contains(stderr, "Usage") {
			t.Errorf("profdiff %s: error is not one line: %q", strings.Join(c.args, " "), stderr)
		}
	}
}

func TestWarningsStayOutOfData(t *testing.T) {
	dir := t.TempDir()
	// 40 samples per side: a low-sample warning is due.
	a := filepath.Join(dir, "a.folded")
	b := filepath.Join(dir, "b.folded")
	os.WriteFile(a, []byte("# comment\nmain;f 30\nmain;g 10\n"), 0o644)
	os.WriteFile(b, []byte("main;f 10\nmain;g 30\n"), 0o644)
	for _, f := range []string{"json", "csv"} {
		out, stderr, code := profdiff(t, "", "diff", "--format", f, a, b)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stderr, "warning: base: only 40 samples") || !strings.Contains(stderr, "a.folded: line 1: skipped comment line") {
			t.Errorf("%s: stderr lacks warnings: %q", f, stderr)
		}
		if strings.Contains(out, "warning") || strings.Contains(out, "comment") {
			t.Errorf("%s output carries warnings:\n%s", f, out)
		}
	}
}

func TestStdinAndURLSources(t *testing.T) {
	data, err := os.ReadFile(net11)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/profile" {
			http.Error(w, "unknown profile", http.StatusNotFound)
			return
		}
		w.Write(data)
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server not on loopback: %s", srv.URL)
	}
	base, _ := os.ReadFile(net10)
	out, stderr, code := profdiff(t, string(base), "diff", "--format", "csv", "-", srv.URL+"/debug/pprof/profile?seconds=1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "bucket,lock-contention,lock-contention,0.0178,0.0646") {
		t.Errorf("stdin/URL diff differs from the file diff:\n%s", out)
	}
	_, stderr, code = profdiff(t, "", "top", srv.URL+"/debug/pprof/nope")
	if code != 2 || !strings.Contains(stderr, "HTTP 404") {
		t.Errorf("404 URL: exit %d, %q", code, stderr)
	}
}

func TestOutputPprof(t *testing.T) {
	out := filepath.Join(t.TempDir(), "diff.pb.gz")
	_, stderr, code := profdiff(t, "", "diff", "--output-pprof", out, net10, net11)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := pprofile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var base, new, total int64
	for _, s := range p.Sample {
		v := s.Value[0]
		if len(s.Label["pprof::base"]) == 1 {
			if v > 0 {
				t.Fatalf("base sample not negated: %d", v)
			}
			base += v
		} else {
			new += v
		}
		total += v
	}
	if base != -10000 || new != 10000 || total != 0 {
		t.Errorf("diff profile base %d, new %d, sum %d; want -10000, 10000, 0", base, new, total)
	}
}

func TestTopAndRules(t *testing.T) {
	out, stderr, code := profdiff(t, "", "top", "--top", "3", "--format", "csv", net11)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1+6+3 || !strings.HasPrefix(lines[7], "method,System.Threading.LowLevelLifoSemaphore.WaitNative,wait,0.34,3400") {
		t.Errorf("top csv:\n%s", out)
	}
	out, _, code = profdiff(t, "", "rules", "--runtime", "go", "--format", "csv")
	if code != 0 || !strings.Contains(out, "go,lock-contention,\"strong,notleaf\",^runtime\\.lock2$") {
		t.Errorf("rules csv (exit %d):\n%s", code, out)
	}
	// A user rule file is listed first and wins.
	rf := filepath.Join(t.TempDir(), "my.rules")
	os.WriteFile(rf, []byte("# mine\nmyapp\tlock-contention\tstrong\tWriteStringValue\tour JSON writer takes a lock\n"), 0o644)
	out, _, code = profdiff(t, "", "top", "--rules", rf, "--format", "csv", "--top", "0", net11)
	if code != 0 || !strings.Contains(out, "WriteStringValue(value class System.String),lock-contention") {
		t.Errorf("user rule not applied (exit %d):\n%s", code, out)
	}
}

// A pprof profile with a sample location ID that is no location's is one
// pprof refuses. The streaming decoder's checks leave those ids to the
// walk, which finds it after the profile was added: diff, top and gate
// still exit 2 with pprof's error naming the file, and write no report.
func TestRefusedProfileExits2(t *testing.T) {
	dir := t.TempDir()
	cfg := synth.DefaultConfig()
	cfg.Stacks, cfg.Functions = 2000, 300
	good, bad := filepath.Join(dir, "good.pb.gz"), filepath.Join(dir, "bad.pb.gz")
	p := synth.Generate(cfg)
	writePprofFile(t, good, p)
	smp := p.Sample[len(p.Sample)/2]
	smp.Location = append([]*pprofile.Location{{ID: uint64(len(p.Location)) + 7}}, smp.Location[1:]...)
	writePprofFile(t, bad, p)
	for _, args := range [][]string{
		{"diff", good, bad},
		{"diff", bad, good},
		{"top", bad},
		{"top", good, bad},
		{"gate", "--base", good, "--new", bad},
	} {
		out, stderr, code := profdiff(t, "", args...)
		if code != 2 || out != "" || !strings.Contains(stderr, bad+": malformed pprof profile: sample has nil location") ||
			strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("profdiff %s: exit %d, stdout %d bytes, stderr %q; want 2, none, the model's error in one line", strings.Join(args, " "), code, len(out), stderr)
		}
	}
}

// A profile of nothing but the profiler's own goroutines (here fgprof's
// sampler, as a wall-clock profile of an idle program holds) is refused,
// exit 2, and the command says how to keep them; with --keep-profiler it
// loads.
func TestProfilerOnlyProfile(t *testing.T) {
	fn := &pprofile.Function{ID: 1, Name: "github.com/felixge/fgprof.Start.func1"}
	loc := &pprofile.Location{ID: 1, Line: []pprofile.Line{{Function: fn}}}
	p := &pprofile.Profile{
		SampleType: []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "time", Unit: "nanoseconds"}},
		PeriodType: &pprofile.ValueType{Type: "wallclock", Unit: "nanoseconds"}, Period: 10_000_000,
		Sample:   []*pprofile.Sample{{Location: []*pprofile.Location{loc}, Value: []int64{10, 100_000_000}}},
		Location: []*pprofile.Location{loc}, Function: []*pprofile.Function{fn},
	}
	path := filepath.Join(t.TempDir(), "wall.pb.gz")
	writePprofFile(t, path, p)
	_, stderr, code := profdiff(t, "", "top", path)
	if want := path + ": every sample (1) is of the profiler's own goroutines, which are dropped unless kept (--keep-profiler keeps them)"; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
	if _, stderr, code := profdiff(t, "", "top", "--keep-profiler", path); code != 0 {
		t.Errorf("--keep-profiler: exit %d, stderr %q", code, stderr)
	}
}
