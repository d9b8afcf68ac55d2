package pstats

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/producertest"
)

// python returns the python3 binary, or skips.
func python(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	return py
}

// run runs python3 with args and returns its standard output.
func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(python(t), args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("python3 %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatal(err)
	}
	return string(out)
}

// record runs testdata/locks.py under cProfile with the given hold (in
// seconds) and returns the pstats file.
func record(t *testing.T, hold string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.prof")
	producertest.CProfile(t, out, "locks.py", hold)
	return out
}

// stacks sums a profile's wall time per stack, root first.
func stacks(p *pprofile.Profile) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			names = append(names, s.Location[i].Line[0].Function.Name)
		}
		out[strings.Join(names, ";")] += s.Value[0]
	}
	return out
}

const (
	acquire = "<method 'acquire' of '_thread.lock' objects>"
	sleep   = "<built-in method time.sleep>"
)

// TestCProfile reads a real cProfile recording: the main thread's wait
// for the lock is under locks.main, its sleep too, each about the hold;
// the stacks are caller;callee pairs, said in a warning; and the total is
// pstats' own total_tt.
func TestCProfile(t *testing.T) {
	file := record(t, "0.05")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !Looks(data) {
		t.Fatal("Looks is false")
	}
	p, warns, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || warns[0] != PairsWarning {
		t.Errorf("warnings %q, want the pairs warning once", warns)
	}
	st := stacks(p)
	var total int64
	for k, v := range st {
		total += v
		if strings.Count(k, ";") > 1 {
			t.Errorf("stack %q is deeper than caller;callee", k)
		}
	}
	for _, k := range []string{"locks.main;" + acquire, "locks.main;" + sleep} {
		if v := st[k]; v < 45e6 || v > 500e6 {
			t.Errorf("%s: %d ns, want about the 50 ms hold", k, v)
		}
	}
	want, err := strconv.ParseFloat(strings.TrimSpace(run(t, "-c", "import pstats, sys; print(repr(pstats.Stats(sys.argv[1]).total_tt))", file)), 64)
	if err != nil {
		t.Fatal(err)
	}
	if d := float64(total) - want*1e9; d > 1e3 || d < -1e3 {
		t.Errorf("total %d ns, pstats' total_tt %.9f s", total, want)
	}
}

// TestMarshal decodes what Python's marshal writes for every type a
// pstats file holds: small and long ints, floats, the string encodings,
// nested tuples and dicts, and references to repeated objects.
func TestMarshal(t *testing.T) {
	const script = `import marshal, sys
k = ("/x/é.py", 7, "f")
v = {k: (1, 2**40, -2**40, 0.25, "a" * 300, "é", sys.intern("interned"), (k, k), {k: ()})}
sys.stdout.buffer.write(marshal.dumps(v))`
	d := &decoder{data: []byte(run(t, "-c", script))}
	v, err := d.value(0)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := v.(*dict)
	if !ok || len(m.keys) != 1 {
		t.Fatalf("decoded %#v", v)
	}
	k, ok := funcKeyOf(m.keys[0])
	if !ok || k != (funcKey{"/x/é.py", 7, "f"}) {
		t.Errorf("key %#v", m.keys[0])
	}
	tu, _ := m.vals[0].([]any)
	if len(tu) != 9 {
		t.Fatalf("value %#v", m.vals[0])
	}
	for i, want := range []any{int64(1), int64(1 << 40), int64(-1 << 40), 0.25, strings.Repeat("a", 300), "é", "interned"} {
		if tu[i] != want {
			t.Errorf("element %d = %#v, want %#v", i, tu[i], want)
		}
	}
	pair, _ := tu[7].([]any)
	if len(pair) != 2 {
		t.Fatalf("element 7 %#v", tu[7])
	}
	for _, x := range pair {
		if kk, ok := funcKeyOf(x); !ok || kk != k {
			t.Errorf("referenced key %#v", x)
		}
	}
	if inner, ok := tu[8].(*dict); !ok || len(inner.keys) != 1 {
		t.Errorf("element 8 %#v", tu[8])
	}
	if d.off != len(d.data) {
		t.Errorf("read %d of %d bytes", d.off, len(d.data))
	}
}

// TestMalformed checks that broken files give an ErrFormat error saying
// where and what, never a panic.
func TestMalformed(t *testing.T) {
	key := "\xa9\x03\xfa\x04a.py\xe9\x01\x00\x00\x00\xda\x01f" // ("a.py", 1, "f") as Python 3.11 writes it
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "at byte 0: the file ends at byte 0, inside a 1-byte value that starts here (a file cut short?)"},
		{"not a dict", "\xe9\x01\x00\x00\x00", "holds a int, not a dict"},
		{"truncated", "{" + key[:6], "at byte 5: the file ends at byte 7, inside a 4-byte value that starts here"},
		{"unknown type", "{N0", "marshal type 'N'"},
		{"bad ref", "{r\x05\x00\x00\x000", "reference 5 to no object"},
		{"deep", strings.Repeat(")\x01", 20) + "0", "nested deeper"},
		{"trailing", "{0x", "1 bytes after the stats dict"},
		{"bad key", "{\xe9\x01\x00\x00\x00)\x000", "stats key 0 is a int"},
		{"bad value", "{" + key + ")\x000", "is not a (calls, calls, seconds, seconds, callers) tuple"},
		{"huge length", "{(\xff\xff\xff\x7f", "length 2147483647 out of range"},
		{"long beyond 64 bits", "{l\x05\x00\x00\x00", "beyond 64 bits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tc.in))
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrFormat saying %q", err, tc.want)
			}
		})
	}
}

// TestName checks how functions are named from cProfile's (file, name).
func TestName(t *testing.T) {
	for _, tc := range []struct{ file, name, want string }{
		{"~", sleep, sleep},
		{"/usr/lib/python3.11/threading.py", "wait", "threading.wait"},
		{"/root/.pyenv/versions/3.11.7/lib/python3.11/concurrent/futures/thread.py", "_worker", "concurrent.futures.thread._worker"},
		{"/usr/lib/python3/dist-packages/requests/__init__.py", "get", "requests.get"},
		{"/srv/venv/lib/python3.12/site-packages/numpy/core/fromnumeric.py", "sum", "numpy.core.fromnumeric.sum"},
		{"/srv/app/server.py", "handle", "server.handle"},
		{"/srv/app/pkg/__init__.py", "run", "pkg.run"},
		{"<frozen importlib._bootstrap>", "_find_and_load", "_find_and_load"},
		{"<string>", "<module>", "<module>"},
		{`C:\Python311\Lib\threading.py`, "wait", "threading.wait"},
	} {
		if got := Name(tc.file, tc.name); got != tc.want {
			t.Errorf("Name(%q, %q) = %q, want %q", tc.file, tc.name, got, tc.want)
		}
	}
}

// TestPureProfileRefused records with the pure-Python profile module,
// which writes a code object into a key: the error says so and what to
// record with instead.
func TestPureProfileRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.prof")
	run(t, "-m", "profile", "-o", out, filepath.Join("testdata", "locks.py"), "0.01")
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Parse(data)
	if !errors.Is(err, ErrFormat) || !errors.Is(err, ErrProfileModule) || !strings.Contains(err.Error(), "python3 -m cProfile") {
		t.Errorf("error %v, want ErrFormat and ErrProfileModule naming cProfile", err)
	}
}
