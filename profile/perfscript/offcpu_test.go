package perfscript_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/perfscript"
)

// offcpuRun is one recording of testdata/offcpu/offcpu.c: the text perf
// script printed and what the program measured, in nanoseconds.
type offcpuRun struct {
	text string
	want map[rules.Bucket]float64
}

// buildOffCPU compiles the test program once per test binary, with frame
// pointers so that perf's -g (frame-pointer) call graphs reach its own
// functions.
func buildOffCPU(t *testing.T) string {
	t.Helper()
	needPerf(t)
	return buildOnce(t, "gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread", filepath.Join("testdata", "offcpu", "offcpu.c"))
}

// recordOffCPU runs the program (each blocking step ms long) under
// `perf record` with the given events and options and returns `perf
// script` of the recording (with the switch events shown). It skips when
// perf cannot record here.
func recordOffCPU(t *testing.T, ms int, record ...string) offcpuRun {
	t.Helper()
	return recordProg(t, []string{strconv.Itoa(ms)}, record...)
}

// recordProg is recordOffCPU with the program's arguments.
func recordProg(t *testing.T, prog []string, record ...string) offcpuRun {
	t.Helper()
	bin := buildOffCPU(t)
	run, skip, err := recordIn(t.TempDir(), bin, prog, record)
	if skip != "" {
		t.Skip(skip)
	}
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// recordIn records bin with the program's arguments prog and the perf
// record options into dir and runs perf script on the recording. It
// returns why the test should skip (perf cannot record here) or fail.
func recordIn(dir, bin string, prog, record []string) (offcpuRun, string, error) {
	data := filepath.Join(dir, "offcpu.data")
	var stdout, stderr bytes.Buffer
	if err := perfRecord(data, &stdout, &stderr, slices.Concat(record, []string{"--", bin}, prog)...); err != nil {
		return offcpuRun{}, fmt.Sprintf("perf cannot record here (%v): %s", err, firstLine(stderr.String())), nil
	}
	want := map[rules.Bucket]float64{}
	names := map[string]rules.Bucket{"wait": rules.Wait, "lock": rules.LockContention, "io": rules.IO}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 {
			v, err := strconv.ParseFloat(f[1], 64)
			if b, ok := names[f[0]]; ok && err == nil {
				want[b] = v
			}
		}
	}
	if len(want) != 3 {
		return offcpuRun{}, "", fmt.Errorf("the program printed %q, want wait, lock and io lines", stdout.String())
	}
	out, err := exec.Command("perf", "script", "-i", data, "--show-switch-events").Output()
	if err != nil {
		return offcpuRun{}, "", fmt.Errorf("perf script: %v", err)
	}
	return offcpuRun{text: string(out), want: want}, "", nil
}

// shared holds the recordings that several tests read: each is made once
// per test binary, by the first test that asks for it.
var shared onceMap[sharedRun]

type sharedRun struct {
	run  offcpuRun
	skip string
	err  error
}

// sharedOffCPU is recordProg for tests that only read the recording: the
// tests that ask for the same arguments and options get the same one.
func sharedOffCPU(t *testing.T, prog []string, record ...string) offcpuRun {
	t.Helper()
	bin := buildOffCPU(t)
	key := strings.Join(prog, " ") + "\x00" + strings.Join(record, " ")
	r := shared.get(key, func(r *sharedRun) {
		dir, err := os.MkdirTemp(testDir, "rec")
		if err != nil {
			r.err = err
			return
		}
		r.run, r.skip, r.err = recordIn(dir, bin, prog, record)
	})
	if r.skip != "" {
		t.Skip(r.skip)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.run
}

// switchProg and switchRecord are the arguments and options of the
// recording most tests read: 50 ms steps (5% of a step, the bucket
// checks' margin, is 2.5 ms; recorded and measured times are some 0.1 ms
// apart), sched_switch with frame-pointer call graphs and switch events.
var (
	switchProg   = []string{"50"}
	switchRecord = []string{"-e", "sched:sched_switch", "-g", "--switch-events"}
)

// rerecord returns a function that records the program anew for
// checkRecorded.
func rerecord(t *testing.T, prog []string, record ...string) func() offcpuRun {
	return func() offcpuRun {
		t.Helper()
		return recordProg(t, prog, record...)
	}
}

// checkRecorded runs check on run and, where it reports a mismatch of
// time (which a loaded machine can cause: a switch-in the recording
// lost, a thread preempted between its clock reads and its call),
// records again with record, up to three recordings in all. The test
// fails with the mismatches of the last recording when each had some.
func checkRecorded(t *testing.T, run offcpuRun, record func() offcpuRun, check func(offcpuRun) []string) {
	t.Helper()
	const tries = 3
	for i := 1; ; i++ {
		bad := check(run)
		if len(bad) == 0 {
			return
		}
		if i == tries {
			for _, b := range bad {
				t.Error(b)
			}
			return
		}
		t.Logf("recording %d of %d: %s; recording again", i, tries, strings.Join(bad, "; "))
		run = record()
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// loadText loads perf script text through the loader, as profdiff does.
func loadText(t *testing.T, text string) *profile.Loaded {
	t.Helper()
	path := filepath.Join(t.TempDir(), "offcpu.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := profile.Load(context.Background(), path, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Format != profile.FormatPerfScript {
		t.Fatalf("loaded as %s, want perf script", l.Format)
	}
	return l
}

// topBuckets classifies a loaded profile's sample type through the diff
// engine and returns its bucket values and scheduler latency.
func topBuckets(t *testing.T, l *profile.Loaded, index string) (map[rules.Bucket]float64, float64, string) {
	t.Helper()
	a := diff.NewAnalyzer(diff.Options{Top: -1, SampleIndex: index})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	r := a.Top()
	got := map[rules.Bucket]float64{}
	for _, b := range r.Buckets {
		got[b.Bucket] = b.Value
	}
	sched := 0.0
	if r.Sched != nil {
		sched = r.Sched.Value
	}
	return got, sched, r.Unit
}

// checkBuckets compares each bucket the program measured with the
// recording's off-CPU time in it: within 5%, and the recording's
// scheduler latency sched more: the program's clock also runs while a
// woken thread waits for a CPU or is preempted inside its call, which the
// recording keeps apart (13 ms of a 111 ms recv on a loaded CI machine).
// It returns the mismatches.
func checkBuckets(t *testing.T, got, want map[rules.Bucket]float64, sched float64) []string {
	t.Helper()
	var bad []string
	for _, b := range []rules.Bucket{rules.Wait, rules.LockContention, rules.IO} {
		g, w := got[b], want[b]
		t.Logf("%-16s recorded %8.3f ms, measured %8.3f ms", b, g/1e6, w/1e6)
		if math.Abs(g-w) > 0.05*w+sched {
			bad = append(bad, fmt.Sprintf("%s: off-CPU %.3f ms, the program measured %.3f ms (more than 5%% apart, scheduler latency %.3f ms)", b, g/1e6, w/1e6, sched/1e6))
		}
	}
	if got[rules.CPU] > 0.05*(want[rules.Wait]+want[rules.LockContention]+want[rules.IO]) {
		bad = append(bad, fmt.Sprintf("cpu holds %.3f ms of off-CPU time", got[rules.CPU]/1e6))
	}
	return bad
}

// TestOffCPURecorded records the program with sched_switch events and
// their switch-ins and checks each bucket against its own measurements.
func TestOffCPURecorded(t *testing.T) {
	t.Parallel()
	run := sharedOffCPU(t, switchProg, switchRecord...)
	checkRecorded(t, run, rerecord(t, switchProg, switchRecord...), func(run offcpuRun) []string {
		l := loadText(t, run.text)
		p := l.Profile
		if l.Kind != profile.KindWall {
			t.Errorf("kind %s, want wall", l.Kind)
		}
		if p.DefaultSampleType != perfscript.OffCPUType || p.SampleType[0].Type != perfscript.OffCPUType || p.SampleType[0].Unit != "nanoseconds" {
			t.Errorf("sample types %v (default %q), want off-cpu/nanoseconds first and default", p.SampleType, p.DefaultSampleType)
		}
		got, sched, unit := topBuckets(t, l, "")
		if unit != "nanoseconds" {
			t.Fatalf("unit %q, want nanoseconds", unit)
		}
		return checkBuckets(t, got, run.want, sched)
	})
}

// TestOffCPUDwarf adds sem_wait and pthread_cond_wait, whose futex waits
// only DWARF unwinding gets out of glibc from (frame pointers stop at the
// futex call), and records with --call-graph dwarf: the condition and
// semaphore waits are wait, and the buckets still match.
func TestOffCPUDwarf(t *testing.T) {
	t.Parallel()
	prog, record := []string{"50", "sync"}, []string{"-e", "sched:sched_switch", "--call-graph", "dwarf", "--switch-events"}
	checkRecorded(t, recordProg(t, prog, record...), rerecord(t, prog, record...), func(run offcpuRun) []string {
		got, sched, _ := topBuckets(t, loadText(t, run.text), "")
		return checkBuckets(t, got, run.want, sched)
	})
}

// TestOffCPUSystemWide records every CPU (perf record -a) without switch
// events: the switch-ins are the next_pid of other tasks' switch-outs.
// Only the program's samples (its comm, the root frame) are compared.
func TestOffCPUSystemWide(t *testing.T) {
	if os.Getenv("PROFDIFF_PERF_SYSTEMWIDE") == "" {
		// Seen under the full suite in CI: the program's wait read 402 ms
		// against its own 302 ms while every lock and io interval matched.
		// A system-wide recording shares the machine with every test
		// binary running beside it, and a switch-in it misses lengthens
		// an interval; run it on a quiet machine.
		t.Skip("system-wide perf recording: set PROFDIFF_PERF_SYSTEMWIDE=1 on a quiet machine (beside a parallel test run it can miss switch-ins)")
	}
	run := recordOffCPU(t, 100, "-a", "-e", "sched:sched_switch", "-g")
	if strings.Contains(run.text, "PERF_RECORD_SWITCH") {
		t.Fatal("a recording without --switch-events printed switch events")
	}
	l := loadText(t, run.text)
	a := diff.NewAnalyzer(diff.Options{Top: -1, Focus: regexp.MustCompile(`^offcpu$`)})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	got := map[rules.Bucket]float64{}
	top := a.Top()
	for _, b := range top.Buckets {
		got[b.Bucket] = b.Value
	}
	sched := 0.0
	if top.Sched != nil {
		sched = top.Sched.Value
	}
	for _, b := range checkBuckets(t, got, run.want, sched) {
		t.Error(b)
	}
}

// TestOffCPUMixedWithCPUClock records cpu-clock samples and scheduler
// events together: cpu-clock is the default type (on-CPU, kind cpu), and
// the off-CPU type, picked by name, still matches the measurements.
func TestOffCPUMixedWithCPUClock(t *testing.T) {
	t.Parallel()
	prog, record := []string{"50"}, []string{"-e", "cpu-clock", "-e", "sched:sched_switch", "-g", "--switch-events"}
	checkRecorded(t, recordProg(t, prog, record...), rerecord(t, prog, record...), func(run offcpuRun) []string {
		l := loadText(t, run.text)
		p := l.Profile
		var types []string
		for _, st := range p.SampleType {
			types = append(types, st.Type+"/"+st.Unit)
		}
		has := strings.Join(types, " ")
		if !strings.Contains(has, "cpu-clock/nanoseconds") || !strings.Contains(has, "off-cpu/nanoseconds") {
			t.Fatalf("sample types %s, want cpu-clock/nanoseconds and off-cpu/nanoseconds", has)
		}
		if p.DefaultSampleType != "cpu-clock" || l.Kind != profile.KindCPU {
			t.Errorf("default %q, kind %s; want cpu-clock, cpu", p.DefaultSampleType, l.Kind)
		}
		got, sched, _ := topBuckets(t, l, perfscript.OffCPUType)
		return checkBuckets(t, got, run.want, sched)
	})
}

// TestOffCPUWithoutSwitchIns is the same recording without the switch
// events: a per-task recording has no switch-ins, so the switches are
// counted as before, with a warning that says how to record them.
func TestOffCPUWithoutSwitchIns(t *testing.T) {
	t.Parallel()
	run := sharedOffCPU(t, switchProg, switchRecord...)
	var kept []string
	for _, line := range strings.SplitAfter(run.text, "\n") {
		if !strings.Contains(line, "PERF_RECORD_SWITCH") {
			kept = append(kept, line)
		}
	}
	text := strings.Join(kept, "")
	p, warns, err := perfscript.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if p.SampleType[0].Type != "sched:sched_switch" {
		t.Errorf("sample type %s, want sched:sched_switch (counted)", p.SampleType[0].Type)
	}
	if got, want := total(p, 0), int64(strings.Count(text, "sched:sched_switch:")); got != want {
		t.Errorf("counted %d switches, the text has %d", got, want)
	}
	if !strings.Contains(strings.Join(warns, "\n"), "--switch-events") {
		t.Errorf("no warning naming --switch-events: %q", warns)
	}
}

// TestOffCPUCountedNeverCPU records without --switch-events, the plain
// per-task `perf record -e sched:sched_switch -g`: the switches are
// counted, and still each switch-out is labelled by its prev_state, so
// none is cpu: the preempted ones are scheduler latency, the others in
// the buckets (wait, lock-contention, io).
func TestOffCPUCountedNeverCPU(t *testing.T) {
	t.Parallel()
	run := recordOffCPU(t, 20, "-e", "sched:sched_switch", "-g")
	if strings.Contains(run.text, "PERF_RECORD_SWITCH") {
		t.Fatal("a recording without --switch-events holds PERF_RECORD_SWITCH lines")
	}
	l := loadText(t, run.text)
	if !strings.Contains(strings.Join(l.Warnings, "\n"), "--switch-events") {
		t.Errorf("no warning naming --switch-events: %q", l.Warnings)
	}
	got, sched, _ := topBuckets(t, l, "")
	all := float64(strings.Count(run.text, "sched:sched_switch:"))
	sum := sched
	for _, b := range rules.Buckets {
		t.Logf("%-16s %4.0f of %.0f switch-outs", b, got[b], all)
		sum += got[b]
	}
	t.Logf("%-16s %4.0f of %.0f switch-outs", "sched", sched, all)
	if got[rules.CPU] != 0 {
		t.Errorf("cpu holds %.0f of %.0f counted switch-outs, want none", got[rules.CPU], all)
	}
	if sum != all {
		t.Errorf("buckets and scheduler latency hold %.0f switch-outs, the text has %.0f", sum, all)
	}
	if runnable := float64(strings.Count(run.text, "prev_state=R")); sched != runnable {
		t.Errorf("scheduler latency holds %.0f switch-outs, the text has %.0f with prev_state R", sched, runnable)
	}
	if got[rules.Wait] == 0 || got[rules.LockContention] == 0 {
		t.Errorf("buckets %v: the program's sleeps and mutex waits are missing", got)
	}
}

// TestOffCPUTruncated cuts a recording before its last switch-in: the
// thread then still off the CPU is charged up to the last time stamp,
// with a warning, so the total drops by exactly the time cut off.
func TestOffCPUTruncated(t *testing.T) {
	t.Parallel()
	run := sharedOffCPU(t, switchProg, switchRecord...)
	lines := strings.SplitAfter(run.text, "\n")
	last := -1
	for i, line := range lines {
		if strings.Contains(line, "PERF_RECORD_SWITCH IN") {
			last = i
		}
	}
	if last < 0 {
		t.Fatal("no switch-in in the recording")
	}
	full, _, err := perfscript.Parse(run.text)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Join(lines[:last], "")
	p, warns, err := perfscript.Parse(cut)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(warns, "\n"), "still off the CPU at the end") {
		t.Errorf("no warning about the open interval: %q", warns)
	}
	lost := stampNanos(t, lines[last]) - lastStamp(t, lines[:last])
	if got, want := total(p, 0), total(full, 0)-lost; got != want {
		t.Errorf("truncated total %d ns, want %d (full %d minus the %d ns cut off)", got, want, total(full, 0), lost)
	}
}

// TestOffCPUPreempted checks that preempted switch-outs (prev_state R) of
// a recording are scheduler latency and blocked ones are in the buckets:
// each record's labels follow its header's prev_state.
func TestOffCPUPreempted(t *testing.T) {
	t.Parallel()
	run := sharedOffCPU(t, switchProg, switchRecord...)
	p, _, err := perfscript.Parse(run.text)
	if err != nil {
		t.Fatal(err)
	}
	runnable := strings.Count(run.text, "prev_state=R")
	labelled := 0
	for _, s := range p.Sample {
		if (len(s.Label[profile.LabelBucket]) > 0) != (len(s.Label[profile.LabelState]) == 1 && s.Label[profile.LabelState][0] == "runnable") {
			t.Errorf("labels %v: scheduler latency and runnable state go together", s.Label)
		}
		if len(s.Label[profile.LabelBucket]) > 0 {
			if s.Label[profile.LabelBucket][0] != profile.SchedLatency {
				t.Errorf("bucket label %v, want %s", s.Label[profile.LabelBucket], profile.SchedLatency)
			}
			labelled += int(s.Value[len(s.Value)-1])
		}
	}
	if labelled != runnable {
		t.Errorf("%d switch-out(s) labelled scheduler latency, the text has %d with prev_state R", labelled, runnable)
	}
	if len(p.Sample[0].Label[profile.LabelBucket]) > 0 {
		t.Errorf("the first sample is scheduler latency; kind detection would read a Go trace")
	}
}

func total(p *pprofile.Profile, idx int) int64 {
	var n int64
	for _, s := range p.Sample {
		n += s.Value[idx]
	}
	return n
}

// stampNanos reads the time stamp of a header line.
func stampNanos(t *testing.T, line string) int64 {
	t.Helper()
	for _, f := range strings.Fields(line) {
		if s, ok := strings.CutSuffix(f, ":"); ok && strings.Contains(s, ".") {
			sec, frac, _ := strings.Cut(s, ".")
			a, err1 := strconv.ParseInt(sec, 10, 64)
			b, err2 := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
			if err1 == nil && err2 == nil {
				return a*1e9 + b
			}
		}
	}
	t.Fatalf("no time stamp in %q", line)
	return 0
}

// lastStamp is the latest time stamp of the header lines.
func lastStamp(t *testing.T, lines []string) int64 {
	var last int64
	for _, line := range lines {
		if line != "" && line[0] != '\t' && line[0] != ' ' && strings.TrimSpace(line) != "" {
			last = max(last, stampNanos(t, line))
		}
	}
	return last
}

// TestOffCPUOldSwitchFormat rewrites a recording's sched_switch fields in
// the format perf printed before 4.x (`comm:pid [prio] S ==> comm:pid
// [prio]`): the off-CPU time is the same.
func TestOffCPUOldSwitchFormat(t *testing.T) {
	t.Parallel()
	run := sharedOffCPU(t, switchProg, switchRecord...)
	re := regexp.MustCompile(`prev_comm=(\S+) prev_pid=(\d+) prev_prio=(\d+) prev_state=(\S+) ==> next_comm=(\S+) next_pid=(\d+) next_prio=(\d+)`)
	old := re.ReplaceAllString(run.text, "$1:$2 [$3] $4 ==> $5:$6 [$7]")
	if old == run.text {
		t.Fatal("no sched_switch fields to rewrite")
	}
	p1, _, err := perfscript.Parse(run.text)
	if err != nil {
		t.Fatal(err)
	}
	p2, _, err := perfscript.Parse(old)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := total(p1, 0), total(p2, 0); a != b || p2.SampleType[0].Type != perfscript.OffCPUType {
		t.Errorf("old format: %s total %d, new format %d", p2.SampleType[0].Type, b, a)
	}
}

// TestOffCPUBlockedNeverCPU records sem_wait, pthread_cond_wait and
// sigsuspend with frame-pointer call graphs (-g), which stop in glibc at
// the futex or signal call, so that no frame rule claims some stacks:
// blocked time is still no cpu at all (the fallback label makes it wait),
// and the buckets match the program's measurements.
func TestOffCPUBlockedNeverCPU(t *testing.T) {
	t.Parallel()
	prog, record := []string{"50", "sync", "pause"}, []string{"-e", "sched:sched_switch", "-g", "--switch-events"}
	checkRecorded(t, recordProg(t, prog, record...), rerecord(t, prog, record...), func(run offcpuRun) []string {
		l := loadText(t, run.text)
		for _, s := range l.Profile.Sample {
			if s.Value[0] == 0 || len(s.Label[profile.LabelBucket]) > 0 {
				continue
			}
			if fb := s.Label[profile.LabelFallback]; len(fb) != 1 || (fb[0] != "wait" && fb[0] != "io") {
				t.Errorf("blocked off-CPU record without a wait or io fallback label: %v", s.Label)
			}
		}
		got, sched, _ := topBuckets(t, l, "")
		if got[rules.CPU] != 0 {
			t.Errorf("cpu holds %.3f ms of off-CPU time, want none", got[rules.CPU]/1e6)
		}
		return checkBuckets(t, got, run.want, sched)
	})
}

// TestOffCPUSchedFirstIsNotTrace moves a recording's first record of
// scheduler latency (LabelBucket "sched") to the front and writes the
// profile as pprof: its kind is still wall, not a Go trace (only the Go
// trace reader's comment says trace).
func TestOffCPUSchedFirstIsNotTrace(t *testing.T) {
	t.Parallel()
	run := sharedOffCPU(t, switchProg, switchRecord...)
	p, _, err := perfscript.Parse(run.text)
	if err != nil {
		t.Fatal(err)
	}
	at := -1
	for i, s := range p.Sample {
		if v := s.Label[profile.LabelBucket]; len(v) == 1 && v[0] == profile.SchedLatency {
			at = i
			break
		}
	}
	if at < 0 {
		t.Skip("the recording holds no preempted switch-out")
	}
	p.Sample[0], p.Sample[at] = p.Sample[at], p.Sample[0]
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := pprofile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if k := profile.DetectKind(back); k != profile.KindWall {
		t.Errorf("kind %s with a scheduler-latency first sample, want wall", k)
	}
}

// TestOffCPUCorpusSwitches reads the corpus's perf script texts of
// sched:sched_switch (PerfView's LinuxTracing test inputs: switch-outs
// with next_pid, the old `comm:pid [prio] S ==> comm:pid [prio]` form too,
// no PERF_RECORD_SWITCH lines, no switch-in of the threads they follow,
// so counted): no switch-out is cpu, each is in a bucket or scheduler
// latency, by its prev_state.
func TestOffCPUCorpusSwitches(t *testing.T) {
	dir := corpusDir(t)
	var names []string
	for file, format := range corpusFiles(t, dir, "perfview") {
		if format == "perf-script-text" && strings.Contains(readText(t, filepath.Join(dir, file)), "sched:sched_switch:") {
			names = append(names, file)
		}
	}
	if len(names) == 0 {
		t.Fatal("no perf script text of sched:sched_switch in the corpus's perfview folder")
	}
	sort.Strings(names)
	for _, file := range names {
		text := readText(t, filepath.Join(dir, file))
		l := loadText(t, text)
		got, sched, _ := topBuckets(t, l, "sched:sched_switch")
		all := float64(strings.Count(text, "sched:sched_switch:"))
		sum := sched
		for _, b := range rules.Buckets {
			sum += got[b]
		}
		t.Logf("%s: %.0f switch-outs: wait %.0f, io %.0f, sched %.0f", filepath.Base(file), all, got[rules.Wait], got[rules.IO], sched)
		if got[rules.CPU] != 0 || sum != all {
			t.Errorf("%s: cpu holds %.0f of %.0f switch-outs (buckets and scheduler latency %.0f), want none of them", file, got[rules.CPU], all, sum)
		}
	}
}
