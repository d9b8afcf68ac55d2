// Package diff classifies the samples of profiles into buckets and compares
// two sides by them: the engine behind profdiff's diff, top and gate.
//
// A bucket says how a thread or goroutine spent a sample: cpu, wait,
// lock-contention, gc, io or syscall (the names are part of the interface).
// Each sample is classified once, by rule tables per runtime (Go, .NET, JVM,
// Rust, native) embedded from rules/*.rules and extended with files in the
// same format: reading the stack from the leaf toward the root, the nearest
// strong frame decides, weak frames decide only if no strong frame does,
// context frames last, and skip frames never. Facts a reader recorded in the
// profile's sample labels (package profile defines them: a Go trace's block
// reason, scheduler latency) decide before frame names do. Time the data
// cannot place, such as scheduler latency, is kept apart from the buckets.
//
// An Analyzer takes the loaded profiles of a base and a new side (several
// per side are merged), keeps only a compact interned index of them, and
// returns results that carry raw values in the profile's unit beside the
// shares (fractions 0..1), rates and deltas derived from them, per side,
// bucket and method, with notes ("new", "18x rate", "was in native") and
// warnings.
//
// The engine's stages are packages of their own: diff/rules (the bucket
// names, the rule tables per runtime and their matching), the
// classification (classify.go, a pure function of a sample), this
// package's Analyzer (resolution and aggregation), and diff/result (pure
// numbers: sides, buckets, methods, trees, peek rows, the verdict), which
// the Analyzer returns and a report is built from without the engine.
// Callers name those packages' types and constants directly (rules.Bucket,
// result.Result, result.Base).
//
// # Values, rates and measures
//
// Every row (bucket, method, scheduler latency, peek) carries both sides'
// raw value in the profile's unit (result.Values) and, where known, a rate: the
// value per second of the side's wall time, the sum of its profiles'
// DurationNanos, known only when every profile of the side has one (the
// loader drops a duration that cannot be true: profile.CheckTiming). Time
// units (nanoseconds, microseconds, milliseconds, seconds) are turned into
// seconds first, so the rate unit (result.Analysis.RateUnit) reads as:
//
//	cpu                  cores (CPU seconds per second)
//	wall, trace, unknown average goroutines in that state (Go producers:
//	                     pprof, fgprof, Go traces) or threads (perf script,
//	                     speedscope, .NET nettrace, folded stacks)
//	mutex, block         s/s: seconds of delay per second
//	counts               TYPE/s when a duration is known (samples/s,
//	                     contentions/s, cycles/s)
//
// Goroutine and heap profiles are snapshots with no duration: their rate
// is the mean per profile of the side, in goroutines, bytes or objects, so
// one snapshot compares with three. Rates are nil where unknown and
// RateUnit is empty when no side has one. result.Analysis.Meaning says what a
// bucket measures: state (wall, trace, goroutine, unknown: only these have
// a "total wait/synchronization"), cpu (CPU spent in locking, GC or I/O
// machinery), delay (mutex, block) or memory (heap).
//
// Options.Normalize picks the measure method and peek rows are sorted
// (|Δ| descending, then name) and noted by: share, rate or value; the zero
// value is rate when both sides' rates are known, else share, and
// result.Analysis.Normalize names the one used. A note compares the two sides in
// that measure and says which: "18x rate", "doubled share", "1/3 value",
// "halved rate"; "new" and "gone" when one side is zero; no note for
// changes under 1.75x. A note's direction is always the sign of the Δ in
// its measure. result.MethodRow.Delta stays the share delta.
//
// # Attribution and bucket splits
//
// Options.By "" attributes as result.DefaultBy says for the first profile's kind:
// result.ByCaller for wall, goroutine, trace, block and mutex profiles (their leaf
// is the scheduler or the lock's own code), result.ByFrame for cpu, heap and the
// rest; result.Analysis.ByDefault says so. A method row's Bucket is the bucket
// holding most of its value over both sides, BucketShare that bucket's
// fraction of it, and Buckets the whole split when it spans several.
//
// # Names
//
// A method is a frame name normalized (symbolize.Normalize), so build
// variants of one function (f and f.part.0, Rust's ::h<hash> instances)
// are one method. A row names it as the profiles did when they named it
// one way, else by the normalized name all its names share, with
// Variants counting them. A sample its profile recorded without a stack
// has the one pseudo-frame NoStack, so every split of the totals counts
// it. The call tree is of methods, for pictures that compare the sides,
// or with Options.TreeFrames of the frames as each profile named them,
// for folded stacks, which must give back the input's frames. With
// Options.TreeStacks the tree is not built at all: result.Result.Stacks hands
// the collected records over as they are (the ids the tree holds anyway,
// named once per id), so a writer of every stack costs an index a record
// rather than a node a frame.
// A built tree holds at most MaxTreeDepth (100,000) levels: a deeper
// stack is cut there, the value of its frames below counted as the self
// of the frame at the cut, and the result warns; the builder descends a
// level a frame, and a million-frame stack would overflow its goroutine
// stack (folded stacks, written from the records, are never cut).
//
// # Peek
//
// Options.Peek lists, for every method whose display name matches, its
// inclusive value per side (each sample counted once however often the
// frame recurs) and its callers (the frame right above it in each sample)
// and callees (right below), each edge with the value of the samples
// through it: PeekEdges of each, the rest counted in CallersOmitted and
// CalleesOmitted; at most Options.Top rows. It consumes the sample stream
// like the call tree does; memory is bounded by the distinct edges.
//
// # Noise
//
// Sampling noise is judged by sampled events, never by summed values: a
// sample's Count is its profile's count column (CountColumn: samples,
// contentions, goroutine; inuse_objects beside inuse_*, alloc_objects
// beside alloc_*; never a summed period such as perf's cycles), else 1
// per record. Sides under LowSamples events get a warning (diffs only:
// Top shows no deltas), rows within two standard errors are Noisy.
// Comparability warnings, one each, say what a difference between the
// sides means for the numbers: kinds, periods, durations, thread counts,
// sample counts (RecordsRatio), producers (formats) and, for mutex
// profiles, Go versions on either side of Go 1.22 (golang/go#61015).
//
// # One classification, many sums
//
// Analyzer.Add reads a profile's records once (package profile/pull: a
// pprof protobuf's records straight from its bytes, any other profile's
// through pull.FromProfile) and turns each into a Sample: its value and
// count, bucket, scheduler-latency flag, method stack (leaf first), the
// frame that decided the bucket, and on demand the leaf and the program's
// own caller. The classification is a pure function of the record and its
// profile's facts (kind, format, runtime): whatever walk meets a record,
// and however the records are split among parallel walks, it is decided
// the same. What reads the Samples only adds: the Analyzer's tables (per
// method, per bucket, and per profile as ProfileStats, from which the
// merged sides are summed), the verdict's tallies, Options.Peek's table
// and Options.CallTree's merged call tree of both sides for flame graphs
// are summed per walk and merged by addition. A function registered with
// OnSample reads the Samples in order, serially: the gate (package
// diff/gate) reads its per-profile observations and method checks so.
// Diff and Top are pure and may be called again.
//
// The package computes; it never prints, exits, formats a number or names
// command-line flags: package diff/present turns results into reports
// (package diff/report), package diff/render lays them out, and the command
// adds hints. Units (which are time, how amounts and ratios read) are
// package diff/units, which the engine and the layout share.
//
// The manual, with examples that a test runs, is diff/README.md beside this
// file; the gate is in package diff/gate.
package diff
