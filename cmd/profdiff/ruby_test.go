package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// rubyProgram starts a thread that holds
// a Mutex for ARGV[0] seconds, waits for the Mutex (the main thread
// blocks in Thread::Mutex#synchronize), runs a busy loop inside the
// Mutex (cpu under a non-leaf synchronize), then sleeps 100 ms, all under
// StackProf in wall mode with raw stacks, and writes the JSON to ARGV[1].
const rubyProgram = `require 'stackprof'
require 'json'
hold = Float(ARGV[0])
def busy(n)
  x = 0
  n.times { x += 1 }
  x
end
m = Mutex.new
prof = StackProf.run(mode: :wall, raw: true, interval: 1000) do
  ready = Thread::Queue.new
  holder = Thread.new { m.synchronize { ready << 1; sleep hold } }
  ready.pop
  m.synchronize { busy(300_000) }
  holder.join
  sleep 0.1
end
File.write(ARGV[1], JSON.generate(prof))
`

// recordRubyPair records rubyProgram twice with Debian's ruby-stackprof,
// the Mutex held 100 ms and then 200 ms, both at once (so that load on
// the machine slows both alike), and returns the two JSON files. It
// skips the test where ruby or stackprof is missing.
func recordRubyPair(t *testing.T, dir string) (base, next string) {
	t.Helper()
	ruby, err := exec.LookPath("ruby")
	if err != nil {
		t.Skip("ruby not installed")
	}
	if err := exec.Command(ruby, "-rstackprof", "-e", "").Run(); err != nil {
		t.Skip("ruby has no stackprof (apt-get install ruby-stackprof)")
	}
	rb := filepath.Join(dir, "prog.rb")
	if err := os.WriteFile(rb, []byte(rubyProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	base, next = filepath.Join(dir, "base.json"), filepath.Join(dir, "new.json")
	runAtOnce(t, exec.Command(ruby, rb, "0.1", base), exec.Command(ruby, rb, "0.2", next))
	return base, next
}

// TestDiffRubyStackprof diffs two stackprof recordings of rubyProgram,
// the second holding the Mutex twice as long: the main thread's wait for
// the Mutex is lock-contention and grows by about the 100 ms added,
// Kernel#sleep is wait (about 100 ms on each side), and the busy loop run
// inside synchronize is cpu (the Ruby rules' leaf modifier). stackprof
// samples the main thread only: the holder's sleep inside the Mutex is
// not in the profile. The amounts are wall time, which a loaded machine
// stretches (measured: a side's wait 200 ms on 2 busy cores), so the pair
// is recorded again, three times at most, until one shows them all.
func TestDiffRubyStackprof(t *testing.T) {
	recordAgain(t, diffRubyPair)
}

// diffRubyPair records and diffs a pair (TestDiffRubyStackprof), fails
// the test on a wrong bucket and returns the amounts it missed.
func diffRubyPair(t *testing.T) (misses []string) {
	base, next := recordRubyPair(t, t.TempDir())
	out := diffFrames(t, base, next)
	checkMethodBuckets(t, out, map[string]string{"Thread::Mutex#synchronize": "lock-contention", "Kernel#sleep": "wait", "Object#busy": "cpu"})
	rows := readDiffRows(t, out)
	ms := func(v float64) string { return fmt.Sprintf("%.0f ms", v/1e6) }
	lock, wait := rows.Buckets["lock-contention"], rows.Buckets["wait"]
	// A loaded machine stretches a sleep or a hold, never shortens it;
	// but the main thread's wait for the Mutex starts when it wakes from
	// the queue, late by as much as the machine delays it (78 ms of the
	// 100 ms hold were seen, three recordings running), so the wait and
	// its growth are asked for half the hold and half the 100 ms added.
	if lock[0] < 50e6 || lock[1]-lock[0] < 50e6 {
		misses = append(misses, fmt.Sprintf("lock-contention %s → %s, want at least 50 ms growing by at least 50 ms (about 100 ms and 100 ms)", ms(lock[0]), ms(lock[1])))
	}
	if wait[0] < 80e6 || wait[1] < 80e6 || math.Abs(wait[1]-wait[0]) > 50e6 {
		misses = append(misses, fmt.Sprintf("wait %s → %s, want about 100 ms on each side", ms(wait[0]), ms(wait[1])))
	}
	return misses
}

// stackprof's GC pseudo-frames are gc, in both of the shapes stackprof
// has written: the lone "(garbage collection)" of stackprof before
// 0.2.16 and "(garbage collection)" over "(marking)" or "(sweeping)"
// since (the corpus's speedscope examples of each).
func TestStackprofGCFrames(t *testing.T) {
	for _, c := range []struct {
		file string
		want map[string]string
	}{
		{"speedscope/sample__profiles__stackprof__simple-stackprof.json", map[string]string{"(garbage collection)": "gc"}},
		{"speedscope/sample__profiles__stackprof__simple-cpu-stackprof.json", map[string]string{"(marking)": "gc", "(sweeping)": "gc"}},
	} {
		out, stderr, code := profdiff(t, "", "top", "--format", "json", "--top", "0", "--by", "frame", corpusFile(t, c.file))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		checkMethodBuckets(t, out, c.want)
	}
}
