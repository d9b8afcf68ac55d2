package main

import "github.com/profdiff/profdiff/workloads/child"

// runChildIfAsked is profdiff's hidden child mode: when this process was
// started by child.Start (the environment variable PROFDIFF_CHILD holds
// the spec), it serves the workload, with GOMAXPROCS and CPU affinity set
// by the parent, on loopback ports, and exits without returning; otherwise
// it returns at once. main calls it before anything else, so no flag
// parsing or output of the CLI happens in a child. The table is
// child.Builtin(), the one workloads.Run starts children from; a new
// workload goes into that table.
func runChildIfAsked() { child.MaybeRun(child.Builtin()) }
