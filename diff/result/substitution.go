package result

import (
	"sort"

	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/diff/units"
)

// Substitution says that one group of waiting methods replaced another
// of nearly equal size: what the program waits in changed while how much
// it waits did not (Verdict.Substitution, and a series' step changes).
//
// In are the methods whose share grew (or appeared), Out those whose
// share fell (or vanished), each the largest first and at most
// SubstitutionNames of them (InMore and OutMore count the rest). InShare
// and OutShare are the shares that moved (fractions 0..1: the sum of the
// growths, and of the falls). Bucket is set when every method of both
// groups is in that one bucket (nil otherwise); otherwise Buckets are the buckets whose
// share moved with them, with their notes ("4x", "1/3", "new"). SyncBase
// and SyncNew are the total wait/synchronization share (everything but
// cpu) on each side.
type Substitution struct {
	Bucket   *Bucket            `json:"bucket,omitempty"`
	In       []string           `json:"in"`
	InMore   int                `json:"in_more,omitempty"`
	Out      []string           `json:"out"`
	OutMore  int                `json:"out_more,omitempty"`
	InShare  float64            `json:"in_share"`
	OutShare float64            `json:"out_share"`
	SyncBase float64            `json:"sync_base"`
	SyncNew  float64            `json:"sync_new"`
	Buckets  []SubstitutionMove `json:"buckets,omitempty"`
}

// SubstitutionMove is a bucket's share on each side where a substitution
// moved it, and its ratio note (units.RatioNote).
type SubstitutionMove struct {
	Bucket Bucket  `json:"bucket"`
	Base   float64 `json:"base"`
	New    float64 `json:"new"`
	Note   string  `json:"note,omitempty"`
}

// The rules FindSubstitution applies, in shares (fractions 0..1).
const (
	// SubstitutionMin is the least share each group must move: below a
	// point, a swap of small rows is noise, not a change of character.
	SubstitutionMin = 0.01
	// SubstitutionBalance is the least ratio of the smaller group's move
	// to the larger's: "nearly equal size".
	SubstitutionBalance = 0.75
	// SubstitutionHold is the most the total wait may move, as a
	// fraction of the larger group's move, for it to count as held.
	SubstitutionHold = 0.25
	// SubstitutionNames is how many methods a group names.
	SubstitutionNames = 3
)

// FindSubstitution looks for a substitution between two sides from their
// bucket and method rows (shares of each side's total, as Result holds
// them) and returns it, or nil when there is none. Only time spent
// waiting can be substituted: it looks at rows whose bucket is not cpu,
// of state profiles (MeaningState: wall, goroutine, trace) and CPU
// profiles; rows marked Noisy are left out.
//
// A method counts in a group when its share moved by at least a tenth of
// the largest move among those rows, up for In, down for Out. It is a
// substitution when each group moved at least SubstitutionMin, the
// smaller move is at least SubstitutionBalance of the larger, and the
// total wait (the non-cpu buckets' shares summed) moved by at most
// SubstitutionHold of the larger move: the new waits took the old ones'
// place rather than adding to them. Both groups in one bucket make it a
// substitution within that bucket; otherwise the buckets that moved by
// at least a quarter of the smaller group's move are listed, largest
// move first.
func FindSubstitution(m Meaning, buckets []BucketRow, methods []MethodRow) *Substitution {
	if m != MeaningState && m != MeaningCPU {
		return nil
	}
	var rows []*MethodRow
	big := 0.0
	for i := range methods {
		r := &methods[i]
		if r.Bucket == rules.CPU || r.Noisy || r.Delta == 0 {
			continue
		}
		rows = append(rows, r)
		big = max(big, abs(r.Delta))
	}
	var in, out []*MethodRow
	var g, f float64
	for _, r := range rows {
		switch {
		case r.Delta >= big/10:
			in, g = append(in, r), g+r.Delta
		case -r.Delta >= big/10:
			out, f = append(out, r), f-r.Delta
		}
	}
	lo, hi := min(g, f), max(g, f)
	if len(in) == 0 || len(out) == 0 || lo < SubstitutionMin || lo < SubstitutionBalance*hi {
		return nil
	}
	s := &Substitution{InShare: g, OutShare: f}
	for _, b := range buckets {
		if b.Bucket != rules.CPU {
			s.SyncBase += b.Base
			s.SyncNew += b.New
		}
	}
	if abs(s.SyncNew-s.SyncBase) > SubstitutionHold*hi {
		return nil
	}
	sort.SliceStable(in, func(i, j int) bool { return in[i].Delta > in[j].Delta })
	sort.SliceStable(out, func(i, j int) bool { return out[i].Delta < out[j].Delta })
	s.In, s.InMore = names(in)
	s.Out, s.OutMore = names(out)
	one, same := in[0].Bucket, true
	for _, r := range append(append([]*MethodRow(nil), in...), out...) {
		same = same && r.Bucket == one
	}
	if same {
		s.Bucket = &one
		return s
	}
	for _, b := range buckets {
		if b.Bucket != rules.CPU && !b.Noisy && abs(b.Delta) >= lo/4 {
			s.Buckets = append(s.Buckets, SubstitutionMove{Bucket: b.Bucket, Base: b.Base, New: b.New, Note: units.RatioNote(b.Base, b.New)})
		}
	}
	sort.SliceStable(s.Buckets, func(i, j int) bool {
		return abs(s.Buckets[i].New-s.Buckets[i].Base) > abs(s.Buckets[j].New-s.Buckets[j].Base)
	})
	return s
}

// names are the rows' names, at most SubstitutionNames, and how many more.
func names(rows []*MethodRow) ([]string, int) {
	n := min(len(rows), SubstitutionNames)
	out := make([]string, n)
	for i, r := range rows[:n] {
		out[i] = r.Name
	}
	return out, len(rows) - n
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
