package diff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
)

// needCorpus returns the shared corpus of real profiles (../shared/corpus
// beside the module root), or skips the test when it is absent.
func needCorpus(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "corpus")
	if _, err := os.Stat(filepath.Join(dir, "index.tsv")); err != nil {
		t.Skip("no ../shared/corpus beside the module: corpus test skipped")
	}
	return dir
}

// --by caller on JVM stacks skips the JDK as the Go caller skips the
// standard library: in real perf-map-agent stacks of Tomcat and vert.x
// (perf script in the corpus, page faults and cpu), a sample with the program's own frames is
// never charged to java/lang/Thread.run, ThreadPoolExecutor$Worker.run or
// another JDK frame.
func TestJVMCallerSkipsJDK(t *testing.T) {
	dir := needCorpus(t)
	for _, name := range []string{"flamegraph/test__perf-java-faults-01.txt", "flamegraph/test__perf-java-stacks-01.txt", "flamegraph/test__perf-vertx-stacks-01.txt"} {
		l := loadFile(t, filepath.Join(dir, name))
		a := NewAnalyzer(Options{By: result.ByCaller})
		var program, jdkCaller, poolWorker int
		a.OnSample(func(s *Sample) {
			hasProgram := false
			for _, id := range s.Stack[max(s.Decider, 0):] {
				n := a.MethodName(id)
				if strings.HasPrefix(n, "org/") || strings.HasPrefix(n, "io/") {
					hasProgram = true
				}
				if strings.Contains(n, "ThreadPoolExecutor$Worker") {
					poolWorker++
				}
			}
			if !hasProgram {
				return
			}
			program++
			c := a.MethodName(s.Stack[s.Caller()])
			if isJVMLib(strings.ReplaceAll(c, "/", ".")) {
				jdkCaller++
				if jdkCaller <= 3 {
					t.Errorf("%s: caller %s, a JDK frame, though the stack has the program's frames", name, c)
				}
			}
		})
		if err := a.Add(result.Base, l); err != nil {
			t.Fatal(err)
		}
		if program == 0 || (name == "flamegraph/test__perf-java-faults-01.txt" && poolWorker == 0) {
			t.Fatalf("%s: %d samples with program frames, %d under a pool worker: not the stacks this test is about", name, program, poolWorker)
		}
		if jdkCaller > 0 {
			t.Errorf("%s: %d of %d samples charged to a JDK frame", name, jdkCaller, program)
		}
	}
}

// The JDK's packages are the library; the program's packages, including
// ones that merely start like a JDK root, are not.
func TestIsJVMLib(t *testing.T) {
	for name, want := range map[string]bool{
		"java.util.concurrent.ThreadPoolExecutor$Worker.run":  true,
		"java.lang.Thread.run":                                true,
		"jdk.internal.misc.Unsafe.park":                       true,
		"sun.nio.ch.EPoll.wait":                               true,
		"kotlinx.coroutines.DispatchedTask.run":               true,
		"scala.concurrent.impl.Promise$Transformation.run":    true,
		"javalin.Handler.handle":                              false,
		"org.apache.catalina.connector.CoyoteAdapter.service": false,
		"main.main": false,
	} {
		if got := isJVMLib(name); got != want {
			t.Errorf("isJVMLib(%q) = %v, want %v", name, got, want)
		}
	}
}
