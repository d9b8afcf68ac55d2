package diff

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/profdiff/profdiff/diff/internal/stop"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
)

// CallTree collects the bucketed samples' stacks as they stream by (method
// ids, root first, in one flat array, one record per stack, bucket and
// side)
// and builds the merged tree once, top down, when the result asks: a
// subtree too narrow to keep is summed and never descended into, so the
// cost of a picture of a huge profile is that of its visible part plus
// one pass over the records. Records of one stack and bucket are summed
// by the build, so a record need not be distinct: the tree of a serial
// walk adds a stack seen again to its record (seen), which keeps memory
// at the distinct stacks of a profile of many samples (perf script's);
// a shard's tree, which walks a pprof protobuf (one record per sample,
// the stacks mostly distinct already), appends, and merge sums a shard's
// records into the tree's (the first shard's it adopts whole). Memory is
// bounded by the records' frames: the distinct stacks of all the
// profiles, however many, plus one shard's sample table.
type CallTree struct {
	ids  []idChunk        // chunks of treeChunk ids (or one stack, if longer), never grown by copying
	recs [][]treeRec      // blocks of at most recBlock records, never grown past it: record i is recs[i>>recShift][i&recMask]
	n    int              // records in all
	seen map[uint64]int32 // hash of (stack, bucket, side) → its first record; nil: no dedup
	// clash holds the further records of a hash in seen: distinct
	// stacks whose 64-bit hashes collide, which practically never happens.
	clash map[uint64][]int32
	// stale says that seen does not note every record yet: shards of one
	// profile a side were adopted whole (merge), and index runs before a
	// stack is next summed in.
	stale bool
	// owner is, per side, 1 + the profile whose shards were adopted
	// whole; 0 before any, -1 once stacks of several profiles (or of a
	// serial walk) are summed.
	owner [2]int
	buf   []int32
	// frames says the ids are spelling ids, not method ids: a tree of
	// the frames as the profiles named them (Options.TreeFrames).
	frames bool
	// maxDepth, when set, replaces MaxTreeDepth (tests cut shallower).
	maxDepth int
}

// treeChunk is the size of a chunk of CallTree.ids.
const treeChunk = 1 << 20

// recShift sizes a block of CallTree.recs: records live in blocks of
// recBlock, allocated whole once the first is full, so a tree of a
// million records never copies them while it grows (append's 1.25x
// growth would allocate five times their size), and a merge adopts a
// shard's blocks without copying them either.
const (
	recShift = 16
	recBlock = 1 << recShift
	recMask  = recBlock - 1
)

// treeRec is one stack in one bucket on one side: ids[chunk][start:end],
// root first, and its value.
type treeRec struct {
	value             float64
	chunk, start, end int32
	bucket            rules.Bucket
	side              uint8
}

// idChunk is a chunk of CallTree's ids: 16 bits an id while the tree's
// method ids fit (fewer than 65,536 methods, nearly every comparison),
// which halves the tree's largest part; else 32 (u32 not nil).
type idChunk struct {
	u16 []uint16
	u32 []int32
}

func (c *idChunk) len() int {
	if c.u32 != nil {
		return len(c.u32)
	}
	return len(c.u16)
}

func (c *idChunk) room() int {
	if c.u32 != nil {
		return cap(c.u32) - len(c.u32)
	}
	return cap(c.u16) - len(c.u16)
}

// at is the id at i.
func (c *idChunk) at(i int) int32 {
	if c.u32 != nil {
		return c.u32[i]
	}
	return int32(c.u16[i])
}

// add appends stack's ids (all under 1<<16 unless the chunk is wide).
func (c *idChunk) add(stack []int32) {
	if c.u32 != nil {
		c.u32 = append(c.u32, stack...)
		return
	}
	for _, id := range stack {
		c.u16 = append(c.u16, uint16(id))
	}
}

// addReversed appends stack's ids last to first.
func (c *idChunk) addReversed(stack []int32) {
	if c.u32 != nil {
		for i := len(stack) - 1; i >= 0; i-- {
			c.u32 = append(c.u32, stack[i])
		}
		return
	}
	n := len(c.u16)
	c.u16 = c.u16[:n+len(stack)]
	dst := c.u16[n:]
	for i, id := range stack {
		dst[len(dst)-1-i] = uint16(id)
	}
}

// remap rewrites the chunk's ids through remap, widening it when one
// no longer fits 16 bits.
func (c *idChunk) remap(remap []int32) {
	if c.u16 != nil {
		for _, id := range c.u16 {
			if remap[id] >= 1<<16 {
				c.u32 = make([]int32, len(c.u16))
				for i, id := range c.u16 {
					c.u32[i] = int32(id)
				}
				c.u16 = nil
				break
			}
		}
	}
	if c.u32 != nil {
		for i, id := range c.u32 {
			c.u32[i] = remap[id]
		}
		return
	}
	for i, id := range c.u16 {
		c.u16[i] = uint16(remap[id])
	}
}

// equal reports whether record r's stack is stack.
func (t *CallTree) equal(r *treeRec, stack []int32) bool {
	if int(r.end-r.start) != len(stack) {
		return false
	}
	c := &t.ids[r.chunk]
	for i, id := range stack {
		if c.at(int(r.start)+i) != id {
			return false
		}
	}
	return true
}

// newCallTree returns an empty tree that sums a stack seen again into its
// record when dedup is set.
func newCallTree(dedup bool) *CallTree {
	t := &CallTree{}
	if dedup {
		t.seen = map[uint64]int32{}
	}
	return t
}

// rec is record i.
func (t *CallTree) rec(i int32) *treeRec {
	return &t.recs[i>>recShift][i&recMask]
}

// each calls f with every record's index, in order.
func (t *CallTree) each(f func(i int32)) {
	for bi, blk := range t.recs {
		base := int32(bi) << recShift
		for j := range blk {
			f(base | int32(j))
		}
	}
}

// add records one bucketed sample; narrow says that every method id of
// the tree fits 16 bits. A tree without dedup writes the stack (leaf
// first in s) straight into its chunk, root first.
func (t *CallTree) add(s *Sample, narrow bool) {
	stack := s.Stack
	if t.frames {
		stack = s.Spellings
	}
	if t.seen == nil {
		c := t.chunkFor(len(stack), narrow)
		r := treeRec{chunk: int32(len(t.ids) - 1), start: int32(c.len()), bucket: s.Bucket, side: uint8(s.Side), value: s.Value}
		c.addReversed(stack)
		r.end = int32(c.len())
		t.push(r)
		return
	}
	t.owner[s.Side] = -1 // a merge of this side from now on sums
	t.buf = t.buf[:0]
	for i := len(stack) - 1; i >= 0; i-- {
		t.buf = append(t.buf, stack[i])
	}
	t.addStack(t.buf, s.Bucket, s.Side, s.Value, narrow)
}

// chunkFor returns the last chunk of ids, first starting a new one when
// n ids do not fit it or it is 16-bit and the ids may not be (narrow
// false).
func (t *CallTree) chunkFor(n int, narrow bool) *idChunk {
	last := len(t.ids) - 1
	if last < 0 || t.ids[last].room() < n || !narrow && t.ids[last].u32 == nil {
		n := max(treeChunk, n)
		if narrow {
			t.ids = append(t.ids, idChunk{u16: make([]uint16, 0, n)})
		} else {
			t.ids = append(t.ids, idChunk{u32: make([]int32, 0, n)})
		}
		last++
	}
	return &t.ids[last]
}

// addStack adds value to the record of a stack (method ids, root first)
// in bucket b on side, making it on first sight.
func (t *CallTree) addStack(stack []int32, b rules.Bucket, side result.Side, value float64, narrow bool) {
	var h uint64
	var first int32
	var ok bool
	if t.seen != nil {
		if t.stale {
			t.index()
		}
		h = stackHash(stack, b, side)
		if first, ok = t.seen[h]; ok {
			if r := t.rec(first); r.is(t, stack, b, side) {
				r.value += value
				return
			}
			for _, i := range t.clash[h] {
				if r := t.rec(i); r.is(t, stack, b, side) {
					r.value += value
					return
				}
			}
		}
	}
	c := t.chunkFor(len(stack), narrow)
	r := treeRec{chunk: int32(len(t.ids) - 1), start: int32(c.len()), bucket: b, side: uint8(side), value: value}
	c.add(stack)
	r.end = int32(c.len())
	i := t.push(r)
	if t.seen != nil {
		t.note(h, i, ok)
	}
}

// note records that record i is of a stack whose hash is h; had says
// that seen holds another stack of that hash already.
func (t *CallTree) note(h uint64, i int32, had bool) {
	if !had {
		t.seen[h] = i
		return
	}
	if t.clash == nil {
		t.clash = map[uint64][]int32{}
	}
	t.clash[h] = append(t.clash[h], i)
}

// stackHash is the FNV-1a hash of a stack (ids root first) in bucket b on
// side, which keys CallTree.seen.
func stackHash(stack []int32, b rules.Bucket, side result.Side) uint64 {
	h := (uint64(14695981039346656037) ^ uint64(b) ^ uint64(side)<<8) * 1099511628211
	for _, id := range stack {
		h = (h ^ uint64(uint32(id))) * 1099511628211
	}
	return h
}

// stackOf copies record r's ids (root first) into buf[:0], each through
// remap unless that is nil.
func (t *CallTree) stackOf(buf []int32, r *treeRec, remap []int32) []int32 {
	c := &t.ids[r.chunk]
	buf = buf[:0]
	for j := r.start; j < r.end; j++ {
		id := c.at(int(j))
		if remap != nil {
			id = remap[id]
		}
		buf = append(buf, id)
	}
	return buf
}

// index makes seen anew from the records (a shard's tree adopted whole),
// so that stacks merged later are summed into them: each distinct stack's
// first record is noted; a stack repeated within the records keeps its
// repeats, which the build and EachStack's callers sum.
func (t *CallTree) index() {
	t.seen, t.clash, t.stale = map[uint64]int32{}, nil, false
	t.each(func(i int32) {
		r := t.rec(i)
		t.buf = t.stackOf(t.buf, r, nil)
		h := stackHash(t.buf, r.bucket, result.Side(r.side))
		first, ok := t.seen[h]
		if ok && t.rec(first).is(t, t.buf, r.bucket, result.Side(r.side)) {
			return
		}
		t.note(h, i, ok)
	})
}

// push appends r and returns its index. The first block grows by
// doubling up to recBlock (a small profile's tree stays small); later
// blocks are allocated whole.
func (t *CallTree) push(r treeRec) int32 {
	last := len(t.recs) - 1
	if last < 0 || len(t.recs[last]) == recBlock {
		n := recBlock
		if last < 0 {
			n = 64
		}
		t.recs = append(t.recs, make([]treeRec, 0, n))
		last++
	}
	blk := t.recs[last]
	if len(blk) == cap(blk) {
		blk = append(make([]treeRec, 0, min(2*cap(blk), recBlock)), blk...)
	}
	t.recs[last] = append(blk, r)
	t.n++
	return int32(last)<<recShift | int32(len(blk))
}

// is reports whether r is the record of stack in bucket b on side.
func (r *treeRec) is(t *CallTree, stack []int32, b rules.Bucket, side result.Side) bool {
	return r.bucket == b && result.Side(r.side) == side && t.equal(r, stack)
}

// merge adds the records of o, a shard of profile prof on side, whose
// method (or spelling) ids remap turns into t's (narrow: they fit 16
// bits); o is not used again. A tree that sums repeated stacks (seen)
// adopts the shards of a side's first profile whole, as one that does not
// always does (o's chunks and record blocks taken over, its ids rewritten
// in place, nothing copied): a profile's samples rarely repeat a stack.
// From a side's second profile on it sums o's stacks into its records,
// indexing those adopted first, so that it holds the distinct stacks of
// every profile merged, however many.
func (t *CallTree) merge(o *CallTree, remap []int32, narrow bool, side result.Side, prof int) {
	if t.seen != nil && t.owner[side] != 0 && t.owner[side] != prof+1 {
		t.owner[side] = -1
		var buf []int32
		o.each(func(i int32) {
			r := o.rec(i)
			buf = o.stackOf(buf, r, remap)
			t.addStack(buf, r.bucket, result.Side(r.side), r.value, narrow)
		})
		return
	}
	if t.seen != nil {
		t.owner[side], t.stale = prof+1, true
	}
	for i := range o.ids {
		o.ids[i].remap(remap)
	}
	off := int32(len(t.ids))
	t.ids = append(t.ids, o.ids...)
	for _, blk := range o.recs {
		for j := range blk {
			blk[j].chunk += off
		}
	}
	t.recs = append(t.recs, o.recs...)
	t.n += o.n
}

// sums are a node's values while it is built.
type sums struct {
	total, self [2]float64
	split       []bucketValue // inclusive value by bucket, in first-seen order
}

// bucketValue is a node's inclusive value in one bucket.
type bucketValue struct {
	b rules.Bucket
	v [2]float64
}

// add credits a record's values on both sides.
func (s *sums) add(r *treeRec) {
	if r.value != 0 {
		s.credit(result.Side(r.side), r.bucket, r.value)
	}
}

func (s *sums) credit(side result.Side, b rules.Bucket, v float64) {
	s.total[side] += v
	for i := range s.split {
		if s.split[i].b == b {
			s.split[i].v[side] += v
			return
		}
	}
	bv := bucketValue{b: b}
	bv.v[side] = v
	s.split = append(s.split, bv)
}

// node makes the CallNode of these sums.
func (s *sums) node(name string) *result.CallNode {
	n := &result.CallNode{Name: name, Total: s.total, Self: s.self}
	best := -1.0
	for _, bv := range s.split {
		if v := bv.v[0] + bv.v[1]; v > best || v == best && bv.b < n.Bucket {
			best, n.Bucket = v, bv.b
		}
	}
	if len(s.split) > 1 {
		n.Buckets = make(map[rules.Bucket][2]float64, len(s.split))
		for _, bv := range s.split {
			n.Buckets[bv.b] = bv.v
		}
	}
	return n
}

// result builds the tree with names, qualified as the method rows are
// (module of the preferred side, else of the other), children sorted by
// that name (ties, which only two ids of one display name can make, by
// id). A child narrower than min of the root on both sides (a fraction of
// each side's total) is merged with its narrow siblings into one "other"
// node, and its subtree is not built.
//
// The build descends one level a frame, so a stack deeper than
// MaxTreeDepth is cut there: the value of the frames below counts as the
// self of the frame at the cut, and warning says so ("" when nothing was
// cut). A hostile stack of a million frames would otherwise take the
// builder past the goroutine stack's limit; no picture draws that deep.
func (t *CallTree) result(a *Analyzer, prefer result.Side, min float64) (n *result.CallNode, warning string) {
	b := treeBuilder{t: t, min: min, ctx: a.opts.Context, name: t.namer(a, prefer), cut: new(atomic.Bool), maxDepth: MaxTreeDepth}
	if t.maxDepth > 0 {
		b.maxDepth = t.maxDepth
	}
	idx := make([]int32, 0, t.n)
	var root sums
	t.each(func(i int32) {
		idx = append(idx, i)
		root.add(t.rec(i))
	})
	b.root = root.total
	b.slots = make(chan struct{}, runtime.GOMAXPROCS(0)-1)
	n = root.node("root")
	n.Self = [2]float64{}
	n.Children = b.children(idx, 0, &n.Self)
	if b.cut.Load() {
		warning = fmt.Sprintf("the call tree is cut at %d frames deep: the frames of deeper stacks below that depth are left out, their value counted at the cut", b.maxDepth)
	}
	return n, warning
}

// MaxTreeDepth is the deepest level of a built call tree (see result).
const MaxTreeDepth = 100_000

// namer names the tree's ids as the method rows are named (see result).
func (t *CallTree) namer(a *Analyzer, prefer result.Side) func(int32) string {
	vars := a.variants()
	return func(id int32) string {
		var name string
		if t.frames {
			sp := a.spellings[id]
			name, id = sp.name, sp.method
		}
		m := a.methods[id]
		if !t.frames {
			name = m.label(vars[id])
			if vars[id] > 1 {
				name += result.VariantsSuffix(int(vars[id]))
			}
		}
		mod := m.module[prefer]
		if mod == "" {
			mod = m.module[1-prefer]
		}
		return a.qualify(name, mod)
	}
}

// stacks hands the tree's records over unmerged (result.Stacks), each id
// named as result names it: the records and their ids are the tree's
// own, not copied, so a writer of every stack costs an index a record.
func (t *CallTree) stacks(a *Analyzer, prefer result.Side) result.Stacks {
	name := t.namer(a, prefer)
	n := len(a.methods)
	if t.frames {
		n = len(a.spellings)
	}
	s := &treeStacks{t: t, names: make([]string, n), idx: make([]int32, 0, t.n)}
	for id := range s.names {
		s.names[id] = name(int32(id))
	}
	t.each(func(i int32) { s.idx = append(s.idx, i) })
	return s
}

// treeStacks are a CallTree's records as result.Stacks.
type treeStacks struct {
	t     *CallTree
	names []string // by id
	idx   []int32  // the records' indexes in t, in order
}

func (s *treeStacks) Len() int        { return len(s.idx) }
func (s *treeStacks) Names() []string { return s.names }

func (s *treeStacks) Depth(i int) int {
	r := s.t.rec(s.idx[i])
	return int(r.end - r.start)
}

func (s *treeStacks) Frame(i, k int) int32 {
	r := s.t.rec(s.idx[i])
	return s.t.ids[r.chunk].at(int(r.start) + k)
}

func (s *treeStacks) Value(i int) (int, float64) {
	r := s.t.rec(s.idx[i])
	return int(r.side), r.value
}

type treeBuilder struct {
	t       *CallTree
	min     float64
	root    [2]float64
	name    func(int32) string
	ctx     context.Context // Options.Context: the build stops when it ends
	scratch groupScratch    // sort buffers, reused level after level
	// slots are the goroutines besides the caller's that may build
	// subtrees at once (shared by every builder of one tree).
	slots    chan struct{}
	cut      *atomic.Bool // a stack was cut at maxDepth (shared too)
	maxDepth int          // MaxTreeDepth, or the tree's own
}

// parallelRecords is the fewest records a subtree has for its build to
// go to another goroutine: below it, starting one costs more than the
// build.
const parallelRecords = 4096

// key is the id at depth d of record i's stack, -1 when it ends above d.
func (b *treeBuilder) key(i int32, d int) int32 {
	r := b.t.rec(i)
	if int(r.end-r.start) <= d {
		return -1
	}
	return b.t.ids[r.chunk].at(int(r.start) + d)
}

// trySlot takes a slot for a subtree's build on another goroutine, when
// one is free.
func (b *treeBuilder) trySlot() bool {
	select {
	case b.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// narrow reports whether sums are under min of the root on both sides.
func (b *treeBuilder) narrow(s *sums) bool {
	if b.min <= 0 {
		return false
	}
	for side := range b.root {
		if b.root[side] > 0 && s.total[side] >= b.min*b.root[side] {
			return false
		}
	}
	return true
}

// children builds the children at depth d of the node whose records are
// idx (sorted here in place), adding the records that end at the node to
// self. Once the builder's context has ended it builds nothing more.
func (b *treeBuilder) children(idx []int32, d int, self *[2]float64) []*result.CallNode {
	if stop.Now(b.ctx) != nil {
		return nil
	}
	if d >= b.maxDepth {
		for _, i := range idx {
			r := b.t.rec(i)
			self[r.side] += r.value
			if int(r.end-r.start) > d {
				b.cut.Store(true)
			}
		}
		return nil
	}
	groups := b.group(idx, d)
	var kids []*result.CallNode
	ids := map[*result.CallNode]int32{}
	var other sums
	merged := 0
	var wg sync.WaitGroup
	for _, g := range groups {
		k := g.key
		var s sums
		run := idx[g.from:g.to]
		for _, i := range run {
			s.add(b.t.rec(i))
		}
		switch {
		case k < 0:
			self[0] += s.total[0]
			self[1] += s.total[1]
		case b.narrow(&s):
			for _, bv := range s.split {
				for side, v := range bv.v {
					if v != 0 {
						other.credit(result.Side(side), bv.b, v)
					}
				}
			}
			merged++
		default:
			n := s.node(b.name(k))
			kids = append(kids, n)
			ids[n] = k
			if len(run) < parallelRecords || !b.trySlot() {
				n.Children = b.children(run, d+1, &n.Self)
				continue
			}
			// A large subtree is built on a goroutine of its own: its
			// records (run) are its alone, and it writes n alone.
			nb := *b
			nb.scratch = groupScratch{}
			wg.Go(func() {
				defer func() { <-b.slots }()
				n.Children = nb.children(run, d+1, &n.Self)
			})
		}
	}
	wg.Wait()
	sort.Slice(kids, func(i, j int) bool {
		if kids[i].Name != kids[j].Name {
			return kids[i].Name < kids[j].Name
		}
		return ids[kids[i]] < ids[kids[j]]
	})
	if merged > 0 {
		o := other.node(result.OtherName)
		o.Self, o.Other = o.Total, merged
		kids = append(kids, o)
	}
	return kids
}

// group is the records idx[from:to] of one child: key is its method id
// at the level, -1 for the records that end above it.
type group struct {
	key      int32
	from, to int
}

// groupScratch holds the buffers of a builder's grouping, reused from
// node to node (a node's groups are taken before its children are built).
type groupScratch struct {
	packed     []uint64
	keys, tmpK []uint32
	tmpI       []int32
}

// radixFrom is the fewest records grouped by a radix sort rather than a
// comparison sort: below it the counting passes cost more.
const radixFrom = 256

// group sorts idx (ascending, as every level leaves it) stably by each
// record's id at depth d, records that end above d first, and returns
// the runs of one id in that order. The order within a run stays
// ascending, so the build is the same whichever sort ran.
func (b *treeBuilder) group(idx []int32, d int) []group {
	sc := &b.scratch
	var keys []uint32
	if len(idx) < radixFrom {
		// (id+1, record) packed in one integer: one comparison sort.
		p := sc.packed[:0]
		for _, i := range idx {
			p = append(p, uint64(uint32(b.key(i, d)+1))<<32|uint64(uint32(i)))
		}
		slices.Sort(p)
		keys = sc.keys[:0]
		for n, k := range p {
			idx[n] = int32(uint32(k))
			keys = append(keys, uint32(k>>32))
		}
		sc.packed, sc.keys = p, keys
	} else {
		keys = sc.keys[:0]
		var most uint32
		for _, i := range idx {
			k := uint32(b.key(i, d) + 1)
			most |= k
			keys = append(keys, k)
		}
		sc.keys = keys
		keys = b.radix(idx, keys, most)
	}
	var gs []group
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && keys[j] == keys[i] {
			j++
		}
		gs = append(gs, group{key: int32(keys[i]) - 1, from: i, to: j})
		i = j
	}
	return gs
}

// radix sorts idx stably by keys (one per record, in idx's order) with
// one counting pass per byte that most (every key or'ed) uses, and
// returns the keys in their sorted order; idx is sorted in place.
func (b *treeBuilder) radix(idx []int32, keys []uint32, most uint32) []uint32 {
	sc := &b.scratch
	n := len(idx)
	sc.tmpK = slices.Grow(sc.tmpK[:0], n)[:n]
	sc.tmpI = slices.Grow(sc.tmpI[:0], n)[:n]
	srcK, srcI, dstK, dstI := keys, idx, sc.tmpK, sc.tmpI
	for shift := uint(0); shift < 32 && most>>shift != 0; shift += 8 {
		var count [256]int
		for _, k := range srcK {
			count[k>>shift&0xff]++
		}
		pos := 0
		for c, m := range count {
			count[c] = pos
			pos += m
		}
		for n, k := range srcK {
			c := k >> shift & 0xff
			dstK[count[c]] = k
			dstI[count[c]] = srcI[n]
			count[c]++
		}
		srcK, srcI, dstK, dstI = dstK, dstI, srcK, srcI
	}
	if &srcI[0] != &idx[0] {
		copy(idx, srcI)
	}
	return srcK
}

// EachStack calls f with every stack the Analyzer keeps (Options.Stacks
// or CallTree): its side, bucket, frame ids root first (StackFrame names
// them) and value, in the profiles' unit. A stack may come more than once
// (once per shard of a profile read in parallel): its values add up. It
// calls nothing without a kept tree. Samples reported apart from the
// buckets (Result.Sched, Result.Unknown) are not among them. f must not
// keep stack.
func (a *Analyzer) EachStack(f func(side result.Side, b rules.Bucket, stack []int32, value float64)) {
	t := a.tree
	if t == nil {
		return
	}
	var buf []int32
	t.each(func(i int32) {
		r := t.rec(i)
		buf = t.stackOf(buf, r, nil)
		f(result.Side(r.side), r.bucket, buf, r.value)
	})
}

// StackFrame names a frame id of EachStack: a frame as the profile named
// it, or a method (Options.Stacks).
func (a *Analyzer) StackFrame(id int32) string {
	if a.tree != nil && a.tree.frames {
		return a.Spelling(id)
	}
	return a.MethodName(id)
}
