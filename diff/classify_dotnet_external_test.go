package diff

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/symbolize"
)

// An EventPipe sample flagged external (UNMANAGED_CODE_TIME: native code
// or blocked in the OS) is decided by the managed frame that called out
// when that frame names a wait. In the HeartRateMonitor trace (PerfView's
// test inputs, in the corpus) the UI thread's native event loop under
// Tizen's UICoreBackend.Run is idle: wait, not cpu. External samples under
// frames that name no wait (ElmSharp creating widgets) are native or
// blocked, unknown: on their own line, in no bucket.
func TestDotnetExternalEventLoopIsWait(t *testing.T) {
	dir := needCorpus(t)
	l := loadFile(t, filepath.Join(dir, "perfview", "src__TraceEvent__TraceEvent.Tests__inputs__speedscope__HeartRateMonitor.10068.nettrace.zip"))
	a := NewAnalyzer(Options{})
	var loop, loopWait, realize, realizeUnknown, managedUnderLoop float64
	a.OnSample(func(s *Sample) {
		if len(s.Stack) < 2 {
			return
		}
		pseudo := a.MethodName(s.Stack[0])
		first := symbolize.Normalize(a.MethodName(s.Stack[1]))
		switch {
		case pseudo == "UNMANAGED_CODE_TIME" && first == "Tizen.Applications.CoreBackend.UICoreBackend.Run":
			loop += s.Value
			if s.Bucket == rules.Wait && a.MethodName(s.Stack[s.Decider]) == a.MethodName(s.Stack[1]) {
				loopWait += s.Value
			}
		case pseudo == "UNMANAGED_CODE_TIME" && first == "ElmSharp.EvasObject.Realize":
			realize += s.Value
			if s.Apart == Unknown {
				realizeUnknown += s.Value
			}
		case pseudo == "CPU_TIME" && first == "Tizen.Applications.CoreBackend.UICoreBackend.Run":
			managedUnderLoop += s.Value
			if s.Bucket != rules.CPU {
				t.Errorf("a managed (CPU_TIME) sample in UICoreBackend.Run is %s, want cpu", s.Bucket)
			}
		}
	})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	top := a.Top()
	if loop == 0 || realize == 0 {
		t.Fatalf("trace without the UI event loop's external samples (%v) or ElmSharp's (%v)", loop, realize)
	}
	if loopWait != loop {
		t.Errorf("event loop: %v of %v ns wait decided by UICoreBackend.Run, want all", loopWait, loop)
	}
	if realizeUnknown != realize {
		t.Errorf("ElmSharp.EvasObject.Realize external: %v of %v ns native-or-blocked unknown, want all (it names no wait)", realizeUnknown, realize)
	}
	if top.Unknown == nil || top.Unknown.Value < realize {
		t.Fatalf("unknown line %+v, want at least ElmSharp's %v ns", top.Unknown, realize)
	}
	recorded := top.Total + top.Unknown.Value
	if cpu := top.Buckets[rules.CPU].Value / recorded; cpu > 0.05 {
		t.Errorf("cpu is %.0f%% of the trace; the managed (CPU_TIME) samples are %.1f%%", 100*cpu, 100*managedUnderLoop/recorded)
	}
}

// External samples that no frame places are kept apart from the buckets
// on each side (Result.Unknown, a share of all recorded time), out of the
// gate's and the methods' tables, and the verdict says so when they are a
// large part of a side; managed samples under the same frames stay cpu.
func TestExternalUnknownIsApart(t *testing.T) {
	side := func(unknown int64) *profile.Loaded {
		p := stacksProfile([]stackSample{
			{600, nil, []string{"UNMANAGED_CODE_TIME", "ElmSharp.EvasObject.Realize", "App.Main"}},
			{unknown, nil, []string{"UNMANAGED_CODE_TIME", "App.Render", "App.Main"}},
			{300, nil, []string{"CPU_TIME", "App.Render", "App.Main"}},
			{100, nil, []string{"UNMANAGED_CODE_TIME", "System.Threading.Monitor.Wait", "App.Main"}},
		})
		return &profile.Loaded{Source: "x.nettrace", Format: profile.FormatNettrace, Kind: profile.KindWall, Profile: p}
	}
	a := NewAnalyzer(Options{Top: -1})
	if err := a.Add(result.Base, side(0)); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(result.New, side(1000)); err != nil {
		t.Fatal(err)
	}
	r := a.Diff()
	if r.Unknown == nil || !near(r.Unknown.BaseValue, 600) || !near(r.Unknown.NewValue, 1600) ||
		!near(r.Unknown.Base, 0.6) || !near(r.Unknown.New, 0.8) {
		t.Fatalf("unknown row %+v, want 600 → 1600 ns, 60%% → 80%% of all time", r.Unknown)
	}
	for _, b := range r.Buckets {
		want := map[rules.Bucket][2]float64{rules.CPU: {300, 300}, rules.Wait: {100, 100}}[b.Bucket]
		if !near(b.BaseValue, want[0]) || !near(b.NewValue, want[1]) {
			t.Errorf("%s: %v → %v, want %v", b.Bucket, b.BaseValue, b.NewValue, want)
		}
	}
	for _, m := range r.Methods {
		if strings.Contains(m.Name, "ElmSharp") || m.NewValue > 300 {
			t.Errorf("method row %s (%v → %v) holds unknown time", m.Name, m.BaseValue, m.NewValue)
		}
	}
	var caveat bool
	for _, c := range r.Verdict.Caveats {
		caveat = caveat || c.Code == result.CaveatUnknown
	}
	if !caveat {
		t.Errorf("verdict caveats %+v lack %s", r.Verdict.Caveats, result.CaveatUnknown)
	}
}

// An external rule counts only for the frame that called out of managed
// code in an external sample; a fallback (a skip rule with a bucket) only
// when nothing else decides.
func TestExternalAndFallbackRules(t *testing.T) {
	checkStacks(t, profile.KindWall, []bucketCase{
		{[]string{"UNMANAGED_CODE_TIME", "Tizen.Applications.CoreBackend.UICoreBackend.Run", "App.Main"}, rules.Wait},
		{[]string{"CPU_TIME", "Tizen.Applications.CoreBackend.UICoreBackend.Run", "App.Main"}, rules.CPU},
		{[]string{"UNMANAGED_CODE_TIME", "App.OnTick", "Tizen.Applications.CoreBackend.UICoreBackend.Run"}, rules.CPU},
		{[]string{"UNMANAGED_CODE_TIME", "System.Net.Sockets!System.Net.Sockets.Socket.Receive(System.Span`1<uint8>)", "App.Serve"}, rules.IO},
		{[]string{"CPU_TIME", "System.Net.Sockets.Socket.Receive", "App.Serve"}, rules.CPU},
		{[]string{"UNMANAGED_CODE_TIME", "System.Windows.Forms.Application.Run", "App.Main"}, rules.Wait},
		{[]string{"UNMANAGED_CODE_TIME", "System.Threading.Monitor.Wait", "App.Consume"}, rules.Wait},
	})
	rules, err := rules.Parse("u.rules", strings.NewReader("u\tio\tskip\t^f$\tfallback\nu\twait\tstrong,external\t^g$\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !rules[0].Fallback || rules[0].BucketName() != "io" || rules[1].Modifiers() != "strong,external" || rules[1].Fallback {
		t.Errorf("parsed %+v %+v", *rules[0], *rules[1])
	}
}
