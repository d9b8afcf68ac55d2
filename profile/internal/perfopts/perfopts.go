// Package perfopts says which options that make `perf record` quicker a
// perf binary knows: profdiff's captures (profile/capture) and the tests'
// recordings (profile/producertest) add them.
package perfopts

import (
	"bytes"
	"os/exec"
	"sync"
)

// Record returns the arguments of `perf record` with args: "record", the
// options of --no-bpf-event and -N that the perf binary at perf lists in
// `perf record -h` (asked once per binary), then args:
// --no-bpf-event, because perf's BPF side-band makes each recording wait
// out a 1 s poll before it exits (perf 6.1: a recording of true takes
// 1.2 s with it, 0.35 s without), and the BPF programs of a recorded
// process are not what profdiff reads; -N, so that no copy of the
// recorded binaries goes into ~/.debug (perf script runs right after the
// recording, on the binaries themselves).
func Record(perf string, args ...string) []string {
	v, _ := known.LoadOrStore(perf, &quick{})
	q := v.(*quick)
	q.once.Do(func() {
		help, _ := exec.Command(perf, "record", "-h").CombinedOutput() // exits 129 after the usage
		for _, o := range []struct{ opt, listed string }{{"--no-bpf-event", "--no-bpf-event"}, {"-N", "-N, --no-buildid-cache"}} {
			if bytes.Contains(help, []byte(o.listed)) {
				q.opts = append(q.opts, o.opt)
			}
		}
	})
	return append(append([]string{"record"}, q.opts...), args...)
}

var known sync.Map // perf binary → *quick

type quick struct {
	once sync.Once
	opts []string
}
