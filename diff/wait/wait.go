// Package wait answers who made a program wait: for each contended lock,
// the waiters' time and stacks beside the holders' critical sections, and
// for blocked time, who woke it. It is a pure function of loaded profiles
// (Analyze) returning a result.Wait, which package diff/present lays out.
//
// Two kinds of evidence feed it:
//
//   - Go's mutex and block profiles of one side. The mutex profile charges
//     each contention to the stack that released the lock (the end of the
//     holder's critical section), the block profile to the stacks that
//     waited; neither names the other or the lock. They are paired by site
//     (the program's frame calling Lock in a waiter's stack, the one
//     calling Unlock in a holder's), by receiver type, and by delay totals;
//     see pair.go, and result.WaitLock.Match for what is reported.
//   - Samples that name who woke them or who held the lock, in the label
//     contract of package profile (profile.LabelWaker, LabelOwner,
//     LabelLock): a Go execution trace (package profile/gotrace), perf
//     sched_waking and JFR monitor events where their readers set them.
//     These pair exactly, and also give the wake-up edges: the blocked
//     time of each (waiter site, waker site).
//
// A sample keeps its own bucket: the label profile.LabelBucket where the
// reader set it, else the frame rules of package diff.
package wait

import (
	"path"
	"sort"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/gotrace"
)

// Input is one loaded profile of a side.
type Input struct {
	Source  string
	Kind    profile.Kind
	Profile *pprofile.Profile
	// Blamed, for a Go execution trace, is what gotrace.Blame charged its
	// waiting to: its lock waits make the "trace" evidence (in place of
	// the waker evidence of the same waits) and its critical paths the
	// result's Paths.
	Blamed *gotrace.Blamed
	// Paths, for a perf recording with wake-ups, are its critical paths
	// (perfscript.CriticalPaths): the result's Paths. Its lock waits
	// stay the waker evidence.
	Paths *pprofile.Profile
}

// Options control Analyze. The zero value is usable.
type Options struct {
	// Rules classify samples that carry no bucket label; nil: the
	// built-in rules.
	Rules *rules.Set
	// Stacks is how many stacks each site keeps, largest first
	// (0: DefaultStacks).
	Stacks int
}

// DefaultStacks is how many stacks a site keeps unless told.
const DefaultStacks = 3

// The Evidence values of result.WaitLock.
const (
	EvidenceProfiles = "mutex+block"
	EvidenceWaker    = "waker"
	EvidenceOwner    = "owner"
	EvidenceTrace    = "trace"
)

// Analyze reads the profiles of one side (len(sides) == 1) or two (base,
// new) and returns the locks, their waiters and holders, and the wake-up
// edges. Profiles of other kinds without who-waited labels are counted in
// no table; Notes say what each side lacked.
func Analyze(sides [][]Input, opts Options) *result.Wait {
	if opts.Rules == nil {
		opts.Rules = rules.Default()
	}
	if opts.Stacks <= 0 {
		opts.Stacks = DefaultStacks
	}
	a := &analysis{
		opts:    opts,
		waiters: map[string]*siteAcc{},
		holders: map[string]*siteAcc{},
		labLock: map[labKey]*labGroup{},
		paths:   map[string]*pathAcc{},
		edges:   map[edgeKey]*edgeAcc{},
		sysMaps: map[*pprofile.Mapping]bool{},
	}
	r := &result.Wait{Sides: len(sides)}
	for s, ins := range sides {
		for _, in := range ins {
			r.Inputs[s].Sources = append(r.Inputs[s].Sources, in.Source)
			switch a.read(s, in) {
			case readMutex:
				r.Inputs[s].Mutex++
			case readBlock:
				r.Inputs[s].Block++
			case readLabelled:
				r.Inputs[s].Labelled++
			}
		}
	}
	r.Locks = append(a.pair(r), a.labelledLocks()...)
	sort.SliceStable(r.Locks, func(i, j int) bool {
		return lockOrder(r.Locks[i]) > lockOrder(r.Locks[j])
	})
	r.Wakeups = a.wakeups()
	r.Paths = a.pathResults()
	r.Notes = notes(r)
	r.Verdict = verdict(r)
	return r
}

// lockOrder sorts locks by their largest side's waiting; a holders-only
// lock (no waiting) by half the delay it released, so that a half never
// outranks a paired lock of the same size.
func lockOrder(l result.WaitLock) float64 {
	return max(l.Waited[0], l.Waited[1], l.Held[0]/2, l.Held[1]/2)
}

type readKind int

const (
	readNone readKind = iota
	readMutex
	readBlock
	readLabelled
)

type analysis struct {
	opts Options
	// waiters and holders are the mutex+block evidence by site.
	waiters, holders map[string]*siteAcc
	labLock          map[labKey]*labGroup
	edges            map[edgeKey]*edgeAcc
	paths            map[string]*pathAcc
	// blamed is set while reading an input whose trace was blamed: its
	// waker-labelled lock waits are in the trace evidence already.
	blamed  bool
	own     []string                   // sampleSite's frames, reused from sample to sample
	sysMaps map[*pprofile.Mapping]bool // diff.IsSystemModule of each mapping's file
}

// siteAcc is one site's value per side and its stacks.
type siteAcc struct {
	value  [2]float64
	stacks map[string]*result.WaitStack
}

func (s *siteAcc) add(side int, rootFirst []string, v float64) {
	s.value[side] += v
	if s.stacks == nil {
		s.stacks = map[string]*result.WaitStack{}
	}
	k := strings.Join(rootFirst, ";")
	st := s.stacks[k]
	if st == nil {
		st = &result.WaitStack{Frames: rootFirst}
		s.stacks[k] = st
	}
	st.Value[side] += v
}

// site returns the result row of the site name, with its n largest
// stacks.
func (s *siteAcc) site(name string, n int) result.WaitSite {
	ws := result.WaitSite{Site: name, Value: s.value}
	keys := make([]string, 0, len(s.stacks))
	for k := range s.stacks {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := s.stacks[keys[i]], s.stacks[keys[j]]
		if x, y := a.Value[0]+a.Value[1], b.Value[0]+b.Value[1]; x != y {
			return x > y
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys[:min(n, len(keys))] {
		ws.Stacks = append(ws.Stacks, *s.stacks[k])
	}
	return ws
}

func accAt(m map[string]*siteAcc, k string) *siteAcc {
	a := m[k]
	if a == nil {
		a = &siteAcc{}
		m[k] = a
	}
	return a
}

// read adds one profile's samples.
func (a *analysis) read(side int, in Input) readKind {
	p := in.Profile
	idx := valueIndex(p)
	if idx < 0 {
		return readNone
	}
	got := readNone
	a.blamed = in.Blamed != nil
	if a.blamed {
		a.readBlamed(side, in.Blamed)
	}
	if in.Paths != nil {
		a.readPaths(side, in.Paths)
	}
	var frames []string
	for _, s := range p.Sample {
		v := float64(s.Value[idx])
		if v <= 0 {
			continue
		}
		frames = leafFirst(frames[:0], s)
		switch {
		case hasWho(s):
			a.labelled(side, in.Kind, s, frames, v)
			got = readLabelled
		case in.Kind == profile.KindMutex:
			accAt(a.holders, holderSite(frames)).add(side, rootFirst(frames), v)
			got = readMutex
		case in.Kind == profile.KindBlock:
			got = readBlock
			if a.bucket(s, frames, in.Kind) != "lock-contention" {
				continue
			}
			accAt(a.waiters, a.sampleSite(s, frames)).add(side, rootFirst(frames), v)
		}
	}
	if got == readNone {
		switch in.Kind {
		case profile.KindMutex:
			got = readMutex
		case profile.KindBlock:
			got = readBlock
		}
	}
	return got
}

// valueIndex is the index of the sample type a profile's delay or time is
// in: "delay" in Go's mutex and block profiles, else the default sample
// type, else the last; -1 when the profile has none.
func valueIndex(p *pprofile.Profile) int {
	def := len(p.SampleType) - 1
	for i, st := range p.SampleType {
		if st.Type == "delay" {
			return i
		}
		if st.Type == p.DefaultSampleType {
			def = i
		}
	}
	return def
}

func hasWho(s *pprofile.Sample) bool {
	return len(s.Label[profile.LabelWaker]) > 0 || len(s.Label[profile.LabelOwner]) > 0
}

// bucket is the sample's bucket: its label where the reader decided it,
// else the frame rules'.
func (a *analysis) bucket(s *pprofile.Sample, frames []string, k profile.Kind) string {
	if v := s.Label[profile.LabelBucket]; len(v) == 1 {
		return v[0]
	}
	b, _ := diff.ClassifyStack(a.opts.Rules, frames, k)
	return b.String()
}

// Frames returns a sample's function names, leaf first, inlined frames
// included: the stacks Site reads.
func Frames(s *pprofile.Sample) []string { return leafFirst(nil, s) }

// leafFirst appends the sample's function names, leaf first, inlined
// frames included.
func leafFirst(dst []string, s *pprofile.Sample) []string {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil {
				dst = append(dst, l.Function.Name)
			}
		}
	}
	return dst
}

func rootFirst(leafFirst []string) []string {
	out := make([]string, len(leafFirst))
	for i, f := range leafFirst {
		out[len(out)-1-i] = f
	}
	return out
}

// machinery are the prefixes of frames that do the waiting or the waking
// rather than decide it: runtimes' lock, channel, scheduler and thread
// library code. A site is the first frame from the leaf that is none of
// these.
var machinery = []string{
	"runtime.", "sync.", "sync/atomic.", "internal/", "syscall.", "time.Sleep",
	"java.util.concurrent.locks.", "java.lang.Object.wait", "java.lang.Thread.sleep", "java.lang.Thread.join", "jdk.internal.",
	"pthread_", "__pthread", "___pthread", "lll_", "__lll_", "futex", "__futex", "syscall", "__GI_", "[",
}

// Site is the program's frame behind the waiting or waking machinery in a
// stack given leaf first: the first frame that is not runtime, lock or
// thread-library code, else the leaf ("" for no frames).
func Site(leafFirst []string) string {
	for _, f := range leafFirst {
		if !isMachinery(f) {
			return f
		}
	}
	if len(leafFirst) > 0 {
		return leafFirst[0]
	}
	return ""
}

// sampleSite is the site of a sample's stack (frames, leaf first): Site
// of its frames outside the kernel and the system libraries (a perf
// recording's off-CPU stacks end in the kernel's __schedule under glibc's
// lock code, whose names no prefix list covers), else Site of them all.
// A perf stack's root, the comm, is in no module: a stack of system
// frames only has the process as its site.
func (a *analysis) sampleSite(s *pprofile.Sample, frames []string) string {
	own := a.own[:0]
	for _, loc := range s.Location {
		if m := loc.Mapping; m != nil {
			sys, ok := a.sysMaps[m]
			if !ok {
				sys = diff.IsSystemModule(path.Base(m.File))
				a.sysMaps[m] = sys
			}
			if sys {
				continue
			}
		}
		for _, l := range loc.Line {
			if l.Function != nil {
				own = append(own, l.Function.Name)
			}
		}
	}
	a.own = own
	if site := Site(own); site != "" && !isMachinery(site) {
		return site
	}
	return Site(frames)
}

func isMachinery(f string) bool {
	for _, p := range machinery {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}

// holderSite is the site of a mutex profile's stack: the caller of the
// unlock. Runtime-internal locks (Go 1.22 and later) have only runtime
// frames: their site is the frame calling runtime.unlock.
func holderSite(leafFirst []string) string {
	if s := Site(leafFirst); s != "" && !isMachinery(s) {
		return s
	}
	for i, f := range leafFirst {
		if !strings.HasSuffix(f, "unlock") && !strings.HasSuffix(f, "Unlock") && !strings.HasSuffix(f, "unlock2") {
			return leafFirst[i]
		}
	}
	return Site(leafFirst)
}
