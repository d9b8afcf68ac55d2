package diff

import (
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/profile/producertest"
)

// A Python program whose main thread waits for a threading.Lock another
// thread holds, then sleeps, recorded twice with python3 -m cProfile, the
// hold and the sleep doubled: the python rules put the acquire in
// lock-contention and time.sleep in wait, each 50 ms more, and the
// acquire under Thread.start's Event.wait in wait (the strong caller
// decides over the weak acquire). cProfile is deterministic wall time of
// the main thread, with no thread states: the frames alone tell.
func TestCProfileLockAndSleep(t *testing.T) {
	dir := t.TempDir()
	record := func(name, hold string) string {
		out := filepath.Join(dir, name)
		producertest.CProfile(t, out, "locks.py", hold)
		return out
	}
	r := diffOf(t, Options{Top: -1, By: result.ByFrame}, loadFile(t, record("base.prof", "0.05")), loadFile(t, record("new.prof", "0.1")))
	for _, b := range []rules.Bucket{rules.Wait, rules.LockContention} {
		row := r.Buckets[b]
		// The lock's side also holds the wait for the holder thread to
		// start (the hand-over), which varies with the machine's load:
		// what the doubled hold adds is 50 ms.
		if row.BaseValue < 45e6 || row.NewValue-row.BaseValue < 40e6 {
			t.Errorf("%s: %.1f ms → %.1f ms, want at least the 50 ms hold, and 50 ms more", b, row.BaseValue/1e6, row.NewValue/1e6)
		}
	}
	if cpu := r.Buckets[rules.CPU]; cpu.New > 0.05 {
		t.Errorf("cpu share %.3f, want the waits nearly all", cpu.New)
	}
	if m := findMethod(r, "threading.wait"); m == nil || m.Bucket != rules.Wait {
		t.Errorf("threading.wait (Event.wait): row %+v, want wait", m)
	}
	if m := findMethod(r, "<method 'acquire' of '_thread.lock' objects>"); m == nil || m.Buckets[rules.Wait].BaseValue <= 0 {
		t.Errorf("acquire row %+v: want its part under threading.wait in wait", m)
	}
	for name, want := range map[string]rules.Bucket{
		"<method 'acquire' of '_thread.lock' objects>": rules.LockContention,
		"<built-in method time.sleep>":                 rules.Wait,
	} {
		if m := findMethod(r, name); m == nil || m.Bucket != want {
			t.Errorf("%s: row %+v, want bucket %s", name, m, want)
		}
	}
}

// A Python program whose main thread waits in select.select and in a
// selectors selector for data another thread sends 50 ms later each time,
// recorded with python3 -m cProfile: the waits are io, as the native
// rules class readiness waits, and so is the socket recv.
func TestCProfileSelectIsIO(t *testing.T) {
	out := filepath.Join(t.TempDir(), "io.prof")
	producertest.CProfile(t, out, "io.py", "0.05")
	r := diffOf(t, Options{Top: -1, By: result.ByFrame}, loadFile(t, out), loadFile(t, out))
	if io := r.Buckets[rules.IO]; io.BaseValue < 2*45e6 {
		t.Errorf("io %.1f ms, want the two 50 ms waits", io.BaseValue/1e6)
	}
	for _, name := range []string{"<built-in method select.select>", "selectors.select", "<method 'recv' of '_socket.socket' objects>"} {
		if m := findMethod(r, name); m == nil || m.Bucket != rules.IO {
			t.Errorf("%s: row %+v, want io", name, m)
		}
	}
}
