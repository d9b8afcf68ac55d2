package render

import (
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff/report"
)

// Long names are shortened by meaning: parameters, type arguments, the
// module, then the namespace or import path go before the class, the
// class before the method; each case is the longest form that fits.
func TestElideName(t *testing.T) {
	cases := []struct {
		name string
		w    int
		want string
	}{
		// Fits: unchanged.
		{"main.main", 20, "main.main"},
		// Go: the import path's directories go first, then the package.
		{"github.com/profdiff/profdiff/workloads/jsonserver.(*waitRegistry).acquire", 50,
			"workloads/jsonserver.(*waitRegistry).acquire"},
		{"github.com/profdiff/profdiff/workloads/jsonserver.(*waitRegistry).acquire", 40,
			"jsonserver.(*waitRegistry).acquire"},
		{"github.com/profdiff/profdiff/workloads/jsonserver.(*waitRegistry).release", 31, "(*waitRegistry).release"},
		{"net/http.(*conn).serve", 20, "http.(*conn).serve"},
		{"net/http.(*conn).serve", 15, "(*conn).serve"},
		{"net/http.(*conn).serve", 10, "serve"},
		{"runtime.(*gcControllerState).findRunnableGCWorker", 20, "findRunnableGCWorker"},
		// A closure stays with its function.
		{"github.com/profdiff/profdiff/cmd/profdiff.goroutineProfiles.func3.1", 25, "goroutineProfiles.func3.1"},
		{"main.main.func1", 10, "main.func1"},
		// Go generics: type arguments collapse first.
		{"github.com/acme/x/cache.(*LRU[go.shape.string,go.shape.int]).Get", 40, "github.com/acme/x/cache.(*LRU[…]).Get"},
		{"github.com/acme/x/cache.(*LRU[go.shape.string,go.shape.int]).Get", 20, "cache.(*LRU[…]).Get"},
		// .NET: parameters, the module, the namespace, the outer class.
		{"System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(int32,bool,bool)", 53,
			"System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(…)"},
		{"System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(int32,bool,bool)", 50,
			"Threading.WaitSubsystem+ThreadWaitInfo.Wait(…)"},
		{"System.Private.CoreLib!System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(int32,bool,bool)", 68,
			"System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(…)"},
		{"System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(int32,bool,bool)", 30, "ThreadWaitInfo.Wait(…)"},
		{"System.Threading.LowLevelLock.WaitAndAcquire", 34, "LowLevelLock.WaitAndAcquire"},
		{"System.Threading.LowLevelLock.WaitAndAcquire", 20, "WaitAndAcquire"},
		// Java: the package, then the outer class.
		{"org.apache.kafka.common.network.Selector.poll", 36, "kafka.common.network.Selector.poll"},
		{"org.apache.kafka.common.network.Selector.poll", 17, "Selector.poll"},
		{"java.util.concurrent.ThreadPoolExecutor$Worker.run", 20, "Worker.run"},
		// C++: template arguments, parameters, then namespaces.
		{"std::vector<int, std::allocator<int> >::push_back(int const&)", 30, "std::vector<…>::push_back(…)"},
		{"std::vector<int, std::allocator<int> >::push_back(int const&)", 25, "vector<…>::push_back(…)"},
		{"boost::asio::detail::scheduler::do_run_one(boost::asio::detail::conditionally_enabled_mutex::scoped_lock&)", 40,
			"asio::detail::scheduler::do_run_one(…)"},
		// JavaScript: a Node built-in module's path as a Go import path's;
		// a class's method as Java's.
		{"node:internal/process/task_queues.processTicksAndRejections", 40, "task_queues.processTicksAndRejections"},
		{"node:internal/process/task_queues.processTicksAndRejections", 30, "processTicksAndRejections"},
		{"Router.handle", 10, "handle"},
		// Narrower than the method: its start stays.
		{"System.Threading.LowLevelLock.WaitAndAcquire", 10, "WaitAndAc…"},
	}
	for _, c := range cases {
		params := 0 // the final parameter list, as package present marks it: no name here has parentheses within it
		if strings.HasSuffix(c.name, ")") {
			params = strings.LastIndex(c.name, "(")
		}
		if strings.HasPrefix(c.name, "boost") {
			params = strings.Index(c.name, "(")
		}
		got := elideName(c.name, params, c.w)
		if got != c.want {
			t.Errorf("elideName(%q, %d, %d) = %q, want %q", c.name, params, c.w, got, c.want)
		}
		if width(got) > c.w {
			t.Errorf("elideName(%q, %d, %d) = %q: %d wide", c.name, params, c.w, got, width(got))
		}
	}
}

// Two names that would shorten to the same text in one column are shown
// whole (wrapped) instead, so that no two rows read alike.
func TestAmbiguousNamesWrapWhole(t *testing.T) {
	a, b := "System.Threading.ManualResetEventSlim.Wait(int32)", "System.Threading.Monitor.Wait(class System.Object)"
	c := "System.Threading.LowLevelLock.WaitAndAcquire"
	r := &report.Report{Blocks: []report.Block{&report.Table{Columns: []report.Column{report.Col("Method"), report.Col("Bucket")},
		Rows: [][]report.Cell{
			{report.Code(a).WithParams(strings.Index(a, "(")), report.Text("wait")},
			{report.Code(b).WithParams(strings.Index(b, "(")), report.Text("wait")},
			{report.Code(c), report.Text("lock-contention")},
		}}}}
	got := write(t, r, Table, Options{Width: 31})
	if strings.Contains(got, "│ Wait(…) ") || !strings.Contains(got, "│ ManualResetEve") || !strings.Contains(got, "│ Monitor.Wait(") {
		t.Errorf("two methods Wait(…) read alike or are not whole:\n%s", got)
	}
	if !strings.Contains(got, "│ WaitAndAcquire ") {
		t.Errorf("a name no other reads like is not shortened:\n%s", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if width(l) > 31 {
			t.Errorf("%d wide: %s", width(l), l)
		}
	}
}

// Whatever the name and the width, elideName fits it and never panics.
func FuzzElideName(f *testing.F) {
	for _, s := range []string{"", "!", "a!", "::", "operator<", "f(", ")", "a/b/c", "x.y.z(a,b)", "<…>", "\x1b[2J", "a+b$c.d"} {
		f.Add(s, len(s)/2, 5)
	}
	f.Fuzz(func(t *testing.T, s string, params, w int) {
		if w < 0 || w > 1000 {
			return
		}
		if got := elideName(s, params, w); width(got) > max(w, 0) && width(s) > w {
			t.Errorf("elideName(%q, %d, %d) = %q, %d wide", s, params, w, got, width(got))
		}
	})
}
