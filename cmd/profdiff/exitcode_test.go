package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The exit-status contract, as a real process reports it to the shell or
// CI: 0 success, 1 a gate failed, 2 bad usage, bad input or an output that
// cannot be written (standard output closed early included: not a death
// by SIGPIPE, 141), and 130 or 143 for SIGINT and SIGTERM (the signal
// tests: TestSignalDuringCapture, TestSignalDuringLoad,
// TestSignalDuringRender).
func TestExitStatusContract(t *testing.T) {
	missing := "no-such-profile.pb.gz"
	for _, c := range []struct {
		name   string
		args   []string
		status int
		stderr string // a part of what it says, for the non-zero ones
	}{
		{"success", []string{"diff", net10, net11}, 0, ""},
		{"gate passed", []string{"gate", net10, net10}, 0, ""},
		{"gate failed", []string{"gate", net10, net11}, 1, "gate failed: lock-contention grew"},
		{"usage: unknown flag", []string{"diff", "--no-such-flag", net10, net11}, 2, "--no-such-flag"},
		{"usage: unknown command", []string{"no-such-command"}, 2, "no-such-command"},
		{"usage: --junit to stdout", []string{"gate", "--junit", "-", net10, net11}, 2, "--junit wants a file"},
		{"bad input: missing file", []string{"diff", net10, missing}, 2, missing},
		{"bad input: gate", []string{"gate", missing, net11}, 2, missing},
		{"help", []string{"gate", "--help"}, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := startProfdiff(t, ".", &stderr, c.args...)
			if got := waitExit(t, cmd); got != c.status || !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("profdiff %s: exit %d, stderr %q; want %d saying %q", strings.Join(c.args, " "), got, stderr.String(), c.status, c.stderr)
			}
		})
	}

	// Standard output closed before profdiff writes (the reader of a pipe
	// gone, as after "| head -1"): exit 2 and one line saying so.
	for _, args := range [][]string{{"diff", net10, net11}, {"gate", net10, net11}, {"rules"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), docsExecEnv+"=1")
		cmd.Stdout, cmd.Stderr = w, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if got := waitExit(t, cmd); got != 2 || !strings.Contains(stderr.String(), "broken pipe") {
			t.Errorf("profdiff %s into a closed pipe: exit %d, stderr %q; want 2 saying broken pipe", strings.Join(args, " "), got, stderr.String())
		}
	}
}
