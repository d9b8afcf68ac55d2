package perfscript

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/labels"
)

// folded returns the root-first `a;b;c` stacks of p with the values of
// sample type idx, zero values left out.
func folded(p *profile.Profile, idx int) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		if s.Value[idx] == 0 {
			continue
		}
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			l := s.Location[i]
			for j := len(l.Line) - 1; j >= 0; j-- {
				names = append(names, l.Line[j].Function.Name)
			}
		}
		out[strings.Join(names, ";")] += s.Value[idx]
	}
	return out
}

func mustParse(t *testing.T, text string) (*profile.Profile, []string) {
	t.Helper()
	p, warns, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("CheckValid: %v", err)
	}
	return p, warns
}

func sampleTypes(p *profile.Profile) []string {
	var s []string
	for _, st := range p.SampleType {
		s = append(s, st.Type+"/"+st.Unit)
	}
	return s
}

// The header forms stackcollapse-perf.pl documents, and those newer perf
// versions and other tools print.
func TestHeaderForms(t *testing.T) {
	const frame = "\t    4004d0 main (/usr/bin/app)\n\n"
	for _, tc := range []struct {
		name, header   string
		comm           string
		pid, tid       int64 // pid -1: none
		event, root    string
		period         int64 // 0: no period (value 1)
		wantTime, full bool
	}{
		{"tid only", "java 25607 4794564.109216: cycles:", "java", -1, 25607, "cycles", "java", 0, true, false},
		{"cpu", "java 12688 [002] 6544038.708352: cpu-clock:", "java", -1, 12688, "cpu-clock", "java", 0, true, false},
		{"comm with space", "V8 WorkerThread 25607 4794564.109216: cycles:", "V8 WorkerThread", -1, 25607, "cycles", "V8_WorkerThread", 0, true, false},
		{"pid/tid cpu period modifier", "java 24636/25607 [000] 4794564.109216:     250000 cycles:u: ", "java", 24636, 25607, "cycles:u", "java", 250000, true, false},
		{"pid/tid no cpu", "java 12688/12764 6544038.708352: cpu-clock:", "java", 12688, 12764, "cpu-clock", "java", 0, true, false},
		{"no time", "func_ab 15294 cpu-clock: ", "func_ab", -1, 15294, "cpu-clock", "func_ab", 0, false, false},
		{"no time no space", "java 19983 cycles:", "java", -1, 19983, "cycles", "java", 0, false, false},
		{"padded comm and period", "swapper     0 [005] 1410598.953066:       cycles: ", "swapper", -1, 0, "cycles", "swapper", 0, true, false},
		{"period in ns", "dd 29776 666709.771979:   10101010 cpu-clock: ", "dd", -1, 29776, "cpu-clock", "dd", 10101010, true, false},
		{"right-aligned comm, tracepoint fields", "             fio 236193/236193 [021] 1.791544:          1 sched:sched_switch: prev_comm=fio prev_pid=236193 prev_prio=120 prev_state=S ==> next_comm=swapper/21 next_pid=0 next_prio=120", "fio", 236193, 236193, "sched:sched_switch", "fio", 1, true, false},
		{"tabs, digit comm", "77\t1/1\t\t[000] 0.0:\t\t\t1 event_name: event_properties", "77", 1, 1, "event_name", "77", 1, true, false},
		{"comm with digits and slash", "kworker/0:1 123 [000] 5.5: cpu-clock:", "kworker/0:1", -1, 123, "cpu-clock", "kworker/0:1", 0, true, false},
		{"no comm", "    2/2\t\t[000] 0.0:\t\t\t1 event_name: event_properties", "", 2, 2, "event_name", "", 1, true, false},
		{"event with slashes", "comm  0/0  [000] 0.0: event/call-graph=no/: event_properties", "comm", 0, 0, "event/call-graph=no/", "comm", 0, true, false},
		{"ns time", "app 42/43 [001] 12.123456789: 7 instructions:", "app", 42, 43, "instructions", "app", 7, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := mustParse(t, tc.header+"\n"+frame)
			if len(p.Sample) != 1 {
				t.Fatalf("%d samples", len(p.Sample))
			}
			s := p.Sample[0]
			if p.SampleType[0].Type != tc.event || p.DefaultSampleType != tc.event {
				t.Errorf("sample type %v, default %q; want event %q", sampleTypes(p), p.DefaultSampleType, tc.event)
			}
			want := tc.period
			if want == 0 {
				want = 1
			}
			if s.Value[0] != want {
				t.Errorf("value %d, want %d", s.Value[0], want)
			}
			if got := s.Label["comm"]; !reflect.DeepEqual(got, []string{tc.comm}) {
				t.Errorf("comm label %q, want %q", got, tc.comm)
			}
			if got := s.NumLabel["tid"]; !reflect.DeepEqual(got, []int64{tc.tid}) {
				t.Errorf("tid label %v, want %d", got, tc.tid)
			}
			if tc.pid < 0 {
				if _, ok := s.NumLabel["pid"]; ok {
					t.Errorf("pid label %v, want none", s.NumLabel["pid"])
				}
			} else if got := s.NumLabel["pid"]; !reflect.DeepEqual(got, []int64{tc.pid}) {
				t.Errorf("pid label %v, want %d", got, tc.pid)
			}
			wantStack := "main"
			if tc.root != "" {
				wantStack = tc.root + ";main"
			}
			if got := folded(p, 0); !reflect.DeepEqual(got, map[string]int64{wantStack: want}) {
				t.Errorf("stacks %v, want %s", got, wantStack)
			}
		})
	}
}

func TestFrameNames(t *testing.T) {
	for _, tc := range []struct {
		name, comm, frame, want string
		addr                    uint64
		dso                     string // Mapping.File; "" none
	}{
		{"offset stripped", "app", "ffffffff8103ce3b native_safe_halt+0x1b ([kernel.kallsyms])", "native_safe_halt", 0xffffffff8103ce3b, "[kernel.kallsyms]"},
		{"huge offset stripped", "emulator", "d70 _start+0xffff018fd5dce000 (/usr/lib/ld-2.24.so)", "_start", 0xd70, "/usr/lib/ld-2.24.so"},
		{"unknown in dso", "dd", "e5f70 [unknown] (/lib/x86_64-linux-gnu/libc-2.15.so)", "[libc-2.15.so]", 0xe5f70, "/lib/x86_64-linux-gnu/libc-2.15.so"},
		{"unknown unknown", "dd", "0 [unknown] ([unknown])", "[unknown]", 0, ""},
		{"unknown in kernel", "swapper", "ffffffffad14d115 [unknown] ([kernel.kallsyms])", "[kernel.kallsyms]", 0xffffffffad14d115, "[kernel.kallsyms]"},
		{"no symbol", "java", "7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)", "[libc-2.15.so]", 0x7f1e2215d058, "/lib/x86_64-linux-gnu/libc-2.15.so"},
		{"vmlinux kernel", "dd", "3d6b4c vfs_read (/lib/modules/4.1.0-virtual/build/vmlinux)", "vfs_read", 0x3d6b4c, "/lib/modules/4.1.0-virtual/build/vmlinux"},
		{"C++ with spaces and parens", "app", "7f7241fbe6d8 arrayOopDesc::base(BasicType) const (/opt/jdk/lib/server/libjvm.so)", "arrayOopDesc::base", 0x7f7241fbe6d8, "/opt/jdk/lib/server/libjvm.so"},
		{"C++ template", "app", "dd777 v8::internal::Execution::Call(v8::internal::Isolate*, v8::internal::Handle<v8::internal::Object>, bool) (/tmp/node-v011)", "v8::internal::Execution::Call", 0xdd777, "/tmp/node-v011"},
		{"anonymous namespace", "app", "4011a0 (anonymous namespace)::worker(int)+0x10 (/usr/bin/app)", "(anonymous namespace)::worker", 0x4011a0, "/usr/bin/app"},
		{"Go method", "app", "46a1c0 net/http.(*Client).Do+0x1c (/usr/bin/app)", "net/http.(*Client).Do", 0x46a1c0, "/usr/bin/app"},
		{"Java in java", "java", "7f722d119786 Ljava/io/FileOutputStream;::writeBytes (/tmp/perf-19982.map)", "java/io/FileOutputStream:::writeBytes", 0x7f722d119786, "/tmp/perf-19982.map"},
		{"Java signature", "java", "7f1e11300e8b Lsun/nio/ch/FileDispatcherImpl;.write0(Ljava/io/FileDescriptor;JI)I (/tmp/perf-3236.map)", "sun/nio/ch/FileDispatcherImpl:.write0", 0x7f1e11300e8b, "/tmp/perf-3236.map"},
		{"Java class without slash keeps L", "java", "7f722d12e1d4 LBusy;::main (/tmp/perf-19982.map)", "LBusy:::main", 0x7f722d12e1d4, "/tmp/perf-19982.map"},
		{"Java naming only for comm java", "jshell", "7f722d119786 Ljava/io/FileOutputStream;::writeBytes (/tmp/perf-19982.map)", "Ljava/io/FileOutputStream:::writeBytes", 0x7f722d119786, "/tmp/perf-19982.map"},
		{"quotes removed", "node", "13a80b608e0a RegExp:[&<>\\\"\\'] (/tmp/perf-7539.map)", `RegExp:[&<>\\]`, 0x13a80b608e0a, "/tmp/perf-7539.map"},
		{"JIT with spaces", "node", "c6d788f8125 LazyCompile:*Async$consume /apps/node/async.js:39 (/tmp/perf-31912.map)", "LazyCompile:*Async$consume /apps/node/async.js:39", 0xc6d788f8125, "/tmp/perf-31912.map"},
		{"deleted dso", "app", "7f00dead0000 foo+0x10 (/tmp/libfoo.so (deleted))", "foo", 0x7f00dead0000, "/tmp/libfoo.so (deleted)"},
		{"word address", "comm", "address type1 type2 [module] symbol(param[]) (something.map)", "type1 type2 [module] symbol", 0, "something.map"},
		{"no dso", "app", "4004d0 main", "main", 0x4004d0, ""},
		{"operator->", "app", "4004d0 Ptr::operator->() const (/usr/bin/app)", "Ptr::operator->", 0x4004d0, "/usr/bin/app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := mustParse(t, tc.comm+" 1 [000] 1.0: cycles:\n\t"+tc.frame+"\n\n")
			s := p.Sample[0]
			if len(s.Location) != 2 {
				t.Fatalf("%d locations, want frame + comm", len(s.Location))
			}
			l := s.Location[0]
			if got := l.Line[0].Function.Name; got != tc.want {
				t.Errorf("name %q, want %q", got, tc.want)
			}
			if l.Address != tc.addr {
				t.Errorf("address %#x, want %#x", l.Address, tc.addr)
			}
			file := ""
			if l.Mapping != nil {
				file = l.Mapping.File
			}
			if file != tc.dso {
				t.Errorf("mapping %q, want %q", file, tc.dso)
			}
			if root := s.Location[1].Line[0].Function.Name; root != tc.comm {
				t.Errorf("root %q, want comm %q", root, tc.comm)
			}
		})
	}
}

func TestKernelAndJITDSO(t *testing.T) {
	for dso, want := range map[string][2]bool{
		"[kernel.kallsyms]":                 {true, false},
		"/lib/modules/4.3.0/build/vmlinux":  {true, false},
		"[unknown]":                         {false, false},
		"/tmp/perf-1234.map":                {false, true},
		"/usr/lib/x86_64-linux-gnu/libc.so": {false, false},
	} {
		if k, j := IsKernelDSO(dso), IsJITDSO(dso); k != want[0] || j != want[1] {
			t.Errorf("%s: kernel %v jit %v, want %v", dso, k, j, want)
		}
	}
}

func TestInline(t *testing.T) {
	// `a->b` (outer first) and `(inlined)` frames (leaf first, above their
	// containing frame) become extra lines of one Location.
	text := "app 1/1 [000] 1.0: cycles:\n" +
		"\t4004d0 leaf (inlined)\n" +
		"\t4004d0 middle+0x10 (/usr/bin/app)\n" +
		"\t400600 outer->inner+0x4 (/usr/bin/app)\n" +
		"\t400700 main (/usr/bin/app)\n\n"
	p, _ := mustParse(t, text)
	want := map[string]int64{"app;main;outer;inner;middle;leaf": 1}
	if got := folded(p, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("stacks %v, want %v", got, want)
	}
	l := p.Sample[0].Location[0]
	if len(l.Line) != 2 || l.Address != 0x4004d0 || l.Mapping == nil || l.Mapping.File != "/usr/bin/app" {
		t.Errorf("inlined location: %d lines, %#x, %v", len(l.Line), l.Address, l.Mapping)
	}
	if len(p.Sample[0].Location) != 4 {
		t.Errorf("%d locations, want 4", len(p.Sample[0].Location))
	}
	// Inlined frames left at the end of a stack still count.
	p, _ = mustParse(t, "app 1 cycles:\n\t4004d0 lone (inlined)\n")
	if got := folded(p, 0); !reflect.DeepEqual(got, map[string]int64{"app;lone": 1}) {
		t.Errorf("stacks %v", got)
	}
}

func TestSampleBoundaries(t *testing.T) {
	// A blank line, the next header or the end of the text ends a sample;
	// frames whose symbol starts with `(` are skipped as stackcollapse does.
	text := "# comment\n" +
		"a 1 cycles:\n\t1 f (/x)\n\t2 g (/x)\n\n\n" +
		"b 2 cycles:\n\t3 h (/x)\n" + // ended by the next header
		"b 2 cycles:\n\t3 h (/x)\n\t4 (ignored) (/x)\n" +
		"c 3 cycles:\n" + // no frames: the comm alone
		"\n" +
		"a 1 cycles:\n\t1 f (/x)\n\t2 g (/x)" // ended by the end of text
	p, _ := mustParse(t, text)
	want := map[string]int64{"a;g;f": 2, "b;h": 2, "c": 1}
	if got := folded(p, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("stacks %v, want %v", got, want)
	}
	if len(p.Sample) != 3 {
		t.Errorf("%d samples, want 3 (identical stacks merged)", len(p.Sample))
	}
}

func TestLabelsSplitSamples(t *testing.T) {
	text := "w 10/11 cycles:\n\t1 f (/x)\n\nw 10/12 cycles:\n\t1 f (/x)\n\nw 10/11 cycles:\n\t1 f (/x)\n"
	p, _ := mustParse(t, text)
	if len(p.Sample) != 2 {
		t.Fatalf("%d samples, want one per tid", len(p.Sample))
	}
	if got := folded(p, 0); !reflect.DeepEqual(got, map[string]int64{"w;f": 3}) {
		t.Errorf("stacks %v", got)
	}
}

func TestEvents(t *testing.T) {
	text := "noploop 1/1 [001] 1.000000: instructions:\n\t993 main (/root/noploop)\n\n" +
		"noploop 1/1 [001] 1.500000: cycles:\n\t993 main (/root/noploop)\n\n" +
		"cksum 2/2 [000] 2.000000: cycles:\n\t1ad1 cksum (/usr/bin/cksum)\n\n" +
		"noploop 1/1 [001] 3.000000: instructions:\n\t993 main (/root/noploop)\n\n"
	p, _ := mustParse(t, text)
	if got := sampleTypes(p); !reflect.DeepEqual(got, []string{"instructions/samples", "cycles/samples"}) {
		t.Errorf("sample types %v", got)
	}
	if p.DefaultSampleType != "instructions" || p.PeriodType.Type != "instructions" || p.Period != 1 {
		t.Errorf("default %q, period type %v, period %d", p.DefaultSampleType, p.PeriodType, p.Period)
	}
	if got := folded(p, 0); !reflect.DeepEqual(got, map[string]int64{"noploop;main": 2}) {
		t.Errorf("instructions %v", got)
	}
	if got := folded(p, 1); !reflect.DeepEqual(got, map[string]int64{"noploop;main": 1, "cksum;cksum": 1}) {
		t.Errorf("cycles %v", got)
	}
	if p.DurationNanos != 2e9 {
		t.Errorf("duration %d", p.DurationNanos)
	}

	// Periods: the value is the period; clock events are in nanoseconds.
	// The first three headers are one record (one stack, comm and
	// thread): a last samples/count type says how many samples it holds.
	// A sched_switch is a record of its own (blocked time is labelled).
	text = "a 1 1.0: 1000 cpu-clock:\n\t1 f (/x)\n\na 1 2.0: 3000 cpu-clock:\n\t1 f (/x)\n\n" +
		"a 1 2.5: 70000 cycles:u:\n\t1 f (/x)\n\n" +
		"a 1 3.0: 5 sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120\n\t1 f (/x)\n"
	p, _ = mustParse(t, text)
	if got := sampleTypes(p); !reflect.DeepEqual(got, []string{"cpu-clock/nanoseconds", "cycles:u/count", "sched:sched_switch/count", "samples/count"}) {
		t.Errorf("sample types %v", got)
	}
	if len(p.Sample) != 2 || !reflect.DeepEqual(p.Sample[0].Value, []int64{4000, 70000, 0, 3}) || !reflect.DeepEqual(p.Sample[1].Value, []int64{0, 0, 5, 1}) {
		t.Errorf("%d samples, values %v", len(p.Sample), p.Sample[0].Value)
	}
	if p.Period != 1000 || p.PeriodType.Unit != "nanoseconds" {
		t.Errorf("period %d %v", p.Period, p.PeriodType)
	}

	// A header without a period among ones with periods counts 1 and warns.
	_, warns := mustParse(t, "a 1 1.0: 1000 cpu-clock:\n\t1 f (/x)\n\na 1 2.0: cpu-clock:\n\t1 f (/x)\n")
	if len(warns) != 1 || !strings.Contains(warns[0], "no period") {
		t.Errorf("warnings %q", warns)
	}
}

func TestEventKinds(t *testing.T) {
	for ev, want := range map[string][2]bool{
		"cycles": {true, false}, "cycles:u": {true, false}, "cpu-clock": {true, false},
		"task-clock:ppp": {true, false}, "instructions": {true, false}, "cpu_core/cycles/": {true, false},
		"page-faults": {false, false}, "sched:sched_switch": {false, true}, "context-switches": {false, true},
		"block:block_rq_issue": {false, false}, "sched:sched_wakeup": {false, false},
	} {
		if on, off := OnCPUEvent(ev), OffCPUEvent(ev); on != want[0] || off != want[1] {
			t.Errorf("%s: on %v off %v, want %v", ev, on, off, want)
		}
	}
}

func TestHeaderFrame(t *testing.T) {
	// perf script without a call graph prints the ip on the header line.
	text := "             fio 236193/236193 [021] 1.791544:          1    block:block_rq_issue: 259,76 R 4096 () 57622160 + 8 [fio] ffffffff8beead90 blk_mq_start_request ([kernel.kallsyms])\n" +
		"         swapper     0/0     [012] 1.791615:          1 block:block_rq_complete: 259,76 R () 57622160 + 8 [0] ffffffff8bee2b4c blk_update_request+0x4 ([kernel.kallsyms])\n" +
		"java 12345/12346 [003] 2.0: 1 cycles:  7f0000001234 Foo::bar(int) (/usr/lib/libfoo.so)\n"
	p, _ := mustParse(t, text)
	if got := folded(p, 0); !reflect.DeepEqual(got, map[string]int64{"fio;blk_mq_start_request": 1}) {
		t.Errorf("issue %v", got)
	}
	if got := folded(p, 1); !reflect.DeepEqual(got, map[string]int64{"swapper;blk_update_request": 1}) {
		t.Errorf("complete %v", got)
	}
	if got := folded(p, 2); !reflect.DeepEqual(got, map[string]int64{"java;Foo::bar": 1}) {
		t.Errorf("cycles %v", got)
	}
}

func TestUnindentedFrames(t *testing.T) {
	text := "java 19983 cycles:\nffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n7f72432b4e9a start_thread (/lib/x86_64-linux-gnu/libpthread-2.15.so)\n\n"
	p, _ := mustParse(t, text)
	if got := folded(p, 0); !reflect.DeepEqual(got, map[string]int64{"java;start_thread;native_write_msr_safe": 1}) {
		t.Errorf("stacks %v", got)
	}
}

func TestBOMAndCRLF(t *testing.T) {
	text := "\uFEFFcomm1\t0/0\t\t[000] 0.0:\t\t\t1 cpu-clock:\r\n\t4004d0 main (/usr/bin/app)\r\n\r\ncomm1\t0/0\t\t[000] 1.0:\t\t\t1 cpu-clock:\r\n\t4004d0 main (/usr/bin/app)\r\n"
	p, _ := mustParse(t, text)
	if got := folded(p, 0); !reflect.DeepEqual(got, map[string]int64{"comm1;main": 2}) {
		t.Errorf("stacks %v", got)
	}
	if !Looks(text) {
		t.Error("Looks = false")
	}
}

func TestSrcline(t *testing.T) {
	text := "app 1 cycles:\n\t4004d0 main+0x10 (/usr/bin/app)\n  app.c:42\n\n"
	p, warns := mustParse(t, text)
	if got := folded(p, 0); !reflect.DeepEqual(got, map[string]int64{"app;main": 1}) {
		t.Errorf("stacks %v", got)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "srcline") {
		t.Errorf("warnings %q", warns)
	}
}

func TestErrors(t *testing.T) {
	long := "x" + strings.Repeat("é", 200)
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "no samples"},
		{"comments only", "# ========\n# cmdline : perf record\n\n", "no samples"},
		{"garbage header", "hello world\n", `line 1: malformed event header (want`},
		{"folded stacks", "main;foo;bar 12\n", `line 1: malformed event header`},
		{"frame before header", "\n\t4004d0 main (/usr/bin/app)\n", `line 2: stack frame before any event header: "\t4004d0 main (/usr/bin/app)"`},
		{"garbage frame", "app 1 cycles:\n\t4004d0 main (/usr/bin/app)\n\t!!! nonsense\n", `line 3: malformed stack frame (want`},
		{"srcline outside sample", "\n  app.c:42\n", "line 2: not a perf script event header"},
		{"pid overflow", "app 99999999999999999999 1.0: cycles:\n", "line 1: malformed event header (bad tid"},
		{"period overflow", "app 1 1.0: 99999999999999999999 cycles:\n", "line 1: malformed event header (bad period"},
		{"long line truncated", "app 1 cycles:\n\t" + long + "\n", `line 2: malformed stack frame`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, err := Parse(tc.text)
			if err == nil {
				t.Fatalf("no error; %d samples", len(p.Sample))
			}
			if !strings.HasPrefix(err.Error(), "perf script: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if len(err.Error()) > 200 {
				t.Errorf("error too long (%d bytes): %q", len(err.Error()), err)
			}
		})
	}
}

func TestTooDeep(t *testing.T) {
	var b strings.Builder
	b.WriteString("app 1 cycles:\n")
	for i := 0; i <= MaxFrames; i++ {
		fmt.Fprintf(&b, "\t%x f%d (/x)\n", i+1, i%7)
	}
	_, _, err := Parse(b.String())
	if err == nil || !strings.Contains(err.Error(), "deeper than") {
		t.Errorf("error %v", err)
	}
}

func TestLooks(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"java 25607 4794564.109216: cycles:\n\t7f1 foo (/x.so)\n\t7f2 bar (/x.so)\n\n", true},
		{"# header\n#\nperf 47118 [011] 51499.088689:          1 page-faults: \n\t29ebc cmd_record (/usr/bin/perf)\n", true},
		{"\uFEFFcomm\t0/0\t\t[000] 0.0:\t\t\t1 event_name: props\n\taddress symbol (module)\n", true},
		{"java 19983 cycles:\nffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n", true},
		{"main;foo;bar 12\nmain;baz 3\n", false},
		{"app.exe!Main;ntdll!Start 3\n", false},
		{`{"traceEvents": []}`, false},
		{"", false},
		{"# only a comment\n", false},
		{"\t4004d0 main (/usr/bin/app)\n\t4004d0 main (/usr/bin/app)\n", false},
		{"hello 12 world\nfoo bar\nbaz\n", false},
	} {
		if got := Looks(tc.text); got != tc.want {
			t.Errorf("Looks(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestTidyName(t *testing.T) {
	for _, tc := range []struct {
		sym, dso string
		java     bool
		want     string
	}{
		{"a;b", "", false, "a:b"},
		{`say"hi"`, "", false, "sayhi"},
		{"[unknown]", "/usr/lib/libc.so.6", false, "[libc.so.6]"},
		{"[unknown]", "[vdso]", false, "[vdso]"},
		{"", "", false, "[unknown]"},
		{"(", "", false, "[unknown]"},
		{"Lorg/mozilla/javascript/MemberBox;.<init>(Ljava/lang/reflect/Method;)V", "", true, "org/mozilla/javascript/MemberBox:.<init>"},
	} {
		if got := TidyName(tc.sym, tc.dso, tc.java); got != tc.want {
			t.Errorf("TidyName(%q, %q, %v) = %q, want %q", tc.sym, tc.dso, tc.java, got, tc.want)
		}
	}
}

// seeds are the inline cases the fuzzer starts from.
var seeds = []string{
	"offcpu 24397 [000] 17147.339885: sched:sched_switch: prev_comm=offcpu prev_pid=24397 prev_prio=120 prev_state=R ==> next_comm=offcpu next_pid=24399 next_prio=120\n\tffffffff82266208 __schedule+0x628 ([kernel.kallsyms])\n\n" +
		"offcpu 24397 [000] 17147.339912: PERF_RECORD_SWITCH OUT preempt\noffcpu 24399 [000] 17147.339914: PERF_RECORD_SWITCH IN         \n" +
		"offcpu 24399 [000] 17147.339932: sched:sched_switch: prev_comm=offcpu prev_pid=24399 prev_prio=120 prev_state=S ==> next_comm=offcpu next_pid=24397 next_prio=120\n\t8612b __GI___lll_lock_wait+0x2b (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n" +
		":-1    -1 [000] 17148.416353: sched:sched_switch: prev_comm=offcpu prev_pid=24399 prev_prio=120 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120\n\n",
	"a 1/1 [000] 1.0: sched:sched_switch: a:1 [120] D ==> b:2 [120]\n\t1 f (/x)\n\nb 2/2 [001] 2.5: sched:sched_switch: b:2 [120] S ==> a:1 [120]\n\t2 g (/x)\n\nswapper 0/0 [001] 3.0: sched:sched_switch: prev_comm=swapper prev_pid=0 prev_state=R ==> next_comm=b next_pid=2\n\n",
	"java 24636/25607 [000] 4794564.109216:     250000 cycles:u: \n\t    7f0a1b2c3d4e Lcom/example/Foo;::bar+0x1c (/tmp/perf-24636.map)\n\tffffffff8103ce3b native_safe_halt ([kernel.kallsyms])\n\n",
	"V8 WorkerThread 25607 4794564.109216: cycles:\n\t dd777 v8::internal::Execution::Call(v8::internal::Isolate*, bool) (/tmp/node)\n\t0 [unknown] ([unknown])\n",
	"func_ab 15294 cpu-clock: \n\t4004d0 a->b (/x)\n\t4004d0 c (inlined)\n\t4004d1 d (/x)\n\n",
	"\uFEFFcomm\t0/0\t\t[000] 0.0:\t\t\t1 sched:sched_switch: prev_comm=comm1 prev_pid=0 ==> next_comm=comm2\r\n\taddress symbol (module)\r\n\r\n",
	"             fio 236193/236193 [021] 1.791544:          1    block:block_rq_issue: 259,76 R 4096 () 57622160 + 8 [fio] ffffffff8beead90 blk_mq_start_request ([kernel.kallsyms])\n",
	"java 19983 cycles:\nffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n7f1e2215d058  (/lib/libc-2.15.so)\n\n",
	"# c\napp 1 1.0: 5 instructions:\n\t1 f (/x)\n  app.c:3\n\napp 1 2.0: cycles:\n\t2 g (/x (deleted))\n",
	"hello world\n",
	"\n\t4004d0 main (/usr/bin/app)\n",
	"app 99999999999999999999 1.0: cycles:\n",
	// A waiter's switch-out, the holder's sched_waking of it and its
	// switch-in (testdata/waker/waker.c, --call-graph dwarf; kernel
	// frames cut).
	"waker 28236 [000] 29094.204880: sched:sched_switch: prev_comm=waker prev_pid=28236 prev_prio=120 prev_state=S ==> next_comm=waker next_pid=28237 next_prio=120\n\tffffffff82248208 __schedule+0x628 ([kernel.kallsyms])\n\t           8612b futex_wait+0x2b (inlined)\n\t           8612b __GI___lll_lock_wait+0x2b (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\t            136e wait_here+0x2a (/tmp/i40b/waker)\n\n" +
		"waker 28238 [000] 29094.204904: PERF_RECORD_SWITCH OUT        \nwaker 28234 [000] 29094.205053: PERF_RECORD_SWITCH IN         \n" +
		"waker 28234 [000] 29094.205057: sched:sched_waking: comm=waker pid=28236 prio=120 target_cpu=000\n\tffffffff813b53c6 try_to_wake_up+0x3b6 ([kernel.kallsyms])\n\t           86193 __GI___lll_lock_wake+0x13 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\t           8dcad lll_mutex_unlock_optimized+0x5d (inlined)\n\t           8dcad __GI___pthread_mutex_unlock_usercnt+0x5d (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\t            12bb hold_work+0x66 (/tmp/i40b/waker)\n\n" +
		"waker 28236 [000] 29094.205067: PERF_RECORD_SWITCH IN         \n",
	// The napper's switch-out in nanosleep, the timer's wake-up of it
	// taken in the holder, whose spin the interrupt stopped, and the
	// napper's switch-in (the same recording).
	"waker 28235 [000] 29094.225922: sched:sched_switch: prev_comm=waker prev_pid=28235 prev_prio=120 prev_state=S ==> next_comm=waker next_pid=28234 next_prio=120\n\tffffffff82248208 __schedule+0x628 ([kernel.kallsyms])\n\tffffffff8224fbde do_nanosleep+0x5e ([kernel.kallsyms])\n\t            13f6 nap_here+0x25 (/tmp/i40b/waker)\n\n" +
		"waker 28235 [000] 29094.225927: PERF_RECORD_SWITCH OUT        \nwaker 28234 [000] 29094.225928: PERF_RECORD_SWITCH IN         \n" +
		"waker 28234 [000] 29094.226978: sched:sched_waking: comm=waker pid=28235 prio=120 target_cpu=000\n\tffffffff813b53c6 try_to_wake_up+0x3b6 ([kernel.kallsyms])\n\tffffffff8142de4e hrtimer_wakeup+0x1e ([kernel.kallsyms])\n\tffffffff8142f2f0 hrtimer_interrupt+0x100 ([kernel.kallsyms])\n\tffffffff81000e06 asm_sysvec_apic_timer_interrupt+0x16 ([kernel.kallsyms])\n\t            1249 spin+0x2c (/tmp/i40b/waker)\n\t            129e hold_work+0x49 (/tmp/i40b/waker)\n\n" +
		"waker 28235 [000] 29094.226993: PERF_RECORD_SWITCH IN         \n",
}

func TestSeeds(t *testing.T) {
	for _, s := range seeds {
		checkParse(t, s)
	}
}

// checkParse asserts what FuzzParse checks: no panic, and either a valid
// profile with samples whose values match the sample types, or an error that
// names the parser.
func checkParse(t *testing.T, text string) {
	t.Helper()
	Looks(text)
	p, _, err := Parse(text)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "perf script: ") {
			t.Errorf("error without prefix: %v", err)
		}
		if strings.Contains(err.Error(), "parser failed") {
			t.Errorf("panic: %v", err)
		}
		return
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("CheckValid: %v\ninput %q", err, text)
	}
	if len(p.Sample) == 0 || len(p.SampleType) == 0 {
		t.Fatalf("no samples or types without an error")
	}
	found := false
	for _, st := range p.SampleType {
		found = found || st.Type == p.DefaultSampleType
	}
	if !found {
		t.Errorf("DefaultSampleType %q is not a sample type", p.DefaultSampleType)
	}
	for _, s := range p.Sample {
		if len(s.Value) != len(p.SampleType) {
			t.Fatalf("sample has %d values for %d types", len(s.Value), len(p.SampleType))
		}
		if len(s.Label[labels.WakerThread]) > 0 && len(s.Label[labels.Waker]) != 1 {
			t.Errorf("a waker thread %v without one waker %q", s.Label[labels.WakerThread], s.Label[labels.Waker])
		}
		for _, l := range s.Location {
			for _, ln := range l.Line {
				if ln.Function.Name == "" {
					t.Errorf("empty function name in %q", text)
				}
			}
		}
	}
	names := sampleTypes(p)
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	for i := 1; i < len(sorted); i++ {
		if strings.SplitN(sorted[i], "/", 2)[0] == strings.SplitN(sorted[i-1], "/", 2)[0] && !strings.Contains(sorted[i], "//") {
			t.Errorf("duplicate sample type in %v", names)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<16 {
			return
		}
		checkParse(t, text)
	})
}
