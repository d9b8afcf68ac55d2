//go:build race

package main

// raceEnabled: the race detector multiplies memory, so the tests that
// bound peak RSS do not assert it.
const raceEnabled = true
