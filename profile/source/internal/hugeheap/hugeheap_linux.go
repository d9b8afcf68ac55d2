package hugeheap

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// enabledFile is where Linux says which THP mode is in force.
const enabledFile = "/sys/kernel/mm/transparent_hugepage/enabled"

// overcommitFile says how Linux accounts for address space: "2" is
// strict, where a reservation is charged as if it were used.
const overcommitFile = "/proc/sys/vm/overcommit_memory"

// Reserve advises huge pages over about n bytes of heap (at most
// MaxSize), for the allocations that follow, when THP is in "madvise"
// mode; see the package documentation. It returns the bytes advised: 0
// when it did nothing (n under MinSize, another THP mode, the
// environment turned it off, or the kernel refused the advice, which
// changes nothing but speed).
//
// The reservation is address space the job would not otherwise map at
// once. Where that is limited (an address-space rlimit, strict
// overcommit), mapping it could fail where the job itself would not,
// and the runtime does not survive a failed mapping: Reserve does
// nothing there.
func Reserve(n int64) int64 {
	if n < MinSize || skip() != "" {
		return 0
	}
	return reserve(min(n, MaxSize))
}

// skip says why Reserve does nothing on this system or in this
// environment, "" when it acts.
func skip() string {
	if off() {
		return EnvOff + " turns it off"
	}
	b, err := os.ReadFile(enabledFile)
	if err != nil {
		return "no THP setting to read: " + err.Error()
	}
	if m := mode(string(b)); m != "madvise" {
		return "the THP mode is " + strconv.Quote(m) + ", not \"madvise\""
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil || lim.Cur != rlimInfinity {
		return "the address space is limited (RLIMIT_AS)"
	}
	if oc, err := os.ReadFile(overcommitFile); err != nil || strings.TrimSpace(string(oc)) == "2" {
		return "overcommit is strict, or unknown"
	}
	return ""
}

// rlimInfinity is RLIM_INFINITY as Getrlimit reports it on Linux.
const rlimInfinity = ^uint64(0)

// reserve allocates n bytes, advises huge pages over the 2 MiB-aligned
// range inside them, and frees them with a collection.
func reserve(n int64) int64 {
	// No collection starts for the block's sake (it would find the heap
	// past its goal): the one below frees it.
	gcPercent := debug.SetGCPercent(-1)
	block := make([]byte, n) // fresh from the system: the runtime does not write it
	p := uintptr(unsafe.Pointer(unsafe.SliceData(block)))
	start := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + uintptr(n)) &^ (hugePage - 1)
	advised := int64(0)
	if end > start {
		// The advice is to the kernel about the range's pages; Go's
		// heap keeps the same bytes, whatever is decided.
		if syscall.Madvise(block[start-p:end-p], syscall.MADV_HUGEPAGE) == nil {
			advised = int64(end - start)
		}
	}
	block = nil
	debug.SetGCPercent(gcPercent)
	runtime.GC() // the block is free now, for what the job allocates next
	return advised
}
