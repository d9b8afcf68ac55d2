// Command profdiff compares profiles by how programs wait: it loads pprof
// (CPU, fgprof wall-clock, mutex, block, goroutine), legacy pprof and folded
// stacks from files, stdin or live /debug/pprof URLs, classifies every sample
// into cpu, wait, lock-contention, gc, io and syscall, and reports bucket
// shares and per-method deltas as tables, Markdown, CSV or JSON.
//
// Usage:
//
//	profdiff diff [flags] BASE NEW
//	profdiff diff [flags] --base A1 [--base A2 ...] --new B1 [--new B2 ...]
//	profdiff top [flags] PROFILE [PROFILE ...]
//	profdiff rules [--format F] [--rules FILE]
//
// Exit status: 0 success, 1 a gate failed, 2 bad usage or bad input.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	runChildIfAsked() // hidden child mode (child.go): serve a workload and exit
	os.Exit(exitCode(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr), os.Stderr))
}

// Exit statuses.
const (
	exitOK       = 0
	exitGateFail = 1
	exitBad      = 2
)

// errGateFailed is returned when a gate check fails (exit 1). The report has
// already been written.
var errGateFailed = errors.New("gate failed")

// usageError is bad usage (exit 2); the message says what to change.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// exitCode maps run's error to the exit status and prints it.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errGateFailed):
		return exitGateFail
	}
	fmt.Fprintf(stderr, "profdiff: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, "Run 'profdiff help' for usage.")
	}
	return exitBad
}
