package chrometrace

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/internal/labels"
)

// wallByThread sums the wall/nanoseconds values of p by "pid P tid T".
func wallByThread(t *testing.T, p *pprofile.Profile) map[string]int64 {
	t.Helper()
	wall := len(p.SampleType) - 1
	if st := p.SampleType[wall]; st.Type != "wall" || st.Unit != "nanoseconds" {
		t.Fatalf("last sample type is %s/%s, want wall/nanoseconds", st.Type, st.Unit)
	}
	re := regexp.MustCompile(`pid \S+ tid [^)\s]+`)
	out := map[string]int64{}
	for _, s := range p.Sample {
		th := re.FindString(s.Label[labels.Thread][0])
		out[th] += s.Value[wall]
	}
	return out
}

// TestCorpus loads every Chrome trace-event file of the corpus, those cut
// off mid-array too: each has samples, and no thread holds more time
// than the profile's duration, unless the file warns of events that
// overlap without nesting (whose overlap both keep).
func TestCorpus(t *testing.T) {
	dir := corpus.Need(t)
	f, err := os.Open(filepath.Join(dir, "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, cut := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 2 || !strings.HasPrefix(cols[1], "chrome-trace-event-json") {
			continue
		}
		n++
		data, err := os.ReadFile(filepath.Join(dir, cols[0]))
		if err != nil {
			t.Fatal(err)
		}
		if !Looks(data) {
			t.Errorf("%s: Looks is false", cols[0])
			continue
		}
		p, warns, err := Parse(data)
		if err != nil {
			t.Errorf("%s: %v", cols[0], err)
			continue
		}
		if strings.Contains(cols[1], "truncated") {
			cut++
			if len(warns) == 0 || !strings.Contains(warns[0], "ends inside its event array") {
				t.Errorf("%s: cut off, but warnings %q do not say so", cols[0], warns)
			}
		}
		if len(p.Sample) == 0 {
			t.Errorf("%s: no samples", cols[0])
			continue
		}
		var total int64
		for th, v := range wallByThread(t, p) {
			total += v
			if v < 0 || v > p.DurationNanos && !slices.ContainsFunc(warns, func(w string) bool { return strings.Contains(w, "not nested in it") }) {
				t.Errorf("%s: thread %s holds %d ns, outside 0..%d (the trace's span)", cols[0], th, v, p.DurationNanos)
			}
		}
		if total <= 0 {
			t.Errorf("%s: total %d ns", cols[0], total)
		}
		if err := p.CheckValid(); err != nil {
			t.Errorf("%s: %v", cols[0], err)
		}
	}
	if n < 30 || cut != 3 {
		t.Errorf("read %d trace-event files, %d cut off; the corpus lists about 33, 3 cut off", n, cut)
	}
}

// TestThreadTotals holds the per-thread time of a few corpus files to
// what testdata/threadtotals.py, reading the same JSON with python3,
// computes: V8 CPU samples (Chrome 65's CpuProfile event, Chrome 69's and
// 116's ProfileChunks), stackFrames samples and nested duration events.
func TestThreadTotals(t *testing.T) {
	dir := corpus.Need(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	for _, name := range []string{
		"Chrome__116__Trace-20230603T221323", "Chrome__69__simple", "Chrome__65__simple-timeline",
		"trace-event__multi-thread-with-samples", "trace-event__simple", "trace-event__multiprocess",
	} {
		file := filepath.Join(dir, "speedscope", "sample__profiles__"+name+".json")
		out, err := exec.Command(py, "testdata/threadtotals.py", file).Output()
		if err != nil {
			t.Fatalf("%s: threadtotals.py: %v", name, err)
		}
		want := map[string]int64{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			th, v, _ := strings.Cut(line, "\t")
			want[th], _ = strconv.ParseInt(v, 10, 64)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := wallByThread(t, p)
		if len(got) != len(want) {
			t.Errorf("%s: threads %v, python3 finds %v", name, got, want)
		}
		for th, w := range want {
			// Values are rounded to the nanosecond per stack.
			if d := got[th] - w; d < -int64(len(p.Sample)) || d > int64(len(p.Sample)) {
				t.Errorf("%s: %s holds %d ns, python3 finds %d", name, th, got[th], w)
			}
		}
	}
}

// TestPseudoFrames checks that V8's pseudo-frames in a DevTools trace
// carry the labels that keep them out of cpu: (idle) wait, (garbage
// collector) gc, (program) the unknown fallback; and that each of the
// three is met in the file.
func TestPseudoFrames(t *testing.T) {
	dir := corpus.Need(t)
	data, err := os.ReadFile(filepath.Join(dir, "speedscope", "sample__profiles__Chrome__69__simple.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"(idle)":              {labels.Bucket, "wait"},
		"(garbage collector)": {labels.Bucket, "gc"},
		"(program)":           {labels.Fallback, labels.Unknown},
	}
	met := map[string]bool{}
	for _, s := range p.Sample {
		leaf := s.Location[0].Line[0].Function.Name
		w, ok := want[leaf]
		if !ok {
			if len(s.Label[labels.Bucket])+len(s.Label[labels.Fallback]) > 0 {
				t.Errorf("%s: labelled %v", leaf, s.Label)
			}
			continue
		}
		met[leaf] = true
		if got := s.Label[w[0]]; len(got) != 1 || got[0] != w[1] {
			t.Errorf("%s: %s is %q, want %q", leaf, w[0], got, w[1])
		}
	}
	if len(met) != len(want) {
		t.Errorf("met %v of the pseudo-frames %v", met, want)
	}
}

// TestTdurAndUnnamed reads speedscope's fixtures of an X event that gives
// only "tdur" (epsilon, 4 µs inside beta) and of one without a name: the
// first lasts its tdur, with a warning, and the second is "(unnamed)",
// not a blank frame, as speedscope shows them.
func TestTdurAndUnnamed(t *testing.T) {
	dir := corpus.Need(t)
	for _, tc := range []struct {
		file, stack string
	}{
		{"sample__profiles__trace-event__simple.json", "alpha;beta;epsilon"},
		{"sample__profiles__trace-event__simple-object.json", "alpha;beta;(unnamed)"},
	} {
		p, warns := parseSpeedscopeSample(t, dir, tc.file)
		stacks := stacksOf(p)
		if stacks[tc.stack] != 4000 || stacks["alpha;beta"] != 8000-stacks["alpha;beta;gamma"] {
			t.Errorf("%s: stacks %v, want %s 4000 ns and alpha;beta 8000 ns less gamma's", tc.file, stacks, tc.stack)
		}
		if !slices.ContainsFunc(warns, func(w string) bool { return strings.Contains(w, "has no dur; it lasts its tdur") }) {
			t.Errorf("%s: warnings %q lack the tdur one", tc.file, warns)
		}
	}
}

// parseSpeedscopeSample parses a file of the corpus's speedscope folder.
func parseSpeedscopeSample(t *testing.T, dir, file string) (*pprofile.Profile, []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "speedscope", file))
	if err != nil {
		t.Fatal(err)
	}
	p, warns, err := Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p, warns
}

// stacksOf sums p's last value (wall nanoseconds) by stack, root first.
func stacksOf(p *pprofile.Profile) map[string]int64 {
	stacks := map[string]int64{}
	for _, s := range p.Sample {
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			names = append(names, s.Location[i].Line[0].Function.Name)
		}
		stacks[strings.Join(names, ";")] += s.Value[len(s.Value)-1]
	}
	return stacks
}

// TestEndBeforeBegin reads speedscope's fixtures of an end event written
// before its begin at the same time stamp (C at 2 µs inside A, 0-10 µs):
// the two are a zero-length event, so A holds all 10 µs, with no warning;
// and of an end that no begin matches, which is still left out with a
// warning; and a begin at an unmatched end's time stamp that has its own
// end, which it lasts to.
func TestEndBeforeBegin(t *testing.T) {
	checkStacks(t, []stacksCase{
		// A trace started inside t (its first end has no begin), and t
		// began again at that time stamp: the second t lasts to its end.
		{`[{"ph":"E","name":"t","ts":5,"pid":1,"tid":1},{"ph":"B","name":"t","ts":5,"pid":1,"tid":1},{"ph":"E","name":"t","ts":9,"pid":1,"tid":1}]`,
			map[string]int64{"t": 4000}, []string{`an end event ("t" at 5 µs) matches no open event; left out`}},
		{"sample__profiles__trace-event__zero-duration-events.json", map[string]int64{"A": 10000}, nil},
		{"sample__profiles__trace-event__mismatched-name.json", map[string]int64{"alpha": 10000}, []string{
			`an end event ("beta" at 10 µs) matches no open event; left out`,
			`a begin event ("alpha") never ends; it ends at the track's last time stamp`,
		}},
	})
}

// TestMalformedNesting reads speedscope's fixtures of events that do not
// nest, as Chrome's trace viewer and Perfetto read them (the evidence is
// in profile/testdata/speedscope-compare/README.md):
//   - an E naming an event that is not the innermost open one closes that
//     event and those opened inside it (Perfetto's rule), with a warning;
//   - an X that ends after the event it starts in is not nested in it:
//     both keep their whole time, the later one nests in the innermost
//     event that holds it (catapult's rule; Perfetto keeps it whole too);
//   - of a B/E pair and an X with the same span, the one written first is
//     outside (both tools take equal time stamps in file order).
func TestMalformedNesting(t *testing.T) {
	const closes = `an end event closes "%s", which is not the innermost open event; the events opened inside it end with it`
	unbalanced := []string{fmt.Sprintf(closes, "alpha"), `an end event ("beta" at 10 µs) matches no open event; left out`}
	checkStacks(t, []stacksCase{
		// beta overlaps alpha inside G: it nests in G, and gamma, inside
		// both alpha and beta, in beta, as catapult files them.
		{`[{"ph":"X","name":"G","ts":0,"dur":100,"pid":1,"tid":1},{"ph":"X","name":"alpha","ts":10,"dur":10,"pid":1,"tid":1},` +
			`{"ph":"X","name":"beta","ts":15,"dur":15,"pid":1,"tid":1},{"ph":"X","name":"gamma","ts":16,"dur":1,"pid":1,"tid":1}]`,
			map[string]int64{"G": 75000, "G;alpha": 10000, "G;beta": 14000, "G;beta;gamma": 1000}, []string{
				`an event ("beta" at 15 µs) ends after the event it starts in ("alpha"); not nested in it, both keep their time`}},
		{"sample__profiles__trace-event__end-non-top-of-stack.json",
			map[string]int64{"A": 1000, "A;B": 9000, "Z": 1000}, []string{fmt.Sprintf(closes, "A")}},
		{"sample__profiles__trace-event__unbalanced-name.json",
			map[string]int64{"alpha": 1000, "alpha;beta": 8000}, unbalanced},
		{"sample__profiles__trace-event__out-of-order-unbalanced-name.json",
			map[string]int64{"alpha": 1000, "alpha;beta": 8000}, unbalanced},
		{"sample__profiles__trace-event__invalid-x-nesting.json",
			map[string]int64{"alpha": 10000, "beta": 10000}, []string{
				`an event ("beta" at 5 µs) ends after the event it starts in ("alpha"); not nested in it, both keep their time`}},
		{"sample__profiles__trace-event__bex-interaction.json", map[string]int64{
			"A;B": 2000, "C;D": 2000, "F": 1000, "F;E": 1000, "G": 1000, "G;H": 1000,
			"J": 1000, "J;I": 1000, "K": 1000, "K;L": 1000}, nil},
	})
}

// stacksCase is a trace (a file of the corpus's speedscope folder, or
// the JSON itself when it starts with "[") and the stacks and warnings
// it must read as. checkStacks skips at the first file when the corpus
// is absent, so the JSON cases come first.
type stacksCase struct {
	file  string
	want  map[string]int64
	warns []string
}

func checkStacks(t *testing.T, cases []stacksCase) {
	t.Helper()
	for _, tc := range cases {
		var p *pprofile.Profile
		var warns []string
		if strings.HasPrefix(tc.file, "[") {
			var err error
			if p, warns, err = Parse([]byte(tc.file)); err != nil {
				t.Fatal(err)
			}
		} else {
			p, warns = parseSpeedscopeSample(t, corpus.Need(t), tc.file)
		}
		if got := stacksOf(p); !maps.Equal(got, tc.want) {
			t.Errorf("%s: stacks %v, want %v", tc.file, got, tc.want)
		}
		if !slices.Equal(warns, tc.warns) {
			t.Errorf("%s: warnings %q, want %q", tc.file, warns, tc.warns)
		}
	}
}
