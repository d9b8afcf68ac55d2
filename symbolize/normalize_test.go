package symbolize

import (
	"math/rand"
	"reflect"
	"regexp"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"
)

func TestNormalize(t *testing.T) {
	cases := []struct{ in, want string }{
		// Go names are left alone, receivers and import paths included.
		{"sync.(*Mutex).Lock", "sync.(*Mutex).Lock"},
		{"internal/sync.runtime_SemacquireMutex", "internal/sync.runtime_SemacquireMutex"},
		{"net/http.(*conn).serve", "net/http.(*conn).serve"},
		{"main.(*T).Run.func1", "main.(*T).Run.func1"},
		// TraceEvent module prefix and parameter lists.
		{"System.Private.CoreLib!System.Threading.Monitor.Wait(class System.Object,int32)", "System.Threading.Monitor.Wait"},
		{"System.Threading.LowLevelLock.WaitAndAcquire()", "System.Threading.LowLevelLock.WaitAndAcquire"},
		// TraceEvent thread labels are not parameter lists.
		{"Thread (1234)", "Thread (1234)"},
		// perf-map module prefix, glibc decorations.
		{"[libc.so.6] __lll_lock_wait", "__lll_lock_wait"},
		{"pthread_cond_wait@@GLIBC_2.3.2", "pthread_cond_wait"},
		{"__GI___pthread_mutex_lock", "__pthread_mutex_lock"},
		// A libc wait in every module-prefix form real tools write, and
		// perf's non-default symbol version (one @).
		{"libc.so.6.__GI___futex_abstimed_wait_cancelable64", "__futex_abstimed_wait_cancelable64"},
		{"libc.so.6!__GI___futex_abstimed_wait_cancelable64", "__futex_abstimed_wait_cancelable64"},
		{"[libc.so.6] __GI___futex_abstimed_wait_cancelable64", "__futex_abstimed_wait_cancelable64"},
		{"libc-2.19.so.__epoll_wait_nocancel", "__epoll_wait_nocancel"},
		{"ld-linux-x86-64.so.2._dl_start", "_dl_start"},
		{"clock_nanosleep@GLIBC_2.2.5", "clock_nanosleep"},
		// DTrace's module`function and a trailing object path.
		{"libc.so.6`read", "read"},
		{"__futex_abstimed_wait_cancelable64 (/usr/lib/x86_64-linux-gnu/libc.so.6)", "__futex_abstimed_wait_cancelable64"},
		{"Thread (1234)", "Thread (1234)"},
		// Not a shared object: a JVM class with "so" in its package path
		// is not split, nor is a Go name.
		{"com.example.so.Handler.run", "com.example.so.Handler.run"},
		{"main.so", "main.so"},
		// Rust hash suffix, C++ parameters.
		{"std::sys::sync::mutex::futex::Mutex::lock_contended::h0123456789abcdef", "std::sys::sync::mutex::futex::Mutex::lock_contended"},
		{"ObjectMonitor::enter(JavaThread*)", "ObjectMonitor::enter"},
		// async-profiler: slashes and frame-type annotations.
		{"java/util/concurrent/locks/ReentrantLock.lock_[j]", "java.util.concurrent.locks.ReentrantLock.lock"},
		{"java/lang/Object.wait0_[i]", "java.lang.Object.wait0"},
		// Build variants: compiler clones on C and C++ names only.
		{"foo.isra.0", "foo"},
		{"foo.part.45", "foo"},
		{"hot_loop.constprop.2.isra.0", "hot_loop"},
		{"main_loop.cold", "main_loop"},
		{"ns::Widget::frob.cold", "ns::Widget::frob"},
		{"main.cold", "main"}, // C's main; a Go main.cold would be keyed "main" too (the suffix alone cannot tell)
		{"github.com/x/y.cold", "github.com/x/y.cold"},
		// JVM hidden classes and generated accessors.
		{"Workload$$Lambda$92+0x00007f59f0009800/26728049.run", "Workload$$Lambda.run"},
		{"Workload$$Lambda/0x000001f8010c6a18.run", "Workload$$Lambda.run"},
		{"jdk.internal.reflect.GeneratedMethodAccessor123.invoke", "jdk.internal.reflect.GeneratedMethodAccessor.invoke"},
		{"com.acme.Service$$EnhancerBySpringCGLIB$$1a2b3c4d.handle", "com.acme.Service$$EnhancerBySpringCGLIB.handle"},
		// .NET tiers from perf maps; V8 markers.
		{"jit_spin_A[OptimizedTier1]", "jit_spin_A"},
		{"System.Threading.Monitor.Enter[QuickJitted]", "System.Threading.Monitor.Enter"},
		{"JS:~hotLoop [eval]:1:17", "JS:hotLoop [eval]:1:17"},
		{"JS:*hotLoop [eval]:1:17", "JS:hotLoop [eval]:1:17"},
		// Go generic shapes are different code: kept.
		{"main.Sum[go.shape.int]", "main.Sum[go.shape.int]"},
		{"main.(*List[go.shape.string]).Push", "main.(*List[go.shape.string]).Push"},
		// Go closures keep their numbers.
		{"main.main.func2", "main.main.func2"},
		{"main.run.gowrap1", "main.run.gowrap1"},
		// Rust disambiguators (c++filt's v0 form).
		{"<r[20c418149eb3754d]::outer::Thing<u64>>::double", "<r::outer::Thing<u64>>::double"},
	}
	for _, c := range cases {
		got := Normalize(c.in)
		if got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := Normalize(got); again != got {
			t.Errorf("Normalize is not idempotent on %q: %q", got, again)
		}
	}
}

func TestSplitModule(t *testing.T) {
	cases := []struct{ in, mod, rest string }{
		{"libSystem.Native!SystemNative_WaitForSocketEvents", "libSystem.Native", "SystemNative_WaitForSocketEvents"},
		{"[kernel.kallsyms] do_syscall_64", "kernel.kallsyms", "do_syscall_64"},
		{"libc.so.6.__GI___poll", "libc.so.6", "__GI___poll"},
		{"runtime.gopark", "", "runtime.gopark"},
		{"libc.so.6`read", "libc.so.6", "read"},
		{"server`main", "server", "main"},
		{"System.Threading.Tasks.Task`1.Process", "", "System.Threading.Tasks.Task`1.Process"},
		{"List`1`get_Item", "", "List`1`get_Item"},
		{"poll (/usr/lib/x86_64-linux-gnu/libc.so.6)", "libc.so.6", "poll"},
		// A Rust never type is not a module prefix.
		{"<impl core::ops::Fn() -> !>::call", "", "<impl core::ops::Fn() -> !>::call"},
	}
	for _, c := range cases {
		mod, rest := SplitModule(c.in)
		if mod != c.mod || rest != c.rest {
			t.Errorf("SplitModule(%q) = %q, %q; want %q, %q", c.in, mod, rest, c.mod, c.rest)
		}
	}
}

func TestMatchKey(t *testing.T) {
	same := [][2]string{
		{"SystemNative_WaitForSocketEvents", "Interop+Sys.WaitForSocketEvents(int,struct SocketEvent*,int32*)"},
		{"libSystem.Native!SystemNative_WaitForSocketEvents", "System.Net.Sockets!Interop+Sys.WaitForSocketEvents"},
		{"Foo::Bar::baz", "Other.Namespace.baz"},
	}
	for _, p := range same {
		if MatchKey(p[0]) != MatchKey(p[1]) {
			t.Errorf("MatchKey(%q) = %q, MatchKey(%q) = %q; want equal", p[0], MatchKey(p[0]), p[1], MatchKey(p[1]))
		}
	}
	if MatchKey("WaitSubsystem+ThreadWaitInfo.Wait") == MatchKey("LowLevelLock.WaitAndAcquire") {
		t.Error("different methods share a MatchKey")
	}
}

func TestModuleLabel(t *testing.T) {
	cases := map[string]string{
		"libSystem.Native":       "native",
		"/usr/lib/libc.so.6":     "native",
		"[kernel.kallsyms]":      "native",
		"System.Net.Sockets":     "System.Net.Sockets",
		"/opt/app/bin/server":    "server",
		"":                       "unknown module",
		"libcoreclr.dylib":       "native",
		"System.Private.CoreLib": "System.Private.CoreLib",
	}
	for in, want := range cases {
		if got := ModuleLabel(in); got != want {
			t.Errorf("ModuleLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLocationFrames(t *testing.T) {
	m := &pprofile.Mapping{ID: 1, Start: 0x400000, Limit: 0x500000, Offset: 0, File: "/usr/bin/app"}
	inlined := &pprofile.Location{ID: 1, Mapping: m, Address: 0x401000, Line: []pprofile.Line{
		{Function: &pprofile.Function{ID: 1, Name: "inner", Filename: "inner.c"}},
		{Function: &pprofile.Function{ID: 2, Name: "outer"}},
	}}
	got := LocationFrames(nil, inlined)
	if len(got) != 2 || got[0].Name != "inner" || got[1].Name != "outer" || got[0].Module != "app" ||
		got[0].File != "inner.c" || got[1].File != "" {
		t.Errorf("inlined location frames = %+v, want inner (inner.c), outer in module app", got)
	}
	// Unsymbolized locations are named by address, mapping-relative when
	// the mapping is known.
	bare := &pprofile.Location{ID: 2, Mapping: m, Address: 0x401a2b}
	if got := LocationFrames(nil, bare); len(got) != 1 || got[0].Name != "app+0x1a2b" {
		t.Errorf("unsymbolized frame = %+v, want app+0x1a2b", got)
	}
	noMap := &pprofile.Location{ID: 3, Address: 0xdeadbeef}
	if got := LocationFrames(nil, noMap); len(got) != 1 || got[0].Name != "0xdeadbeef" {
		t.Errorf("unmapped frame = %+v, want 0xdeadbeef", got)
	}
	// A TraceEvent module prefix in a function name wins over the mapping.
	pref := &pprofile.Location{ID: 4, Mapping: m, Line: []pprofile.Line{{Function: &pprofile.Function{ID: 3, Name: "libSystem.Native!SystemNative_Read"}}}}
	if got := LocationFrames(nil, pref); got[0].Module != "libSystem.Native" || got[0].Name != "SystemNative_Read" {
		t.Errorf("prefixed frame = %+v", got)
	}
}

func TestFinalGroup(t *testing.T) {
	for s, want := range map[string]int{
		"f(a, (b))":             1,
		"sym (libc.so.6)":       4,
		"sync.(*Mutex).Lock":    -1,
		"f(a":                   -1,
		"a)":                    -1,
		"(all)":                 0,
		"Foo(System.Int32 (x))": 3,
		"":                      -1,
		"Thread (1234)":         7,
		"x)(y)":                 2,
	} {
		if got := FinalGroup(s); got != want {
			t.Errorf("FinalGroup(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestClosureFamily(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"main.main.func2", "main.main.func#", true},
		{"main.(*T).Run.func1.3", "main.(*T).Run.func#", true},
		{"main.run.gowrap1", "main.run.gowrap#", true},
		{"main.run.deferwrap2", "main.run.deferwrap#", true},
		{"main.walk-range1", "main.walk-range#", true},
		{"main.funcs", "", false},
		{"main.wrapper", "", false},
		{"funcName", "", false},
		{"main.func1x", "", false},
		{"main.main.func1.gowrap2", "main.main.func#.gowrap#", true},
	}
	for _, c := range cases {
		got, ok := ClosureFamily(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ClosureFamily(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// The literal pre-checks in SplitModule and Normalize skip a regexp only
// where it cannot match: names that hold the literal in odd places still
// normalize as the patterns say.
func TestNormalizeLiteralChecks(t *testing.T) {
	for in, want := range map[string]string{
		"@x@GLIBC_2.2.5":                      "@x",
		"memcpy@GLIBC_2.14":                   "memcpy",
		"!odd!name":                           "!odd!name",
		"libc.so.6!memcpy":                    "memcpy",
		"[libc.so.6] __lll_lock_wait":         "__lll_lock_wait",
		"libc.so.6.__GI___poll":               "__poll",
		"libc.so.6`malloc":                    "malloc",
		"malloc (/usr/lib/libc.so.6)":         "malloc",
		"foo.isra.0":                          "foo",
		"foo.cold":                            "foo",
		"core::fmt::write::h0123456789abcdef": "core::fmt::write",
		"Foo_[j]":                             "Foo",
		"plain.Go.function":                   "plain.Go.function",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// joinedPieces is a name of 1 to most pieces drawn at random.
func joinedPieces(r *rand.Rand, pieces []string, most int) string {
	var b strings.Builder
	for range 1 + r.Intn(most) {
		b.WriteString(pieces[r.Intn(len(pieces))])
	}
	return b.String()
}

// nextClosure finds what the expression it replaces finds, match by
// match, on names made of the pieces closures' numberings are made of
// and of others that almost are: 40,000 names, 200,000 with longTests.
func TestNextClosureIsTheExpression(t *testing.T) {
	n := 40_000
	if longTests() {
		n = 200_000
	}
	re := regexp.MustCompile(`\.(?:func|gowrap|deferwrap)[0-9]+(?:\.[0-9]+)*|-range[0-9]+`)
	pieces := []string{".func", ".gowrap", ".deferwrap", "-range", "func", "range", "wrap", ".", "-", "1", "23", "x", "main", ".fun", "(*T)"}
	r := rand.New(rand.NewSource(1))
	for range n {
		name := joinedPieces(r, pieces, 8)
		var got [][]int
		for m := nextClosure(name, 0); m[0] >= 0; m = nextClosure(name, m[1]) {
			got = append(got, []int{m[0], m[1]})
		}
		if want := re.FindAllStringIndex(name, -1); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: nextClosure finds %v, the expression %v", name, got, want)
		}
	}
}

// cloneLiteral's one pass over the dots finds what a search for each
// literal finds.
func TestCloneLiteralIsTheSearches(t *testing.T) {
	// The literals as the seven searches had them, not cloneLiterals:
	// one dropped from there fails the test.
	literals := []string{".isra.", ".part.", ".constprop.", ".lto_priv.", ".llvm.", ".localalias.", ".cold"}
	pieces := append([]string{".", "isra", "part", "constprop", "lto_priv", "llvm", "localalias", "cold", "x", "1", "main"}, literals...)
	r := rand.New(rand.NewSource(1))
	for range 100_000 {
		name := joinedPieces(r, pieces, 6)
		want := false
		for _, lit := range literals {
			want = want || strings.Contains(name, lit)
		}
		if got := cloneLiteral(name); got != want {
			t.Fatalf("cloneLiteral(%q) = %v, want %v", name, got, want)
		}
	}
}
