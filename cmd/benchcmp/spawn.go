package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// spawnEnv selects benchcmp's hidden spawn mode: benchcmp, re-executed,
// runs the command in its arguments, waits for it, and writes the
// command's wall time, CPU time, peak RSS and exit status to the file
// named by the variable's value.
//
// Every timed command goes through it because a child's ru_maxrss starts
// at its parent's peak RSS: Go starts a child with vfork semantics
// (CLONE_VM), and at exec Linux carries the shared address space's
// high-water mark over to the child. Started from benchcmp itself, which
// generates and parses the profiles (hundreds of MB at 1M stacks), every
// command would be charged benchcmp's peak; started from this small
// process it is charged only that process's few MB.
const spawnEnv = "BENCHCMP_SPAWN"

// spawnTimeoutEnv is the spawned command's time limit, in nanoseconds.
const spawnTimeoutEnv = "BENCHCMP_SPAWN_TIMEOUT"

// spawned is what spawn mode reports about the command it ran.
type spawned struct {
	wall, cpu time.Duration
	maxRSS    int64
	exit      int // exit status; -1 when killed by a signal or the time limit
}

// spawnMain is the spawn mode's main: it runs args with this process's
// standard files and environment (less spawnEnv) and writes the report to
// resultFile. Its exit status is 0 when it could run the command,
// whatever the command's own status.
func spawnMain(resultFile string, args []string, stderr io.Writer) int {
	os.Unsetenv(spawnEnv)
	timeout, _ := strconv.ParseInt(os.Getenv(spawnTimeoutEnv), 10, 64)
	os.Unsetenv(spawnTimeoutEnv)
	if len(args) == 0 {
		fmt.Fprintln(stderr, "benchcmp spawn: no command")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "benchcmp spawn:", err)
		return 2
	}
	if timeout > 0 {
		timer := time.AfterFunc(time.Duration(timeout), func() { cmd.Process.Kill() })
		defer timer.Stop()
	}
	err := cmd.Wait()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(stderr, "benchcmp spawn:", err)
		return 2
	}
	ps := cmd.ProcessState
	s := spawned{wall: wall, cpu: ps.UserTime() + ps.SystemTime(), maxRSS: peakRSS(ps), exit: ps.ExitCode()}
	line := fmt.Sprintf("%d %d %d %d\n", s.wall, s.cpu, s.maxRSS, s.exit)
	if err := os.WriteFile(resultFile, []byte(line), 0o644); err != nil {
		fmt.Fprintln(stderr, "benchcmp spawn:", err)
		return 2
	}
	return 0
}

// readSpawned parses spawn mode's report.
func readSpawned(name string) (spawned, error) {
	var s spawned
	data, err := os.ReadFile(name)
	if err != nil {
		return s, err
	}
	f := strings.Fields(string(data))
	if len(f) != 4 {
		return s, fmt.Errorf("spawn report %s: want 4 fields, got %q", name, data)
	}
	var n [4]int64
	for i := range f {
		if n[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return s, fmt.Errorf("spawn report %s: %v", name, err)
		}
	}
	return spawned{wall: time.Duration(n[0]), cpu: time.Duration(n[1]), maxRSS: n[2], exit: int(n[3])}, nil
}
