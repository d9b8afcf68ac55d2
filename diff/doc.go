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
// shares (fractions 0..1) and deltas derived from them, per side, bucket and
// method, with notes ("new", "18x increase", "was in native") and warnings.
// # One stream, many consumers
//
// Analyzer.Add walks a profile once and turns each sample into a Sample:
// its value and count, bucket, scheduler-latency flag, method stack (leaf
// first), the frame that decided the bucket, and on demand the leaf and the
// program's own caller. The Analyzer's own tables consume it (per method,
// per bucket, and per profile as ProfileStats, from which the merged sides
// are summed), and so does any function registered with OnSample: the gate
// (package diff/gate) reads its per-profile observations and method checks
// from the same stream, and Options.CallTree builds a merged call tree of
// both sides for flame graphs. Diff and Top are pure and may be called
// again.
//
// The package computes; it never prints, exits or names command-line flags:
// package diff/render lays results out, and the command adds hints.
//
// The manual, with examples that a test runs, is diff/README.md beside this
// file; the gate is in package diff/gate.
package diff
