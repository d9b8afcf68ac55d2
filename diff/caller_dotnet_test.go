package diff

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/symbolize"
)

// --by caller on .NET stacks skips the class library (System.*,
// Microsoft.*, and frames of those assemblies) as the JVM view skips the
// JDK: in PerfView's real EventPipe traces (the corpus), a sample with
// the program's own frames is never charged to System.Console's
// StdInReader or a Task's GetResultCore, and the console reader's time
// in the mixed managed/external trace goes to the program's Main, which
// called Console.ReadLine.
func TestDotnetCallerSkipsClassLibrary(t *testing.T) {
	dir := needCorpus(t)
	var readLineMain float64
	for _, name := range []string{
		"src__TraceEvent__TraceEvent.Tests__inputs__speedscope__HeartRateMonitor.10068.nettrace.zip",
		"src__TraceEvent__TraceEvent.Tests__inputs__speedscope__VoiceMemo.23092.nettrace.zip",
		"src__TraceEvent__TraceEvent.Tests__inputs__speedscope__mixed_managed_external_samples.nettrace.zip",
	} {
		l := loadFile(t, filepath.Join(dir, "perfview", name))
		a := NewAnalyzer(Options{By: result.ByCaller})
		var program, libCaller, libFrames int
		a.OnSample(func(s *Sample) {
			hasProgram := false
			for _, id := range s.Stack[max(s.Decider, 0):] {
				n := symbolize.Normalize(a.MethodName(id))
				switch {
				case isDotnetLib(n) || strings.HasPrefix(n, "Interop+"):
					libFrames++
				case !strings.Contains(n, "?!") && !strings.HasSuffix(n, "_TIME"):
					hasProgram = true
				}
			}
			if !hasProgram {
				return
			}
			program++
			c := symbolize.Normalize(a.MethodName(s.Stack[s.Caller()]))
			if isDotnetLib(c) {
				libCaller++
				if libCaller <= 3 {
					t.Errorf("%s: caller %s, a class library frame, though the stack has the program's frames", name, c)
				}
			}
			for _, id := range s.Stack {
				if strings.HasSuffix(a.MethodName(id), "StdInReader.ReadLineCore") && c == "NoNativeStacks.Program.Main" {
					readLineMain += s.Value
					break
				}
			}
		})
		if err := a.Add(result.Base, l); err != nil {
			t.Fatal(err)
		}
		if program == 0 || libFrames == 0 {
			t.Fatalf("%s: %d samples with program frames, %d class library frames: not the stacks this test is about", name, program, libFrames)
		}
	}
	if readLineMain == 0 {
		t.Error("mixed_managed_external_samples: no StdInReader.ReadLineCore time charged to NoNativeStacks.Program.Main")
	}
}

// .NET's namespaces are the class library; a program's namespace that
// merely contains one is not.
func TestIsDotnetLib(t *testing.T) {
	for name, want := range map[string]bool{
		"System.Threading.Monitor.Enter":     true,
		"System.IO.StdInReader.ReadLineCore": true,
		"Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpProtocol.ProcessRequests": true,
		"NoNativeStacks.Program.Main": false,
		"MyCompany.System.Cache.Get":  false,
		"Systemic.Run":                false,
	} {
		if got := isDotnetLib(name); got != want {
			t.Errorf("isDotnetLib(%q) = %v, want %v", name, got, want)
		}
	}
}
