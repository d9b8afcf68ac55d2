//go:build race

package diff

// raceEnabled: the race detector's instrumentation takes most CPU samples,
// so TestGoProbesCPUProfile cannot judge bucket shares.
const raceEnabled = true
