package callgrind

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/producertest"
)

// folded returns a profile's stacks, root first, with the value of the
// sample type at index i, summed per stack.
func folded(p *pprofile.Profile, i int) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		var names []string
		for j := len(s.Location) - 1; j >= 0; j-- {
			names = append(names, s.Location[j].Line[0].Function.Name)
		}
		out[strings.Join(names, ";")] += s.Value[i]
	}
	return out
}

// parseFile reads a callgrind file; it must be sniffed, read without
// error and valid.
func parseFile(t *testing.T, path string) (*pprofile.Profile, []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	var p *pprofile.Profile
	var warns []string
	switch {
	case err != nil:
	case !Looks(string(data)):
		err = errors.New("Looks is false")
	default:
		if p, warns, err = Parse(string(data)); err == nil {
			err = p.CheckValid()
		}
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p, warns
}

// TestCorpus reads speedscope's five callgrind samples (in the shared
// corpus): the same program written plainly, with name compression, with
// subposition compression, with two Xdebug events, and with a cfn= that
// holds for one call only. Each gives the stacks speedscope's importer
// gives (the call graph split evenly), and the compressed files the
// plain file's stacks.
func TestCorpus(t *testing.T) {
	dir := filepath.Join(corpus.Need(t), "speedscope")
	plain := map[string]int64{"main": 20, "main;func1": 100, "main;func1;func2": 300, "main;func2": 400}
	for _, tc := range []struct {
		file  string
		event int
		want  map[string]int64
	}{
		{"callgrind.example.log", 0, plain},
		{"callgrind.name-compression.log", 0, plain},
		// Its costs are relative (-300 after 400 is 100, +400 after 300
		// is 700): the plain file's numbers.
		{"callgrind.subposition-compression.log", 0, plain},
		// Time_(10ns): wall nanoseconds, ten times the plain numbers.
		{"callgrind.multiple-event-types.log", 0, map[string]int64{"main": 200, "main;func1": 1000, "main;func1;func2": 3000, "main;func2": 4000}},
		{"callgrind.multiple-event-types.log", 1, map[string]int64{"main": 15000, "main;func1": 15000, "main;func1;func2": 5000, "main;func2": 3000}},
		// gamma is called by alpha and by delta, 10 each, but costs 10:
		// each call keeps its own inclusive cost.
		{"callgrind.cfn-reset.log", 0, map[string]int64{"alpha": 10, "alpha;beta": 10, "alpha;delta": 10, "alpha;delta;gamma": 10, "alpha;gamma": 10}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p, warns := parseFile(t, filepath.Join(dir, "sample__profiles__callgrind__"+tc.file))
			if len(warns) > 0 {
				t.Errorf("warnings %q", warns)
			}
			got := folded(p, tc.event)
			for k, v := range got {
				if v == 0 {
					delete(got, k)
				}
			}
			if !equal(got, tc.want) {
				t.Errorf("event %s: stacks %v, want %v", p.SampleType[tc.event].Type, got, tc.want)
			}
		})
	}
}

func equal(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// recordLock builds testdata/lock.c and runs it under callgrind with the
// given arguments, returning the output file.
func recordLock(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	bin := producertest.LockProgram(t, dir)
	out := filepath.Join(dir, "callgrind.out")
	producertest.Callgrind(t, out, bin, nil, args...)
	return out
}

// TestValgrind reads a real callgrind file of a threaded C program: the
// threads' work, which callgrind files under clone (called by the
// parent with the clone's own small cost), is in the stacks, the stacks
// hold the file's total to within 0.5% (callgrind's inclusive costs are
// not exact), and held_work, run under the mutex, is nearly all of it.
func TestValgrind(t *testing.T) {
	out := recordLock(t, "1")
	p, warns := parseFile(t, out)
	if len(warns) > 0 {
		t.Errorf("warnings %q", warns)
	}
	if p.SampleType[0].Type != "Ir" || p.DefaultSampleType != "Ir" {
		t.Errorf("sample types %v, default %s", p.SampleType, p.DefaultSampleType)
	}
	stacks := folded(p, 0)
	var total int64
	for _, v := range stacks {
		total += v
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(data), "\nsummary: ")
	line, _, _ := strings.Cut(after, "\n")
	summary, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil {
		t.Fatalf("no summary: line in callgrind's file: %v", err)
	}
	if d := total - summary; d > summary/200 || -d > summary/200 {
		t.Errorf("stacks hold %d instructions, the file's summary %d", total, summary)
	}
	if held := stacks["clone;start_thread;worker;held_work"]; held < total*8/10 {
		var keys []string
		for k := range stacks {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Errorf("held_work under worker has %d of %d instructions; stacks %q", held, total, keys[:min(len(keys), 20)])
	}
	lock := false
	for k, v := range stacks {
		lock = lock || v > 0 && strings.HasPrefix(k, "clone;start_thread;worker;pthread_mutex_lock")
	}
	if !lock {
		t.Error("no pthread_mutex_lock under worker")
	}
}

// TestMalformed checks that broken files give an ErrSyntax error naming
// the line and what is wrong, never a panic.
func TestMalformed(t *testing.T) {
	const head = "# callgrind format\nevents: Ir\n"
	for _, tc := range []struct{ name, in, want string }{
		{"no events", "# callgrind format\nfn=main\n1 2\n", "line 3: a cost line before the events: line"},
		{"no fn", head + "1 2\n", "line 3: a cost line before any fn= line"},
		{"undefined id", head + "fn=(3)\n1 2\n", "line 3: fn=(3) refers to a name not defined before it"},
		{"redefined id", head + "fn=(1) a\nfn=(1) b\n", "line 4: fn=(1) defined again"},
		{"too many costs", head + "fn=main\n1 2 3\n", "line 4: 2 costs but 1 events"},
		{"negative cost", head + "fn=main\n1 -2\n", "line 4: cost \"-2\": negative"},
		{"not a number", head + "fn=main\n1 x\n", "line 4: cost \"x\""},
		{"garbage", head + "fn=main\nhello world\n", "line 4: unrecognized line"},
		{"call at end", head + "fn=main\ncfn=f\ncalls=1 1\n", "calls= line without the cost line"},
		{"call without cfn", head + "fn=main\ncalls=1 1\n1 2\n", "calls= without fn= and cfn="},
		{"positions", "# callgrind format\npositions: a b c\n", "positions:"},
		{"huge", head + "fn=main\n1 99999999999999999999\n", "not a number in range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse(tc.in)
			if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrSyntax saying %q", err, tc.want)
			}
		})
	}
}

// TestRecursionAndThreads checks the expansion on a graph with a cycle (a
// calls b calls a, inclusive costs as callgrind counts them: the inner
// a's 5 inside b's 15) and a root that is also called (clone, entered by a
// new thread with more cost than its parent-side call): the cycle's
// weight stays with the caller, the root keeps what its callers do not
// account for, and no cost is lost.
func TestRecursionAndThreads(t *testing.T) {
	in := "# callgrind format\nevents: Ir\n" +
		"fn=main\n1 5\ncfn=a\ncalls=1 1\n1 20\ncfn=clone\ncalls=1 1\n1 2\n" +
		"fn=a\n1 10\ncfn=b\ncalls=1 1\n1 15\n" +
		"fn=b\n1 10\ncfn=a\ncalls=1 1\n1 5\n" +
		"fn=clone\n1 2\ncfn=work\ncalls=1 1\n1 100\n" +
		"fn=work\n1 100\n"
	p, _, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	got := folded(p, 0)
	var total int64
	for _, v := range got {
		total += v
	}
	if total != 5+10+10+2+100 {
		t.Errorf("total %d, want the self costs' 127: %v", total, got)
	}
	if got["clone;work"] < 98 || got["main;a;b"] == 0 {
		t.Errorf("stacks %v", got)
	}
}

// TestValgrindEveryOption reads a callgrind file with what callgrind's
// options add: instruction addresses (positions: instr line, in hex with
// subposition compression), jumps (jump=, jcnd=, jfi=), cache and branch
// simulation (13 events) and several dumps combined into one file (a part
// each, names compressed across them). Every event is a sample type in
// the file's order, and each one's stacks hold the sum of the parts'
// totals: lines to within 0.5%.
func TestValgrindEveryOption(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "callgrind.out")
	producertest.Callgrind(t, out, producertest.LockProgram(t, dir), []string{"--dump-instr=yes", "--collect-jumps=yes",
		"--cache-sim=yes", "--branch-sim=yes", "--combine-dumps=yes", "--dump-every-bb=300000"}, "1")
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if n := strings.Count(text, "\npart: "); n < 3 || !strings.Contains(text, "\npositions: instr line\n") || !strings.Contains(text, "\njcnd=") {
		t.Fatalf("callgrind wrote %d parts, positions %v, jumps %v: not the file this test is for", n, strings.Contains(text, "instr line"), strings.Contains(text, "jcnd="))
	}
	var events []string
	var totals []int64
	for _, line := range strings.Split(text, "\n") {
		if ev, ok := strings.CutPrefix(line, "events: "); ok && events == nil {
			events = strings.Fields(ev)
			totals = make([]int64, len(events))
		}
		if tl, ok := strings.CutPrefix(line, "totals: "); ok {
			for i, f := range strings.Fields(tl) {
				v, _ := strconv.ParseInt(f, 10, 64)
				totals[i] += v
			}
		}
	}
	p, warns := parseFile(t, out)
	if len(warns) > 0 {
		t.Errorf("warnings %q", warns)
	}
	if len(p.SampleType) != len(events) || len(events) < 10 {
		t.Fatalf("sample types %v, events %v", p.SampleType, events)
	}
	for i, ev := range events {
		if p.SampleType[i].Type != ev {
			t.Errorf("sample type %d is %s, want %s", i, p.SampleType[i].Type, ev)
		}
		var sum int64
		for _, s := range p.Sample {
			sum += s.Value[i]
		}
		// The stacks hold the self costs plus what callers' inclusive
		// costs claim beyond a function's own total (see the package
		// doc): within 0.5% for instructions; cache misses, a few
		// hundred here, are up to 3% over (measured with valgrind 3.19).
		tol := totals[i] / 200
		if i > 0 {
			tol = totals[i] / 20
		}
		if d := sum - totals[i]; d > tol+1 || d < -1-totals[i]/1000 {
			t.Errorf("%s: stacks hold %d, the parts' totals %d", ev, sum, totals[i])
		}
	}
	if held := folded(p, 0)["clone;start_thread;worker;held_work"]; held < totals[0]*8/10 {
		t.Errorf("held_work under worker has %d of %d instructions", held, totals[0])
	}
}
