package producertest

import "github.com/profdiff/profdiff/profile/internal/perfopts"

// PerfRecord is the arguments of `perf record` with args, as profdiff's
// captures run it (perfopts.Record: no BPF side-band, whose 1 s poll
// each recording would wait out; no copies into ~/.debug). Tests run perf
// (the binary at perf) with them.
func PerfRecord(perf string, args ...string) []string { return perfopts.Record(perf, args...) }
