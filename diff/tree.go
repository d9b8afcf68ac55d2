package diff

import (
	"runtime"
	"slices"
	"sort"
	"sync"
)

// CallTree collects the bucketed samples' stacks as they stream by (method
// ids, root first, in one flat array, one record per stack and bucket)
// and builds the merged tree once, top down, when the result asks: a
// subtree too narrow to keep is summed and never descended into, so the
// cost of a picture of a huge profile is that of its visible part plus
// one pass over the records. Records of one stack and bucket are summed
// by the build, so a record need not be distinct: the tree of a serial
// walk adds a stack seen again to its record (seen), which keeps memory
// at the distinct stacks of a profile of many samples (perf script's);
// a shard's tree, which walks a pprof protobuf (one record per sample,
// the stacks mostly distinct already), appends, and merge appends a
// shard's records after the tree's. Memory is bounded by the records'
// frames: the distinct stacks, or the protobuf's own sample table.
type CallTree struct {
	ids  []idChunk // chunks of treeChunk ids (or one stack, if longer), never grown by copying
	recs []treeRec
	seen map[uint64]int32 // hash of (stack, bucket) → first record; collisions chain through treeRec.next; nil: no dedup
	buf  []int32
}

// treeChunk is the size of a chunk of CallTree.ids.
const treeChunk = 1 << 20

// treeRec is one stack in one bucket: ids[chunk][start:end], root first,
// and its value on each side.
type treeRec struct {
	value             [2]float64
	chunk, start, end int32
	next              int32 // the next record of the same hash, -1 for none
	bucket            Bucket
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

// add records one bucketed sample; narrow says that every method id of
// the tree fits 16 bits.
func (t *CallTree) add(s *Sample, narrow bool) {
	t.buf = t.buf[:0]
	for i := len(s.Stack) - 1; i >= 0; i-- {
		t.buf = append(t.buf, s.Stack[i])
	}
	var v [2]float64
	v[s.Side] = s.Value
	t.addStack(t.buf, s.Bucket, v, narrow)
}

// addStack adds value to the record of a stack (method ids, root first)
// in bucket b, making it on first sight.
func (t *CallTree) addStack(stack []int32, b Bucket, value [2]float64, narrow bool) {
	var h uint64
	var first int32
	var ok bool
	if t.seen != nil {
		h = uint64(14695981039346656037) ^ uint64(b)
		for _, id := range stack {
			h = (h ^ uint64(uint32(id))) * 1099511628211
		}
		first, ok = t.seen[h]
	}
	if ok {
		for i := first; i >= 0; i = t.recs[i].next {
			r := &t.recs[i]
			if r.bucket == b && t.equal(r, stack) {
				r.value[0] += value[0]
				r.value[1] += value[1]
				return
			}
		}
	}
	last := len(t.ids) - 1
	if last < 0 || t.ids[last].room() < len(stack) || !narrow && t.ids[last].u32 == nil {
		n := max(treeChunk, len(stack))
		if narrow {
			t.ids = append(t.ids, idChunk{u16: make([]uint16, 0, n)})
		} else {
			t.ids = append(t.ids, idChunk{u32: make([]int32, 0, n)})
		}
		last++
	}
	c := &t.ids[last]
	r := treeRec{chunk: int32(last), start: int32(c.len()), bucket: b, next: -1, value: value}
	c.add(stack)
	r.end = int32(c.len())
	if ok {
		r.next = first
	}
	if t.seen != nil {
		t.seen[h] = int32(len(t.recs))
	}
	t.recs = append(t.recs, r)
}

// merge appends the records of o, a shard's tree, whose method ids remap
// turns into t's: o's ids are rewritten in place and its chunks taken
// over (o is not used again). They stay out of t.seen: the build sums
// records of one stack.
func (t *CallTree) merge(o *CallTree, remap []int32) {
	for i := range o.ids {
		o.ids[i].remap(remap)
	}
	off := int32(len(t.ids))
	t.ids = append(t.ids, o.ids...)
	for _, r := range o.recs {
		r.chunk += off
		r.next = -1
		t.recs = append(t.recs, r)
	}
}

// sums are a node's values while it is built.
type sums struct {
	total, self [2]float64
	split       []bucketValue // inclusive value by bucket, in first-seen order
}

// bucketValue is a node's inclusive value in one bucket.
type bucketValue struct {
	b Bucket
	v [2]float64
}

// add credits a record's values on both sides.
func (s *sums) add(r *treeRec) {
	for side, v := range r.value {
		if v != 0 {
			s.credit(Side(side), r.bucket, v)
		}
	}
}

func (s *sums) credit(side Side, b Bucket, v float64) {
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
func (s *sums) node(name string) *CallNode {
	n := &CallNode{Name: name, Total: s.total, Self: s.self}
	best := -1.0
	for _, bv := range s.split {
		if v := bv.v[0] + bv.v[1]; v > best || v == best && bv.b < n.Bucket {
			best, n.Bucket = v, bv.b
		}
	}
	if len(s.split) > 1 {
		n.Buckets = make(map[Bucket][2]float64, len(s.split))
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
func (t *CallTree) result(a *Analyzer, prefer Side, min float64) *CallNode {
	b := treeBuilder{t: t, min: min, name: func(id int32) string {
		m := a.methods[id]
		mod := m.module[prefer]
		if mod == "" {
			mod = m.module[1-prefer]
		}
		return a.qualify(m.name, mod)
	}}
	idx := make([]int32, len(t.recs))
	var root sums
	for i := range t.recs {
		idx[i] = int32(i)
		root.add(&t.recs[i])
	}
	b.root = root.total
	b.slots = make(chan struct{}, runtime.GOMAXPROCS(0)-1)
	n := root.node("root")
	n.Self = [2]float64{}
	n.Children = b.children(idx, 0, &n.Self)
	return n
}

type treeBuilder struct {
	t       *CallTree
	min     float64
	root    [2]float64
	name    func(int32) string
	scratch []uint64 // sort keys, reused level after level
	// slots are the goroutines besides the caller's that may build
	// subtrees at once (shared by every builder of one tree).
	slots chan struct{}
}

// parallelRecords is the fewest records a subtree has for its build to
// go to another goroutine: below it, starting one costs more than the
// build.
const parallelRecords = 4096

// key is the id at depth d of record i's stack, -1 when it ends above d.
func (b *treeBuilder) key(i int32, d int) int32 {
	r := &b.t.recs[i]
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
// self.
func (b *treeBuilder) children(idx []int32, d int, self *[2]float64) []*CallNode {
	// Sort by (id at depth d, record) packed in one integer: records that
	// end above d (key -1, stored as 0) first.
	keys := b.scratch[:0]
	for _, i := range idx {
		keys = append(keys, uint64(uint32(b.key(i, d)+1))<<32|uint64(uint32(i)))
	}
	slices.Sort(keys)
	for n, k := range keys {
		idx[n] = int32(uint32(k))
	}
	b.scratch = keys
	var kids []*CallNode
	ids := map[*CallNode]int32{}
	var other sums
	merged := 0
	var wg sync.WaitGroup
	for i := 0; i < len(idx); {
		k := b.key(idx[i], d)
		j := i
		var s sums
		for ; j < len(idx) && b.key(idx[j], d) == k; j++ {
			s.add(&b.t.recs[idx[j]])
		}
		run := idx[i:j]
		i = j
		switch {
		case k < 0:
			self[0] += s.total[0]
			self[1] += s.total[1]
		case b.narrow(&s):
			for _, bv := range s.split {
				for side, v := range bv.v {
					if v != 0 {
						other.credit(Side(side), bv.b, v)
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
			nb.scratch = nil
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
		o := other.node(OtherName)
		o.Self, o.Other = o.Total, merged
		kids = append(kids, o)
	}
	return kids
}
