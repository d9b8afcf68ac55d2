package diff

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/symbolize"
)

// An EventPipe sample flagged external (UNMANAGED_CODE_TIME: native code
// or blocked in the OS) is decided by the managed frame that called out
// when that frame names a wait. In the HeartRateMonitor trace (PerfView's
// test inputs, in the corpus) the UI thread's native event loop under
// Tizen's UICoreBackend.Run is idle: wait, not cpu. External samples under
// frames that name no wait (ElmSharp creating widgets) stay cpu.
func TestDotnetExternalEventLoopIsWait(t *testing.T) {
	dir := needCorpus(t)
	l := loadFile(t, filepath.Join(dir, "perfview", "src__TraceEvent__TraceEvent.Tests__inputs__speedscope__HeartRateMonitor.10068.nettrace.zip"))
	a := NewAnalyzer(Options{})
	var loop, loopWait, realize, realizeCPU, managedUnderLoop float64
	a.OnSample(func(s *Sample) {
		if len(s.Stack) < 2 {
			return
		}
		pseudo := a.MethodName(s.Stack[0])
		first := symbolize.Normalize(a.MethodName(s.Stack[1]))
		switch {
		case pseudo == "UNMANAGED_CODE_TIME" && first == "Tizen.Applications.CoreBackend.UICoreBackend.Run":
			loop += s.Value
			if s.Bucket == Wait && a.MethodName(s.Stack[s.Decider]) == a.MethodName(s.Stack[1]) {
				loopWait += s.Value
			}
		case pseudo == "UNMANAGED_CODE_TIME" && first == "ElmSharp.EvasObject.Realize":
			realize += s.Value
			if s.Bucket == CPU {
				realizeCPU += s.Value
			}
		case pseudo == "CPU_TIME" && first == "Tizen.Applications.CoreBackend.UICoreBackend.Run":
			managedUnderLoop += s.Value
			if s.Bucket != CPU {
				t.Errorf("a managed (CPU_TIME) sample in UICoreBackend.Run is %s, want cpu", s.Bucket)
			}
		}
	})
	if err := a.Add(Base, l); err != nil {
		t.Fatal(err)
	}
	top := a.Top()
	if loop == 0 || realize == 0 {
		t.Fatalf("trace without the UI event loop's external samples (%v) or ElmSharp's (%v)", loop, realize)
	}
	if loopWait != loop {
		t.Errorf("event loop: %v of %v ns wait decided by UICoreBackend.Run, want all", loopWait, loop)
	}
	if realizeCPU != realize {
		t.Errorf("ElmSharp.EvasObject.Realize external: %v of %v ns cpu, want all (it names no wait)", realizeCPU, realize)
	}
	if cpu := top.Buckets[CPU].Value / top.Total; cpu > 0.5 {
		t.Errorf("cpu is %.0f%% of the trace; the idle event loop alone is %.0f%%", 100*cpu, 100*loop/top.Total)
	}
}

// An external rule counts only for the frame that called out of managed
// code in an external sample; a fallback (a skip rule with a bucket) only
// when nothing else decides.
func TestExternalAndFallbackRules(t *testing.T) {
	checkStacks(t, profile.KindWall, []bucketCase{
		{[]string{"UNMANAGED_CODE_TIME", "Tizen.Applications.CoreBackend.UICoreBackend.Run", "App.Main"}, Wait},
		{[]string{"CPU_TIME", "Tizen.Applications.CoreBackend.UICoreBackend.Run", "App.Main"}, CPU},
		{[]string{"UNMANAGED_CODE_TIME", "App.OnTick", "Tizen.Applications.CoreBackend.UICoreBackend.Run"}, CPU},
		{[]string{"UNMANAGED_CODE_TIME", "System.Net.Sockets!System.Net.Sockets.Socket.Receive(System.Span`1<uint8>)", "App.Serve"}, IO},
		{[]string{"CPU_TIME", "System.Net.Sockets.Socket.Receive", "App.Serve"}, CPU},
		{[]string{"UNMANAGED_CODE_TIME", "System.Windows.Forms.Application.Run", "App.Main"}, Wait},
		{[]string{"UNMANAGED_CODE_TIME", "System.Threading.Monitor.Wait", "App.Consume"}, Wait},
	})
	rules, err := ParseRules("u.rules", strings.NewReader("u\tio\tskip\t^f$\tfallback\nu\twait\tstrong,external\t^g$\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !rules[0].Fallback || rules[0].BucketName() != "io" || rules[1].Modifiers() != "strong,external" || rules[1].Fallback {
		t.Errorf("parsed %+v %+v", *rules[0], *rules[1])
	}
}
