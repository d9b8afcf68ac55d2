package result

// Series is a series of N named steps in order (builds, versions,
// settings), each one or more profiles, and for each bucket and method
// the steps where its value changed (package diff/series builds it;
// `profdiff series` is its command). Numbers only: renderers format them.
type Series struct {
	Analysis
	// Measure is what changes are judged in: NormalizeRate where every
	// profile's duration is known, else NormalizeShare.
	Measure Normalize `json:"measure"`
	// Summary is the verdict in words, as a diff's verdict summary: the
	// engine leaves it empty and the json format fills it from the
	// report's verdict (see report.Summarized).
	Summary string       `json:"summary"`
	Steps   []SeriesStep `json:"steps"`
	// Metric names the per-step number the user passed (requests/s), ""
	// without one; SeriesStep.Metric holds the values.
	Metric  string      `json:"metric,omitempty"`
	Buckets []SeriesRow `json:"buckets"`
	Methods []SeriesRow `json:"methods"`
	// Substitutions are the steps where a group of waits replaced
	// another of nearly equal size (FindSubstitution between the step
	// and the one before).
	Substitutions []SeriesSubstitution `json:"substitutions,omitempty"`
	Warnings      []string             `json:"-"`
}

// SeriesStep is one step: its profiles merged, and how its changes
// against the step before were judged (Test; none for the first step).
type SeriesStep struct {
	Name          string   `json:"name"`
	Sources       []string `json:"sources"`
	Runs          int      `json:"runs"`
	Total         float64  `json:"total"`
	Samples       int64    `json:"samples"`
	DurationNanos int64    `json:"duration_nanos,omitempty"`
	TotalRate     *float64 `json:"total_rate,omitempty"`
	Metric        *float64 `json:"metric,omitempty"`
	Test          Test     `json:"test,omitempty"`
}

// Test is how a step's changes were judged against the step before.
type Test string

const (
	// TestU: both steps have at least series.MinRuns profiles; a change
	// counts when it passes the size rule and a two-sided Mann–Whitney U
	// test of the per-profile values, Holm-adjusted, finds it at alpha.
	TestU Test = "u-test"
	// TestThreshold: a step has too few profiles for the test; a change
	// counts when it passes the stricter threshold rule alone.
	TestThreshold Test = "threshold"
)

// SeriesRow is a bucket's or a method's value at each step (Cells, one
// per step) and the changes between consecutive steps that count.
// Bucket is the row's bucket (a method's dominant one).
type SeriesRow struct {
	Name    string         `json:"name,omitempty"`
	Bucket  Bucket         `json:"bucket"`
	Cells   []SeriesCell   `json:"steps"`
	Changes []SeriesChange `json:"changes,omitempty"`
}

// SeriesCell is a row's merged value at one step: raw Value in the
// Analysis's Unit, Share of the step's total (0..1), Rate in its RateUnit
// (nil when a duration is unknown).
type SeriesCell struct {
	Value float64  `json:"value"`
	Share float64  `json:"share"`
	Rate  *float64 `json:"rate,omitempty"`
}

// SeriesChange is a change that counts, at step Step (its index in
// Series.Steps) against the step before: From and To in the series'
// measure, Note how it reads ("doubled", "new", "gone", "recovered",
// "+40%", "1/3"), and P the Holm-adjusted p-value where the step was
// tested (Test TestU). Without, in shares, is the bucket left out of the
// total the change was judged against (the one that moved most at that
// step; nil for that bucket's own rows and where rates are known).
type SeriesChange struct {
	Step    int      `json:"step"`
	Name    string   `json:"step_name"`
	From    float64  `json:"from"`
	To      float64  `json:"to"`
	Note    string   `json:"note"`
	P       *float64 `json:"p,omitempty"`
	Without *Bucket  `json:"without,omitempty"`
}

// SeriesSubstitution is a substitution at step Step against the step
// before.
type SeriesSubstitution struct {
	Step int    `json:"step"`
	Name string `json:"step_name"`
	Substitution
}
