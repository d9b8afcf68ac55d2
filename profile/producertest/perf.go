package producertest

import (
	"os/exec"
	"strings"
	"sync"
)

// PerfRecord is the arguments of `perf record` with args: "record", then
// the options of quickPerfOptions this perf knows, then args. Tests run
// perf (the binary at perf) with them.
func PerfRecord(perf string, args ...string) []string {
	return append(append([]string{"record"}, quickPerfOptions(perf)...), args...)
}

// quickPerf holds, by perf binary, the options of quickPerfOptions it lists.
var quickPerf = struct {
	sync.Mutex
	opts map[string][]string
}{opts: map[string][]string{}}

// quickPerfOptions are the options of --no-bpf-event and -N that `perf
// record -h` lists (asked once per perf binary): --no-bpf-event, because
// perf's BPF side-band costs a second of waiting per recording (perf 6.1
// polls it with a 1 s timeout before it exits; the recorded programs load
// no BPF), and -N, so that no binary is copied into ~/.debug.
func quickPerfOptions(perf string) []string {
	quickPerf.Lock()
	defer quickPerf.Unlock()
	opts, ok := quickPerf.opts[perf]
	if !ok {
		help, _ := exec.Command(perf, "record", "-h").CombinedOutput() // exits 129 after the usage
		for _, o := range []struct{ opt, listed string }{{"--no-bpf-event", "--no-bpf-event"}, {"-N", "-N, --no-buildid-cache"}} {
			if strings.Contains(string(help), o.listed) {
				opts = append(opts, o.opt)
			}
		}
		quickPerf.opts[perf] = opts
	}
	return opts
}
