package diff

import "sort"

// CallNode is a node of the merged call tree of both sides (Options.
// CallTree): a method reached by one path of callers from the root, with
// the value of the samples whose stacks pass through it (Total, inclusive)
// and end in it (Self), per side, in the result's unit. Scheduler latency
// is in no node. Children are sorted by name.
type CallNode struct {
	Name     string      `json:"name"`
	Total    [2]float64  `json:"total"`
	Self     [2]float64  `json:"self"`
	Children []*CallNode `json:"children,omitempty"`
}

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
	children map[int32]*treeNode
}

func newCallTree() *CallTree { return &CallTree{root: treeNode{id: -1}} }

// add credits one bucketed sample along its stack, root first.
func (t *CallTree) add(s *Sample) {
	n := &t.root
	n.total[s.Side] += s.Value
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
		c.total[s.Side] += s.Value
		n = c
	}
	n.self[s.Side] += s.Value
}

// result copies the tree out with names, qualified as the method rows are
// (module of the preferred side, else of the other), children sorted by
// that name (ties, which only two ids of one display name can make, by
// id).
func (t *CallTree) result(a *Analyzer, prefer Side) *CallNode {
	name := func(id int32) string {
		m := a.methods[id]
		mod := m.module[prefer]
		if mod == "" {
			mod = m.module[1-prefer]
		}
		return a.qualify(m.name, mod)
	}
	var conv func(n *treeNode) *CallNode
	conv = func(n *treeNode) *CallNode {
		out := &CallNode{Name: "root", Total: n.total, Self: n.self}
		if n.id >= 0 {
			out.Name = name(n.id)
		}
		kids := make([]*CallNode, 0, len(n.children))
		ids := make(map[*CallNode]int32, len(n.children))
		for _, c := range n.children {
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
		if len(kids) > 0 {
			out.Children = kids
		}
		return out
	}
	return conv(&t.root)
}
