package diff

import "sort"

// CallNode is a node of the merged call tree of both sides (Options.
// CallTree): a method reached by one path of callers from the root, with
// the value of the samples whose stacks pass through it (Total, inclusive)
// and end in it (Self), per side, in the result's unit. Scheduler latency
// is in no node. Children are sorted by name, an "other" node last.
//
// Bucket is the bucket holding most of the node's inclusive value (both
// sides together); Buckets, only when the node's samples span more than
// one bucket, splits Total by bucket. A node whose Other is set is not a
// method: it holds Other sibling subtrees too narrow to draw (see
// Options.TreeMin), merged; its Self is its Total.
type CallNode struct {
	Name     string                `json:"name"`
	Total    [2]float64            `json:"total"`
	Self     [2]float64            `json:"self"`
	Bucket   Bucket                `json:"bucket"`
	Buckets  map[Bucket][2]float64 `json:"buckets,omitempty"`
	Other    int                   `json:"other,omitempty"`
	Children []*CallNode           `json:"children,omitempty"`
}

// OtherName is the name of a node that merges subtrees too narrow to draw.
const OtherName = "other"

// CallTree builds the merged call tree from the sample stream, keyed by
// method ids so that a name is stored once; memory is bounded by the
// number of distinct paths, not samples.
type CallTree struct {
	root treeNode
}

type treeNode struct {
	id       int32
	total    [2]float64
	self     [2]float64
	split    []bucketValue // inclusive value by bucket, in first-seen order
	children map[int32]*treeNode
}

// bucketValue is a node's inclusive value in one bucket.
type bucketValue struct {
	b Bucket
	v [2]float64
}

func newCallTree() *CallTree { return &CallTree{root: treeNode{id: -1}} }

// credit adds v of side to the node's total and its bucket b.
func (n *treeNode) credit(side Side, b Bucket, v float64) {
	n.total[side] += v
	for i := range n.split {
		if n.split[i].b == b {
			n.split[i].v[side] += v
			return
		}
	}
	bv := bucketValue{b: b}
	bv.v[side] = v
	n.split = append(n.split, bv)
}

// add credits one bucketed sample along its stack, root first.
func (t *CallTree) add(s *Sample) {
	n := &t.root
	n.credit(s.Side, s.Bucket, s.Value)
	for i := len(s.Stack) - 1; i >= 0; i-- {
		id := s.Stack[i]
		c := n.children[id]
		if c == nil {
			if n.children == nil {
				n.children = map[int32]*treeNode{}
			}
			c = &treeNode{id: id}
			n.children[id] = c
		}
		c.credit(s.Side, s.Bucket, s.Value)
		n = c
	}
	n.self[s.Side] += s.Value
}

// result copies the tree out with names, qualified as the method rows are
// (module of the preferred side, else of the other), children sorted by
// that name (ties, which only two ids of one display name can make, by
// id). A child narrower than min of the root on both sides (a fraction of
// each side's total) is merged with its narrow siblings into one "other"
// node, and its subtree is not copied: the tree handed out is bounded by
// 1/min nodes per level.
func (t *CallTree) result(a *Analyzer, prefer Side, min float64) *CallNode {
	name := func(id int32) string {
		m := a.methods[id]
		mod := m.module[prefer]
		if mod == "" {
			mod = m.module[1-prefer]
		}
		return a.qualify(m.name, mod)
	}
	root := t.root.total
	narrow := func(n *treeNode) bool {
		if min <= 0 {
			return false
		}
		for s := range root {
			if root[s] > 0 && n.total[s] >= min*root[s] {
				return false
			}
		}
		return true
	}
	var conv func(n *treeNode) *CallNode
	conv = func(n *treeNode) *CallNode {
		out := &CallNode{Name: "root", Total: n.total, Self: n.self}
		if n.id >= 0 {
			out.Name = name(n.id)
		}
		out.setBuckets(n.split)
		kids := make([]*CallNode, 0, len(n.children))
		ids := make(map[*CallNode]int32, len(n.children))
		var other *treeNode
		var merged int
		for _, c := range n.children {
			if narrow(c) {
				if other == nil {
					other = &treeNode{id: -1}
				}
				for _, bv := range c.split {
					for s := range bv.v {
						if bv.v[s] != 0 {
							other.credit(Side(s), bv.b, bv.v[s])
						}
					}
				}
				merged++
				continue
			}
			k := conv(c)
			kids = append(kids, k)
			ids[k] = c.id
		}
		sort.Slice(kids, func(i, j int) bool {
			if kids[i].Name != kids[j].Name {
				return kids[i].Name < kids[j].Name
			}
			return ids[kids[i]] < ids[kids[j]]
		})
		if other != nil {
			o := &CallNode{Name: OtherName, Total: other.total, Self: other.total, Other: merged}
			o.setBuckets(other.split)
			kids = append(kids, o)
		}
		if len(kids) > 0 {
			out.Children = kids
		}
		return out
	}
	return conv(&t.root)
}

// setBuckets sets the node's dominant bucket and, when it spans several,
// its split.
func (c *CallNode) setBuckets(split []bucketValue) {
	best := -1.0
	for _, bv := range split {
		if v := bv.v[0] + bv.v[1]; v > best || v == best && bv.b < c.Bucket {
			best, c.Bucket = v, bv.b
		}
	}
	if len(split) > 1 {
		c.Buckets = make(map[Bucket][2]float64, len(split))
		for _, bv := range split {
			c.Buckets[bv.b] = bv.v
		}
	}
}
