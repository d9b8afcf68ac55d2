package result

// Verdict is a comparison's plain-language conclusion (Result.Verdict):
// the principal change, the frames that lead it, the other large changes
// and the caveats that limit the comparison.
//
// The principal change is the bucket whose growth, in the result's
// measure (Analysis.Normalize: rate where both durations are known, value
// for delay profiles without them, else share), scores highest among the
// buckets whose change is not within sampling noise (BucketRow.Noisy).
// The score is Δ²/(base+new), a chi-square term: a bucket that tripled
// outranks one that doubled from a larger base by a little more, and a
// bucket that appears from nothing scores its whole new value. cpu counts
// as a bucket too; only growth is principal, so cpu shrinking because
// waits grew (a share shift) never is. In state profiles (wall, goroutine,
// trace) a wait growth, where idle goroutines and threads park, yields to
// any other bucket's growth beyond noise (and is listed in Also): the
// wait is mostly the consequence. When nothing grew beyond noise the
// largest fall is principal (Grew false); when nothing changed beyond
// noise NoChange is set and Principal is nil.
//
// Leaders are, for the principal bucket, the deciding frames
// (Sample.Decider) and the callers (Sample.Caller) whose value in that
// bucket changed most in the same direction, by at least a tenth of the
// bucket's Change, VerdictLeaders of each (a caller that is also a listed
// decider is not repeated).
// Also lists every other bucket that changed beyond noise in the same
// direction by a score of at least a quarter of the principal's, or by
// more Change. JSON field names are stable.
type Verdict struct {
	// Summary is the verdict in words, the sentences of the paragraph a
	// report opens with, as plain text. The engine computes and leaves it
	// empty: package diff/present words the verdict, and the json format
	// fills this field from that paragraph as laid out (see
	// report.Summarized), so the data and the text say the same.
	Summary  string    `json:"summary"`
	NoChange bool      `json:"no_change,omitempty"`
	Measure  Normalize `json:"measure"`
	// Grew says the principal change is growth (false: a fall, when no
	// bucket grew beyond noise).
	Grew      bool            `json:"grew,omitempty"`
	Principal *VerdictChange  `json:"principal,omitempty"`
	Leaders   []VerdictFrame  `json:"leaders,omitempty"`
	Also      []VerdictChange `json:"also,omitempty"`
	// Substitution, when set, is a group of waits that replaced another
	// of nearly equal size while the total wait held (FindSubstitution).
	Substitution *Substitution `json:"substitution,omitempty"`
	Caveats      []Caveat      `json:"caveats,omitempty"`
}

// VerdictSize is how large a change is: shares (fractions 0..1) Base,
// New and Delta, Change in the verdict's measure and Note its ratio there
// ("18x", "doubled", "new"; see units.RatioNote), with the raw values and rates.
type VerdictSize struct {
	Base   float64 `json:"base"`
	New    float64 `json:"new"`
	Delta  float64 `json:"delta"`
	Change float64 `json:"change"`
	Note   string  `json:"note,omitempty"`
	Values
}

// VerdictChange is one bucket's change. Leaders, in Verdict.Also alone,
// are its leading decider and caller.
type VerdictChange struct {
	Bucket Bucket `json:"bucket"`
	VerdictSize
	Leaders []VerdictFrame `json:"leaders,omitempty"`
}

// VerdictFrame is a frame leading a change: Role "decider" (the frame
// that decided the bucket) or "caller" (the program's own code behind it,
// see ByCaller), and its value in that bucket (shares of each side's
// total).
type VerdictFrame struct {
	Name string `json:"name"`
	Role string `json:"role"`
	VerdictSize
}

// Caveat is something that limits the comparison: a stable short Code and
// a short Text for people.
type Caveat struct {
	Code string `json:"code"`
	Text string `json:"text"`
}

// Caveat codes.
const (
	CaveatSharesOnly    = "shares-only"      // a side's duration is unknown: no rates
	CaveatKindUnknown   = "kind-unknown"     // the profiles do not say what they measure
	CaveatKindsDiffer   = "kinds-differ"     // base and new are different kinds
	CaveatMixedKinds    = "mixed-kinds"      // a side mixes kinds
	CaveatTypesDiffer   = "types-differ"     // folded stacks compared with another sample type
	CaveatEmptySide     = "empty-side"       // a side has no value
	CaveatFewSamples    = "few-samples"      // a side has fewer than LowSamples samples
	CaveatSamplesDiffer = "samples-differ"   // one side has RecordsRatio times the other's samples
	CaveatProducers     = "producers-differ" // different tools wrote the sides
	CaveatHeap          = "heap"             // buckets of a heap profile are not time
	CaveatUnknown       = "native-unknown"   // a side has UnknownShare or more native-or-blocked time nothing places
)

// VerdictLeaders is how many deciders and callers a verdict names.
const VerdictLeaders = 3
