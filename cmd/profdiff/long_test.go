package main

import "os"

// longTests says whether the exhaustive variants run: more profiles, more
// cuts, longer sweeps. PROFDIFF_TEST_LONG=1 turns them on (.ci/run does,
// in its slow set); the default run takes a representative subset.
func longTests() bool { return os.Getenv("PROFDIFF_TEST_LONG") != "" }
