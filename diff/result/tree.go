package result

import "github.com/profdiff/profdiff/diff/report"

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

// Stacks are the stacks a call tree is built from, unmerged (see
// report.Stacks, whose model they are handed to as they are): a writer
// that needs every stack and no tree (the folded formats) reads these,
// which cost memory in the records the engine holds anyway, not a node
// a frame.
type Stacks = report.Stacks
