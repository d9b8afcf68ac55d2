package perfscript

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/profdiff/profdiff/profile/internal/memtest"
)

// TestParseChild is the subprocess of parseInChild (see package
// memtest): it parses the file it is given and prints what it got. It
// does nothing in a normal run.
func TestParseChild(t *testing.T) {
	data, err := os.ReadFile(memtest.Args(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	memtest.Measure(func() {
		p, warns, err := Parse(string(data))
		if err != nil {
			fmt.Printf("error: %v\n", err)
			return
		}
		fmt.Printf("types %d samples %d warnings %q\n", len(p.SampleType), len(p.Sample), warns)
	})
}

// parseInChild parses data in a re-executed test binary and returns what
// it printed, the time Parse took there and the child's peak RSS in bytes.
func parseInChild(t *testing.T, text string) (out string, took time.Duration, rss int64) {
	t.Helper()
	return memtest.Run(t, "TestParseChild", "perf.txt", []byte(text))
}

// distinctEvents is perf script text of n samples, each of its own event
// and thread (so each is its own record): what `perf record -e
// 'syscalls:*'` writes, pushed to the extreme. About 70 bytes a sample.
func distinctEvents(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "app 1/%d [000] %d.000001: 1000 ev%05d:\n\t4004d0 main (/usr/bin/app)\n\n", 1+i, 1+i, i)
	}
	return b.String()
}

// A file of 15,000 distinct events used to allocate a value for every
// event in every record (15,000 x 15,000 int64s, 2.5 GB, 13 s); it must load
// in under 200 MB, keeping the first MaxEvents events (BenchmarkPathological
// times it).
func TestManyEventsMemory(t *testing.T) {
	text := distinctEvents(15000)
	out, took, rss := parseInChild(t, text)
	t.Logf("%d bytes, %d events: %v, peak RSS %.1f MB; %s", len(text), 15000, took, float64(rss)/1e6, strings.TrimSpace(out))
	want := fmt.Sprintf("types %d samples %d", MaxEvents+1, MaxEvents)
	if !strings.Contains(out, want) || !strings.Contains(out, "14936 event(s) after the first 64 ignored") {
		t.Errorf("child printed %q, want %q and a warning about the ignored events", out, want)
	}
	if rss > 200<<20 && !memtest.Raced() {
		t.Errorf("peak RSS %d MB, want under 200 MB", rss>>20)
	}
}

// Periods used to be summed with saturation, so two samples of period
// MaxInt64 gave a record of MaxInt64 without a word. Any sum of an event's
// periods that overflows is an error naming the header line that tipped it.
func TestPeriodOverflow(t *testing.T) {
	const big = "9223372036854775807" // math.MaxInt64
	for _, tc := range []struct{ name, text, want string }{
		{"one record", "a 1 1.0: " + big + " cycles:\n\t1 f (/x)\n\na 1 2.0: 1 cycles:\n\t1 f (/x)\n\n",
			"perf script: line 4: the periods of event cycles add up to more than a 64-bit integer holds (9223372036854775807 + 1)"},
		// Two records (other threads): each fits, their total does not,
		// and a consumer summing the event would wrap.
		{"two records", "a 1 1.0: " + big + " cycles:\n\t1 f (/x)\n\na 2 2.0: " + big + " cycles:\n\t1 f (/x)\n",
			"perf script: line 4: the periods of event cycles add up to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, err := Parse(tc.text)
			if err == nil {
				t.Fatalf("no error; values %v", p.Sample[0].Value)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
		})
	}
	// Periods are never negative; one that is must not turn the time
	// stamp into an event name.
	for _, text := range []string{"a 1 1.0: -5 cycles:\n\t1 f (/x)\n", "a 1/1 [000] 1.0: -5 cycles:\n\t1 f (/x)\n"} {
		_, _, err := Parse(text)
		const want = `perf script: line 1: malformed event header (no event name after "1.0:" (a negative or malformed period?))`
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
	// The largest sum that fits loads.
	p, _ := mustParse(t, "a 1 1.0: 9223372036854775806 cycles:\n\t1 f (/x)\n\na 1 2.0: 1 cycles:\n\t1 f (/x)\n")
	if got := p.Sample[0].Value; got[0] != 1<<63-1 || got[1] != 2 {
		t.Errorf("values %v", got)
	}
}

// Events after the first MaxEvents are left out, whole samples at a time,
// and said; the kept events' values and sample counts are untouched by them.
func TestEventsPastMax(t *testing.T) {
	var b strings.Builder
	for i := range MaxEvents + 2 {
		// Every event on the same record, so a dropped event would
		// show up in the kept record's samples/count if it leaked.
		fmt.Fprintf(&b, "a 1 %d.0: 10 ev%d:\n\t1 f (/x)\n\n", i+1, i)
	}
	b.WriteString("a 1 99.0: 5 ev0:\n\t1 f (/x)\n\n")
	p, warns := mustParse(t, b.String())
	if len(p.SampleType) != MaxEvents+1 || len(p.Sample) != 1 {
		t.Fatalf("%d types, %d samples", len(p.SampleType), len(p.Sample))
	}
	v := p.Sample[0].Value
	if v[0] != 15 || v[MaxEvents-1] != 10 || v[MaxEvents] != MaxEvents+1 {
		t.Errorf("values: ev0 %d, last kept %d, samples %d", v[0], v[MaxEvents-1], v[MaxEvents])
	}
	want := fmt.Sprintf("2 event(s) after the first %d ignored (2 sample(s))", MaxEvents)
	if len(warns) != 1 || !strings.HasPrefix(warns[0], want) {
		t.Errorf("warnings %q, want %q", warns, want)
	}
}

// Time stamps too far apart for DurationNanos leave it unknown, and say
// so, instead of silently (as before) or as a wrapped number.
func TestDurationOverflow(t *testing.T) {
	p, warns := mustParse(t, "a 1 1.0: cycles:\n\t1 f (/x)\n\na 1 10000000000.5: cycles:\n\t1 f (/x)\n")
	if p.DurationNanos != 0 || len(warns) != 1 || !strings.HasPrefix(warns[0], "time stamps span 1e+10 s, more nanoseconds than an int64 holds") {
		t.Errorf("duration %d, warnings %q", p.DurationNanos, warns)
	}
}
