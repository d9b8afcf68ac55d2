package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// result is the best of several runs of one command.
type result struct {
	wall   time.Duration // fastest run
	cpu    time.Duration // user+system of the fastest run
	maxRSS int64         // largest peak RSS over the runs, bytes (0: unknown)
}

// command is one subprocess to time.
type command struct {
	name string
	args []string
	out  string   // file for its standard output (default os.DevNull)
	env  []string // added to the environment
	ok   []int    // exit statuses that are not a failure besides 0 (gate's 1: a check failed)
}

func measure(runs int, timeout time.Duration, stderr io.Writer, name string, args ...string) (*result, error) {
	return measureCmd(command{name: name, args: args}, runs, timeout, stderr)
}

// measureTo is measure with the command's standard output written to the
// file out.
func measureTo(out string, runs int, timeout time.Duration, stderr io.Writer, name string, args ...string) (*result, error) {
	return measureCmd(command{name: name, args: args, out: out}, runs, timeout, stderr)
}

// measureCmd runs c runs times, each after a GC of this process so that
// its garbage does not compete, and keeps the fastest run's times and the
// largest peak RSS. Each run goes through spawn mode (see spawnEnv), so
// that its peak RSS is its own. A run that exits with a status outside 0
// and c.ok, or is killed after timeout, is an error carrying its stderr.
func measureCmd(c command, runs int, timeout time.Duration, stderr io.Writer) (*result, error) {
	rs, err := measureRounds([]command{c}, runs, timeout, stderr)
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// measureRounds is measureCmd for several commands at once, in rounds:
// each round runs every command once, in order, so that commands whose
// times are compared (profdiff and the decompression floor) meet the
// machine in the same minutes. On a shared machine whose speed drifts by
// a quarter from one minute to the next, timing one command's runs and
// then the other's made their ratio that drift's.
func measureRounds(cs []command, runs int, timeout time.Duration, stderr io.Writer) ([]*result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	rs := make([]*result, len(cs))
	for i := range rs {
		rs[i] = &result{}
	}
	for round := range runs {
		for i, c := range cs {
			s, err := runOnce(self, c, timeout)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(stderr, "  %s run %d/%d: %s wall, %s cpu, %s peak RSS\n", c.label(), round+1, runs, secs(s.wall), secs(s.cpu), mib(s.maxRSS))
			r := rs[i]
			if round == 0 || s.wall < r.wall {
				r.wall, r.cpu = s.wall, s.cpu
			}
			r.maxRSS = max(r.maxRSS, s.maxRSS)
		}
	}
	return rs, nil
}

// runOnce runs c once through spawn mode (benchcmp re-executed as self)
// and returns the command's report.
func runOnce(self string, c command, timeout time.Duration) (spawned, error) {
	freeMemory()
	out := c.out
	if out == "" {
		out = os.DevNull
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return spawned{}, err
	}
	defer f.Close()
	rf, err := os.CreateTemp("", "benchcmp-spawn-")
	if err != nil {
		return spawned{}, err
	}
	rf.Close()
	defer os.Remove(rf.Name())
	var errBuf bytes.Buffer
	cmd := exec.Command(self, append([]string{c.name}, c.args...)...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Env = append(cmd.Env, spawnEnv+"="+rf.Name(), fmt.Sprintf("%s=%d", spawnTimeoutEnv, timeout))
	cmd.Stdout, cmd.Stderr = f, &errBuf
	what := filepath.Base(c.name) + " " + strings.Join(c.args, " ")
	if err := cmd.Run(); err != nil {
		return spawned{}, fmt.Errorf("%s: %v\n%s", what, err, errBuf.String())
	}
	s, err := readSpawned(rf.Name())
	if err != nil {
		return s, err
	}
	if s.exit != 0 && !slices.Contains(c.ok, s.exit) {
		if s.exit < 0 {
			return s, fmt.Errorf("%s: killed after %s (limit -timeout %s)\n%s", what, secs(s.wall), timeout, errBuf.String())
		}
		return s, fmt.Errorf("%s: exit status %d\n%s", what, s.exit, errBuf.String())
	}
	return s, nil
}

// label names c in progress lines: its binary and, for benchcmp's own
// floor mode, the inflater.
func (c command) label() string {
	for _, e := range c.env {
		if v, ok := strings.CutPrefix(e, floorEnv+"="); ok {
			return "floor(" + v + ")"
		}
	}
	return filepath.Base(c.name)
}
