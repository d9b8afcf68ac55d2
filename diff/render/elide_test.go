package render

import (
	"strings"
	"testing"
)

// Long names keep their package (or module) and method; each case is the
// shortest step that fits.
func TestElideName(t *testing.T) {
	cases := []struct {
		name string
		w    int
		want string
	}{
		// Fits: unchanged.
		{"main.main", 20, "main.main"},
		// Go: the import path's middle goes, the last element stays.
		{"github.com/profdiff/profdiff/workloads/jsonserver.(*waitRegistry).acquire", 50,
			"github.com/…/jsonserver.(*waitRegistry).acquire"},
		{"github.com/profdiff/profdiff/workloads/jsonserver.(*waitRegistry).acquire", 60,
			"github.com/profdiff/…/jsonserver.(*waitRegistry).acquire"},
		// Go generics: type arguments collapse first.
		{"github.com/acme/x/cache.(*LRU[go.shape.string,go.shape.int]).Get", 40, "github.com/acme/x/cache.(*LRU[…]).Get"},
		// .NET: parameters first, then the namespace's middle; the module stays.
		{"System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(int32,bool,bool)", 53,
			"System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(…)"},
		{"System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(int32,bool,bool)", 50,
			"System.….WaitSubsystem+ThreadWaitInfo.Wait(…)"},
		{"System.Private.CoreLib!System.Threading.WaitSubsystem+ThreadWaitInfo.Wait(int32,bool,bool)", 68,
			"System.Private.CoreLib!System.….WaitSubsystem+ThreadWaitInfo.Wait(…)"},
		// Java: the package's middle, the class and method stay.
		{"org.apache.kafka.common.network.Selector.poll", 36, "org.apache.kafka.….Selector.poll"},
		{"org.apache.kafka.common.network.Selector.poll", 24, "org.….Selector.poll"},
		// Narrower than the first segment allows: the type and method alone.
		{"github.com/profdiff/profdiff/workloads/jsonserver.(*waitRegistry).release", 31, "….(*waitRegistry).release"},
		{"System.Threading.LowLevelLock.WaitAndAcquire", 34, "….LowLevelLock.WaitAndAcquire"},
		{"org.apache.kafka.common.network.Selector.poll", 17, "….Selector.poll"},
		// C++: template arguments, parameters, then namespaces.
		{"std::vector<int, std::allocator<int> >::push_back(int const&)", 30, "std::vector<…>::push_back(…)"},
		{"boost::asio::detail::scheduler::do_run_one(boost::asio::detail::conditionally_enabled_mutex::scoped_lock&)", 40,
			"boost::asio::…::scheduler::do_run_one(…)"},
		// Nothing left to drop: the middle goes, more of the end stays.
		{"runtime.(*gcControllerState).findRunnableGCWorker", 20, "runtim…nableGCWorker"},
	}
	for _, c := range cases {
		params := 0 // the final parameter list, as package present marks it: no name here has parentheses within it
		if strings.HasSuffix(c.name, ")") {
			params = strings.LastIndex(c.name, "(")
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
