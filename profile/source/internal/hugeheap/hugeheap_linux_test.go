package hugeheap

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// Under an address-space limit Reserve maps nothing: the reservation
// could fail where the job would not, and a failed mapping ends a Go
// program.
func TestReserveSkipsUnderAnAddressLimit(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur != rlimInfinity {
		t.Skip("the address space is limited already")
	}
	// 64 TiB: far above what this process maps, but a limit.
	limited := syscall.Rlimit{Cur: 1 << 46, Max: lim.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &limited); err != nil {
		t.Skipf("cannot set RLIMIT_AS: %v", err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
			t.Fatalf("restoring RLIMIT_AS: %v", err)
		}
	}()
	if why := skip(); !strings.Contains(why, "RLIMIT_AS") && !strings.Contains(why, "THP") && !strings.Contains(why, EnvOff) {
		t.Errorf("with RLIMIT_AS set, skip() = %q, want the limit named", why)
	}
	if got := Reserve(64 << 20); got != 0 {
		t.Errorf("with RLIMIT_AS set, Reserve advised %d bytes, want 0", got)
	}
}

// After Reserve, the allocations that follow land in the advised range:
// the mappings that hold them carry the huge-page advice (smaps'
// VmFlags "hg"), so their pages fault in 2 MiB at a time where the
// kernel has them. The job's heap is made of many blocks, so this one
// is: 48 blocks of 1 MiB, most of which must be advised (the runtime
// places a few elsewhere now and then, for reasons of its own).
func TestReserveAdvisesTheNextAllocations(t *testing.T) {
	if why := skip(); why != "" {
		t.Skipf("Reserve does nothing here: %s", why)
	}
	const n = 64 << 20
	advised := Reserve(n)
	if advised < n-hugePage || advised > n {
		t.Fatalf("Reserve(%d) advised %d bytes, want %d less at most one huge page", n, advised, n)
	}
	blocks := make([][]byte, 48)
	for i := range blocks {
		blocks[i] = make([]byte, 1<<20)
		for j := 0; j < len(blocks[i]); j += 4096 {
			blocks[i][j] = 1
		}
	}
	maps, err := readMappings()
	if err != nil {
		t.Fatal(err)
	}
	in, huge := 0, 0
	for _, b := range blocks {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		m1, m2 := maps.at(lo), maps.at(lo+uintptr(len(b))-1)
		if m1 != nil && m1 == m2 && m1.advised() {
			in++
			huge = max(huge, m1.hugeKB)
		}
	}
	t.Logf("%d of %d blocks of 1 MiB in advised mappings (the largest holds %d kB of huge pages)", in, len(blocks), huge)
	if in < len(blocks)*3/4 {
		t.Errorf("only %d of %d blocks allocated after Reserve are in mappings with the huge-page advice", in, len(blocks))
	}
}

// mapping is one mapping of /proc/self/smaps.
type mapping struct {
	lo, hi uintptr
	flags  string // VmFlags
	hugeKB int    // AnonHugePages
}

func (m *mapping) advised() bool { return strings.Contains(" "+m.flags+" ", " hg ") }

type mappings []mapping

// at returns the mapping holding address a, nil when none does.
func (ms mappings) at(a uintptr) *mapping {
	for i := range ms {
		if a >= ms[i].lo && a < ms[i].hi {
			return &ms[i]
		}
	}
	return nil
}

// readMappings reads /proc/self/smaps: each mapping's range, VmFlags
// and AnonHugePages.
func readMappings() (mappings, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms mappings
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(fields[0], "-"); ok && !strings.HasSuffix(fields[0], ":") {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			z, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("smaps: a mapping's range %q", fields[0])
			}
			ms = append(ms, mapping{lo: uintptr(a), hi: uintptr(z)})
			continue
		}
		if len(ms) == 0 {
			continue
		}
		m := &ms[len(ms)-1]
		switch {
		case fields[0] == "AnonHugePages:" && len(fields) >= 2:
			m.hugeKB, _ = strconv.Atoi(fields[1])
		case fields[0] == "VmFlags:":
			m.flags = strings.Join(fields[1:], " ")
		}
	}
	return ms, sc.Err()
}
