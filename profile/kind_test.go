package profile

import (
	"strings"
	"testing"
)

func TestDetectKind(t *testing.T) {
	leaves := func(values []int64, leaves ...string) []testStack {
		var out []testStack
		for _, l := range leaves {
			out = append(out, testStack{frames: []string{l, "main.worker", "runtime.goexit"}, values: values})
		}
		return out
	}
	contention := []string{"contentions/count", "delay/nanoseconds"}
	for _, tc := range []struct {
		name        string
		sampleTypes []string
		periodType  string
		stacks      []testStack
		want        Kind
	}{
		{"go cpu", []string{"samples/count", "cpu/nanoseconds"}, "cpu/nanoseconds", leaves([]int64{1, 10}, "main.f"), KindCPU},
		{"legacy cpu, samples only", []string{"samples/count"}, "cpu/nanoseconds", leaves([]int64{1}, "main.f"), KindCPU},
		{"cpu period only", []string{"samples/count", "time/nanoseconds"}, "cpu/nanoseconds", leaves([]int64{1, 10}, "main.f"), KindCPU},
		{"fgprof", []string{"samples/count", "time/nanoseconds"}, "wallclock/nanoseconds", leaves([]int64{1, 10}, "runtime.gopark"), KindWall},
		{"wall period", []string{"samples/count", "time/nanoseconds"}, "wall/nanoseconds", leaves([]int64{1, 10}, "main.f"), KindWall},
		{"wall sample type", []string{"samples/count", "wall/nanoseconds"}, "", leaves([]int64{1, 10}, "main.f"), KindWall},
		{"go mutex", contention, "contentions/count",
			leaves([]int64{1, 10}, "sync.(*Mutex).Unlock", "sync.(*RWMutex).RUnlock", "runtime.unlock", "sync.(*Mutex).unlockSlow"), KindMutex},
		{"go mutex, some Lock leaves", contention, "contentions/count",
			leaves([]int64{1, 10}, "sync.(*Mutex).Unlock", "sync.(*Mutex).Lock"), KindMutex},
		{"go block", contention, "contentions/count",
			leaves([]int64{1, 10}, "sync.(*Mutex).Lock", "runtime.chanrecv1", "runtime.selectgo", "sync.(*WaitGroup).Wait", "internal/poll.runtime_pollWait"), KindBlock},
		{"gperftools contention", []string{"contentions/count", "delay/microseconds"}, "contentions/count",
			leaves([]int64{1, 10}, "base::Mutex::Lock", "SpinLock::SlowLock"), KindMutex},
		{"delay only", []string{"delay/nanoseconds"}, "", leaves([]int64{10}, "runtime.chanrecv1"), KindBlock},
		{"goroutine", []string{"goroutine/count"}, "goroutine/count", leaves([]int64{3}, "runtime.gopark"), KindGoroutine},
		{"threadcreate", []string{"threadcreate/count"}, "threadcreate/count", leaves([]int64{3}, "runtime.newm"), KindGoroutine},
		{"legacy threads", []string{"thread/count"}, "thread/count", leaves([]int64{3}, "0x1234"), KindGoroutine},
		{"go heap", []string{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"}, "space/bytes",
			leaves([]int64{1, 2, 3, 4}, "runtime.mallocgc"), KindHeap},
		{"legacy heap", []string{"objects/count", "space/bytes"}, "", leaves([]int64{1, 2}, "malloc"), KindHeap},
		{"alloc space only", []string{"alloc_space/bytes"}, "", leaves([]int64{1}, "malloc"), KindHeap},
		{"folded", []string{"samples/count"}, "samples/count", leaves([]int64{1}, "main.f"), KindUnknown},
		{"other", []string{"widgets/count"}, "", leaves([]int64{1}, "main.f"), KindUnknown},
		{"no sample types", nil, "", nil, KindUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := buildTestProfile(tc.sampleTypes, tc.periodType, 1, tc.stacks)
			if got := DetectKind(p); got != tc.want {
				t.Errorf("DetectKind = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDetectKindThroughLoad checks the kind Load reports for each kind
// written as a file.
func TestDetectKindThroughLoad(t *testing.T) {
	p := buildTestProfile([]string{"contentions/count", "delay/nanoseconds"}, "contentions/count", 1,
		[]testStack{{frames: []string{"sync.(*Mutex).Unlock", "main.f"}, values: []int64{1, 100}}})
	if l := mustLoad(t, writeTemp(t, "mutex.pb.gz", encodeT(t, p, true)), Options{}); l.Kind != KindMutex {
		t.Errorf("mutex: Kind %q", l.Kind)
	}
	p = buildTestProfile([]string{"contentions/count", "delay/nanoseconds"}, "contentions/count", 1,
		[]testStack{{frames: []string{"runtime.chanrecv2", "main.f"}, values: []int64{1, 100}}})
	if l := mustLoad(t, writeTemp(t, "block.pb.gz", encodeT(t, p, true)), Options{}); l.Kind != KindBlock {
		t.Errorf("block: Kind %q", l.Kind)
	}
	if l := mustLoad(t, writeTemp(t, "fgprof.pb.gz", encodeT(t, noisyProfile(), true)), Options{}); l.Kind != KindWall {
		t.Errorf("fgprof: Kind %q", l.Kind)
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range Kinds {
		got, err := ParseKind(string(k))
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if len(Kinds) != 8 {
		t.Errorf("Kinds has %d entries", len(Kinds))
	}
	for _, s := range []string{"", "wallclock", "heap "} {
		_, err := ParseKind(s)
		if err == nil {
			t.Errorf("ParseKind(%q): no error", s)
			continue
		}
		for _, k := range Kinds {
			if !strings.Contains(err.Error(), string(k)) {
				t.Errorf("ParseKind(%q) error %q does not list %q", s, err, k)
			}
		}
	}
}

func TestParseKindAnyCase(t *testing.T) {
	for _, s := range []string{"mutex", "MUTEX", "Mutex"} {
		if k, err := ParseKind(s); err != nil || k != KindMutex {
			t.Errorf("ParseKind(%q) = %q, %v", s, k, err)
		}
	}
	if _, err := ParseKind("mutexes"); err == nil {
		t.Error("ParseKind(mutexes) accepted")
	}
}
