// Command profdiff compares profiles by how programs wait: it loads pprof
// (CPU, fgprof wall-clock, mutex, block, goroutine), legacy pprof, folded
// stacks, Go execution traces, speedscope JSON, perf script text and .NET
// .nettrace files from files, stdin, live /debug/pprof URLs or capture
// folders, classifies every sample into cpu, wait, lock-contention, gc, io
// and syscall, and reports bucket shares and per-method deltas as tables,
// Markdown, CSV or JSON.
//
// Usage:
//
//	profdiff diff [flags] BASE NEW            compare two profiles
//	profdiff diff [flags] --base A --new B    several profiles per side (repeat the flags)
//	profdiff top [flags] PROFILE...           one profile (or several, merged): buckets and top methods
//	profdiff gate [flags] --base A --new B    CI gate: exit 1 when lock contention (or wait, gc...) grew significantly
//	profdiff rules [--format F] [--rules F]   print the classification rules
//	profdiff demo                             run the built-in JSON server with and without a global lock, diff them
//	profdiff workload json [flags]            run the built-in JSON server at several core counts: scaling table + captures
//	profdiff workload wasm [flags]            run the Wasm plugin host: keep-resident sweep, loop vs concurrent load
//	profdiff load [flags] URL                 closed-loop HTTP load, like wrk: requests/s, latency, errors
//	profdiff capture URL --out DIR            pull cpu, wall, mutex, block, goroutine and trace from a live server
//	profdiff version                          the version and VCS revision it was built from (also --version)
//	profdiff help [COMMAND]                   this text, or a command's flags (also COMMAND --help)
//
// Every command that reads profiles (diff, top, gate, demo) takes the same
// sources: a file, "-" for standard input (once), an http(s) URL, a quoted
// glob ('runs/*.pb.gz', expanded in sorted order), or a capture folder
// written by capture, demo or workload, which stands for its profile of
// --kind's kind (default wall when every folder has one, else cpu). A glob
// that matches several capture folders is an error, except in gate, where
// each folder is one run.
//
// SIGINT or SIGTERM stops the command that is running (load generation,
// workloads, captures, URL fetches) and profdiff exits with status 2 and
// an "interrupted" error; a second signal exits at once.
//
// Exit status: 0 success, 1 a gate failed, 2 bad usage, bad input or
// interrupted.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	runChildIfAsked() // hidden child mode (child.go): serve a workload and exit
	ctx := signalContext(os.Stderr)
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr), os.Stderr))
}

// signalContext is a context that ends on the first SIGINT or SIGTERM.
// Then the signals' default action comes back, so a second one ends the
// process at once, even while a command is still stopping.
func signalContext(stderr io.Writer) context.Context {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
		fmt.Fprintln(stderr, "profdiff: interrupted, stopping (a second signal exits at once)")
	}()
	return ctx
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

// errInterrupted is wrapped by run's error when its context ended (exit 2).
var errInterrupted = errors.New("interrupted")

// interrupted is the error of a run whose context ended: err, said to be
// an interrupted run's. An error that already comes from the cancellation
// (it wraps context.Canceled, as workloads' and capture's do, naming the
// incomplete capture folder) keeps its own words.
func interrupted(err error) error {
	switch {
	case err == nil:
		return fmt.Errorf("%w; the run did not finish", errInterrupted)
	case errors.Is(err, errInterrupted):
		return err
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return &interruptError{err}
	}
	return fmt.Errorf("%w: %v", errInterrupted, err)
}

// interruptError is a cancellation's own error, marked as errInterrupted.
type interruptError struct{ err error }

func (e *interruptError) Error() string   { return e.err.Error() }
func (e *interruptError) Unwrap() []error { return []error{errInterrupted, e.err} }

// usageError is bad usage (exit 2); the message says what to change, and
// cmd is the command whose help to read ("" for profdiff's own).
type usageError struct{ msg, cmd string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }

// exitCode maps run's error to the exit status and prints it.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errInterrupted):
		fmt.Fprintf(stderr, "profdiff: %v\n", err)
		return exitBad
	case errors.Is(err, errGateFailed):
		return exitGateFail
	}
	fmt.Fprintf(stderr, "profdiff: %v\n", err)
	var ue *usageError
	switch {
	case errors.As(err, &ue) && ue.cmd != "":
		fmt.Fprintf(stderr, "Run 'profdiff %s --help' for usage.\n", ue.cmd)
	case ue != nil:
		fmt.Fprintln(stderr, "Run 'profdiff --help' for usage.")
	}
	return exitBad
}
