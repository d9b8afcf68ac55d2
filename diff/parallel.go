package diff

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/pull"
)

// A streamed profile's samples are classified off the caller's
// goroutine, several profiles, and parts of one large profile, at once:
// each part (a shard: a run of sample records) is walked into an
// Analyzer of its own (the same options and rules, its own method
// table), and the shards are merged into the caller's Analyzer in the
// order the profiles were added, each profile's parts in record order.
// Merging replays a shard's spellings in the order it met them, so
// method and spelling ids, display names and modules come out as one
// walk in that order would make them (the first shard merged into an
// Analyzer that has met no method is adopted whole, which makes the
// same tables: adopt); values are sums of integers (exact in a float64
// below 2^53), so their order does not matter.
// Diff, Top and every other reader merge what is pending first.
//
// A walk is sharded unless an OnSample consumer (the gate) reads the
// samples in order. Call trees (Options.CallTree) and --peek tables are
// aggregations like the method table: each shard builds its own and the
// merge adds them, so every output format reads the results of one walk.
// A sample's classification is a function of the sample and its
// profile's facts alone, never of what a walk met before: a method's
// frame rule is memoized per kind of profile (useKind), a frame's
// standard-library class for --by caller comes from its own name and
// module (stdClass, frSysModule), and Focus, Ignore and Peek match the
// name the frame has in its profile (a spelling). A shard therefore
// decides every sample as a serial walk does.

// shardPlan is how finely streamed profiles are cut (Options.shards,
// PrepareOptions.markEvery); the zero value is the default, and tests cut
// finer. records is the fewest sample records a profile's part has (0:
// defaultShardRecords): a profile of fewer is one shard. markEvery is the
// record spacing of the places a profile can be cut (0: the pull reader's
// default). most, when not 0, is the most shards of one profile in place
// of GOMAXPROCS.
type shardPlan struct{ records, markEvery, most int }

// defaultShardRecords is shardPlan.records' default.
const defaultShardRecords = 32 << 10

// walkJob is one profile's walk in flight: its shards, done when wg is.
// A shard whose walk failed (a packed location id check left to it, see
// pull.File.IDsLater) sets failed to the profile; settle then walks it
// again from the pprof model. Nothing else holds the profile once walked.
type walkJob struct {
	side    result.Side
	prof    int
	idx     int
	kind    profile.Kind
	shards  []*Analyzer
	wg      sync.WaitGroup
	failed  atomic.Pointer[pull.File]
	settled bool
	err     error
}

// walkShards starts the walk of d's samples in shards, at most
// GOMAXPROCS at once; when more profiles than that are in flight, the
// oldest is waited for and merged, so memory holds a bounded number of
// profiles' bytes.
func (a *Analyzer) walkShards(side result.Side, prof int, d *pull.File, idx int, kind profile.Kind) error {
	workers := runtime.GOMAXPROCS(0)
	if a.slots == nil {
		a.slots = make(chan struct{}, workers)
	}
	// Parts cost each their own resolution of the profile's locations:
	// cut only while the profiles expected leave cores idle.
	most := max(1, workers/max(1, a.expect))
	if a.opts.shards.most > 0 {
		most = a.opts.shards.most
	}
	records := a.opts.shards.records
	if records <= 0 {
		records = defaultShardRecords
	}
	bounds := d.Cuts(min(most, max(1, d.Samples()/records)))
	job := &walkJob{side: side, prof: prof, idx: idx, kind: kind}
	for i := range len(bounds) - 1 {
		s := a.shard(side, len(d.Funcs()))
		job.shards = append(job.shards, s)
		job.wg.Add(1)
		go func() {
			defer job.wg.Done()
			a.slots <- struct{}{}
			defer func() { <-a.slots }()
			if err := s.walkStreamIn(side, 0, d, idx, kind, bounds[i], bounds[i+1]); err != nil && a.stopped() == nil {
				job.failed.Store(d)
			}
		}()
	}
	a.pending = append(a.pending, job)
	for len(a.pending) > workers {
		if err := a.mergeOldest(); err != nil {
			return err
		}
	}
	return nil
}

// settle waits for job's walks. When one failed, the profile is one the
// pprof model refuses (an ID that is no location's, a varint past its
// field): its shards are dropped and it is loaded with the model, whose
// error is the one Prepare would have returned; should the model take
// it after all, its samples are walked from the model, into one shard.
func (a *Analyzer) settle(job *walkJob) error {
	job.wg.Wait()
	if job.settled {
		return job.err
	}
	job.settled = true
	d := job.failed.Load()
	if d == nil {
		return nil
	}
	job.shards = nil
	l, err := d.Model()
	if err != nil {
		job.err = err
		if a.err == nil {
			a.err = err
		}
		return err
	}
	s := a.shard(job.side, 0)
	s.walk(job.side, 0, l.Profile, job.idx, job.kind)
	job.shards = []*Analyzer{s}
	return nil
}

// shard returns an empty Analyzer that walks part of a profile of side
// as a walks it: a's options, rules and attribution. Its name maps, its
// method tables and its lead sums are made for fns names (the profile's
// functions): grown one doubling at a time, the maps cost the walk about
// 1.5% of the 200k pair's CPU, and the tables' copies are garbage whose
// pages are faulted in.
func (a *Analyzer) shard(side result.Side, fns int) *Analyzer {
	s := &Analyzer{opts: a.opts, rules: a.rules, byName: make(map[string]int32, fns), byKey: make(map[string]int32, fns),
		by: a.by, format: a.format, lead: newSideLeadTally(fns), shardWalk: true, unpaired: a.unpaired}
	s.methods, s.spellings = make([]*method, 0, fns), make([]spelling, 0, fns)
	s.mfr, s.std, s.closure = make([]frameRule, 0, fns), make([]int8, 0, fns), make([]bool, 0, fns)
	s.profiles = []ProfileStats{{Side: side}}
	if a.tree != nil {
		s.tree = newCallTree(false)
		s.tree.frames = a.tree.frames
	}
	if a.peek != nil {
		s.peek = newPeekTable(a.opts.Peek)
	}
	s.smp.a = s
	return s
}

// WalksInParallel reports whether the Analyzer walks streamed profiles off
// the caller's goroutine, in parallel, cut into shards: no OnSample
// consumer reads their samples in order. Its inputs are then best
// prepared with PrepareOptions.IDsInWalk.
func (a *Analyzer) WalksInParallel() bool {
	return len(a.consumers) == 0
}

// Expect tells the Analyzer how many profiles will be added, when the
// caller knows: a large profile's walk is cut into parts only while
// fewer profiles than cores are expected (a diff of two profiles on two
// cores walks each whole, one per core; top of one profile cuts it in
// two), and once that many are registered, closures' neighbours are no
// longer noted where no closure will be paired by them (closureNeed).
// A caller that adds more than it announced gets closures paired only
// with themselves, and a warning that says so.
func (a *Analyzer) Expect(n int) { a.expect = n }

// Wait waits for the walks in flight; they are merged when a result is
// asked for (Diff, Top, Profiles wait themselves). A caller that wants
// the memory of the inputs back before the merge and the results are
// built (the profiles' bytes and tables are garbage once walked) calls
// Wait, then collects. It returns the error of a profile whose walk
// found it to be one the pprof model refuses (see settle), as AddInput
// returns the errors it finds; results are not to be read after one. With
// Options.SampleIndex set, it then checks the selected type against every
// profile added: an *AbsentSampleTypeError when none has it, or the
// *NoSampleTypeError of one without it (both ErrNoSampleType) unless its
// format records event types, which count as zero (see Add).
func (a *Analyzer) Wait() error {
	for _, job := range a.pending {
		if err := a.settle(job); err != nil {
			return err
		}
	}
	if err := a.stopped(); err != nil {
		return err
	}
	if a.err != nil {
		return a.err
	}
	return a.checkSelected()
}

// flush waits for every walk in flight and merges it. A profile found
// refused (see Wait) is left out, and said so in the warnings, for a
// caller that asks for results without waiting first.
func (a *Analyzer) flush() {
	for len(a.pending) > 0 {
		if err := a.mergeOldest(); err != nil {
			a.warnings = append(a.warnings, fmt.Sprintf("%v: its samples are left out", err))
		}
	}
}

// mergeOldest settles the oldest walk in flight and merges it, unless it
// failed.
func (a *Analyzer) mergeOldest() error {
	job := a.pending[0]
	a.pending[0] = nil
	a.pending = a.pending[1:]
	if err := a.settle(job); err != nil {
		return err
	}
	for _, s := range job.shards {
		a.merge(s, job.side, job.prof)
	}
	return nil
}

// merge adds shard s, a part of profile prof on side, into a.
func (a *Analyzer) merge(s *Analyzer, side result.Side, prof int) {
	if len(a.methods) == 0 && len(a.spellings) == 0 {
		a.adopt(s, side, prof)
		return
	}
	// Methods and spellings, in the order the shard met them.
	remap, spRemap := make([]int32, len(s.methods)), make([]int32, len(s.spellings))
	for i, sp := range s.spellings {
		sm := s.methods[sp.method]
		f := a.internNamed(sp.name, "", side, &fnName{key: sm.key, family: sm.family})
		remap[sp.method], spRemap[i] = f.id, f.sp
	}
	for id, sm := range s.methods {
		m := a.methods[remap[id]]
		if mod := sm.module[side]; mod != "" && m.module[side] == "" {
			m.module[side] = mod
		}
		m.val[side] += sm.val[side]
		for b, v := range sm.buckets[side] {
			m.buckets[side][b] += v
		}
	}
	if s.tree != nil && s.tree.frames {
		a.tree.merge(s.tree, spRemap, a.treeNarrow(), side, prof)
	} else if s.tree != nil {
		a.tree.merge(s.tree, remap, a.treeNarrow(), side, prof)
	}
	if s.peek != nil {
		a.peek.merge(s.peek, remap)
	}
	a.lead.addSide(s.lead, side, remap) // a shard's tally is of its side alone
	for id, nb := range s.closures.neighbours[side] {
		for _, n := range nb {
			a.closures.add(side, remap[id], remap[n])
		}
	}
	a.mergeStats(s, side, prof)
}

// adopt is merge into an Analyzer that has met no method yet (a diff's
// first profile): replaying the shard's spellings would make its method
// table again, id for id (each method is made by the first spelling
// that names it, in the order met), so a takes the shard's tables over
// instead: methods and their values, spellings and their indexes, the
// verdict's tallies and the closures' neighbours of side (the shard
// walked no other). Its memos by method id start empty, as merge leaves
// them for the methods it makes; stamps continue past the shard's.
func (a *Analyzer) adopt(s *Analyzer, side result.Side, prof int) {
	a.methods, a.spellings, a.byName, a.byKey = s.methods, s.spellings, s.byName, s.byKey
	a.closure, a.anyClosure = s.closure, s.anyClosure
	a.mfr, a.std = make([]frameRule, len(s.methods)), make([]int8, len(s.methods))
	a.stamp = max(a.stamp, s.stamp)
	a.lead = s.lead.sides(side)
	a.closures.neighbours[side], a.closures.pairs[side] = s.closures.neighbours[side], s.closures.pairs[side]
	if s.tree != nil {
		// The Analyzer's own walks and a later profile's shards sum
		// repeated stacks: the tree indexes its records first (merge).
		a.tree = s.tree
		a.tree.seen, a.tree.stale, a.tree.owner[side] = map[uint64]int32{}, true, prof+1
	}
	if s.peek != nil {
		a.peek = s.peek
	}
	a.mergeStats(s, side, prof)
}

// mergeStats adds what shard s learnt besides the method tables: its
// profile's values and its side's threads.
func (a *Analyzer) mergeStats(s *Analyzer, side result.Side, prof int) {
	ps, o := &a.profiles[prof], &s.profiles[0]
	ps.Total += o.Total
	ps.Sched += o.Sched
	ps.Unknown += o.Unknown
	ps.Samples = addSat(ps.Samples, o.Samples)
	ps.Filtered = addSat(ps.Filtered, o.Filtered)
	for b, v := range o.Buckets {
		ps.Buckets[b] += v
	}
	if th := s.sides[side].threads; len(th) > 0 {
		m := &a.sides[side]
		if m.threads == nil {
			m.threads = map[string]bool{}
		}
		for t := range th {
			m.threads[t] = true
		}
	}
}
