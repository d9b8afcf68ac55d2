// Package hugeheap asks Linux to back the heap that a large job is about
// to build with transparent huge pages (THP), where the system leaves
// them to the program's request (THP mode "madvise", the default of
// Ubuntu and of many cloud images).
//
// Why: a profdiff run on large profiles builds a heap of a hundred
// megabytes or more in a fraction of a second, and with 4 KiB pages every
// page of it is a fault into the kernel (26,500 of them on the
// 200,000-stack pair: about an eighth of the run's CPU, 0.06-0.08 s of
// system time on a 2-core VM). Go's runtime does not ask for huge pages
// for its heap (it did in Go 1.21.0 and stopped, for long-running
// servers' sake), and it maps the heap as it grows, so advice given to a
// range that is not mapped yet is lost. Reserve therefore has the
// runtime map the range first, by allocating one large block that it
// never touches, advises huge pages over it, and frees it: the job's
// allocations that follow reuse that range (the runtime hands out free
// pages lowest address first) and fault in 2 MiB at a time.
//
// Advice changes no byte a program reads: if the kernel has no huge page
// to give, it gives small ones, and where THP is "always" or "never"
// (or on another system) Reserve does nothing. The environment variable
// PROFDIFF_HUGEPAGES=off turns it off.
package hugeheap

import (
	"os"
	"strings"
)

// MinSize is the smallest reservation Reserve makes: a job that builds a
// smaller heap faults too few pages to gain more than the reservation's
// own collection costs (a fraction of a millisecond).
const MinSize = 32 << 20

// MaxSize caps a reservation: it is address space (untouched until
// used), but the runtime's bookkeeping grows with it.
const MaxSize = 1 << 30

// hugePage is the size of a transparent huge page on amd64 and arm64
// with 4 KiB base pages.
const hugePage = 2 << 20

// EnvOff is the environment variable that turns Reserve off when set to
// "off" (or "0").
const EnvOff = "PROFDIFF_HUGEPAGES"

// off reports whether the environment turns Reserve off.
func off() bool {
	v := os.Getenv(EnvOff)
	return v == "off" || v == "0"
}

// mode returns the bracketed word of a THP "enabled" file's contents
// ("always [madvise] never": "madvise"), or "" when none is.
func mode(enabled string) string {
	_, rest, open := strings.Cut(enabled, "[")
	m, _, closed := strings.Cut(rest, "]")
	if !open || !closed {
		return ""
	}
	return m
}
