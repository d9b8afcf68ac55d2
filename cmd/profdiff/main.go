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
//	profdiff series [flags] NAME=SRC...       a series of steps: the step where each change appeared
//	profdiff wait [flags] PROFILE...          who made it wait: lock holders beside waiters, wake-ups, critical paths
//	profdiff wait [flags] --base A --new B    the same, compared
//	profdiff symbolize [flags] PROFILE -o OUT name address-only frames (--symbols FILE|DIR), write pprof
//	profdiff rules [--format F] [--rules F]   print the classification rules
//	profdiff formats [--format F]             the input formats: how to record each, its kinds, what it cannot tell
//	profdiff demo                             run the built-in JSON server with and without a global lock, diff them
//	profdiff workload json [flags]            run the built-in JSON server at several core counts: scaling table + captures
//	profdiff workload wasm [flags]            run the Wasm plugin host: keep-resident sweep, loop vs concurrent load
//	profdiff load [flags] URL                 closed-loop HTTP load, like wrk: requests/s, latency, errors
//	profdiff sources SERVER                   list a Pyroscope or Parca server's profile types and labels
//	profdiff capture URL --out DIR            pull cpu, wall, mutex, block, goroutine and trace from a live server
//	profdiff version                          the version and VCS revision it was built from (also --version)
//	profdiff help [COMMAND]                   this text, or a command's flags (also COMMAND --help)
//
// Every command that reads profiles (diff, top, gate, demo) takes the same
// sources: a file, "-" for standard input (once), an http(s) URL, a
// Pyroscope or Parca query (pyroscope+http://..., parca+http://...), a quoted
// glob ('runs/*.pb.gz', expanded in sorted order; a file of that very
// name is read as itself), or a capture folder
// written by capture, demo or workload, which stands for its profile of
// --kind's kind (default wall when every folder has one, else cpu). A glob
// that matches several capture folders is an error, except in gate, where
// each folder is one run.
//
// SIGINT or SIGTERM stops the command that is running (load generation,
// workloads, captures, URL fetches, and diff's, top's and gate's
// loading, analysis and rendering, within a second), which marks a
// capture folder it was writing incomplete; profdiff then prints one
// line, "profdiff: interrupted by SIGINT: ..." naming that folder, or
// saying that the report on standard output is cut short, and exits
// with status 130 (SIGINT) or 143 (SIGTERM), as a shell reports a
// command a signal ended. A second signal exits at once.
//
// Exit status: 0 success, 1 a gate failed, 2 bad usage or bad input (and
// any other trouble: an output that cannot be written, standard output
// closed early), 130 interrupted by SIGINT, 143 by SIGTERM; nothing else.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	runChildIfAsked() // hidden child mode (child.go): serve a workload and exit
	ctx := signalContext()
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr), os.Stderr))
}

// signalContext is a context that ends on the first SIGINT or SIGTERM,
// its cause a *signalError naming the signal. Then the signals' default
// action comes back, so a second one ends the process at once, even while
// a command is still stopping. Nothing is printed then: the command's
// error, when it has stopped, is the one line that says what happened.
//
// SIGPIPE is caught and dropped, so that a write to a closed standard
// output (profdiff ... | head) fails with EPIPE and the run ends with exit
// status 2 and a line saying so, instead of the process being killed by
// the signal (status 141, outside the exit-status contract). Caught, not
// ignored: an ignored signal would stay ignored in the programs profdiff
// starts (perf, the workload child).
func signalContext() context.Context {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-ch
		signal.Stop(ch)
		cancel(&signalError{sig})
	}()
	return ctx
}

// signalError is the cause of a context a signal ended.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string { return "interrupted by " + e.name() }

// name is the signal's name as the shell spells it: SIGINT, SIGTERM.
func (e *signalError) name() string {
	switch e.sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return e.sig.String()
}

// status is the exit status of a process the signal ended: 128 + its
// number (130 for SIGINT, 143 for SIGTERM).
func (e *signalError) status() int {
	if s, ok := e.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitInterrupted
}

// Exit statuses.
const (
	exitOK       = 0
	exitGateFail = 1
	exitBad      = 2
	// exitInterrupted is an interrupted run's status when no signal is
	// known (a cancelled context in tests): SIGINT's, 128 + 2.
	exitInterrupted = 130
)

// errGateFailed is returned when a gate check fails (exit 1). The report has
// already been written.
var errGateFailed = errors.New("gate failed")

// errInterrupted is wrapped by run's error when its context ended (exit
// 130 or 143).
var errInterrupted = errors.New("interrupted")

// interrupted is the error of a run whose context ended, cause being the
// context's cause (a *signalError in main): err, said to be an interrupted
// run's, with the signal. An error that already comes from the
// cancellation (it wraps context.Canceled, as workloads' and capture's do,
// naming the incomplete capture folder) keeps its own words; one that is
// only the cancellation (context.Canceled, or the cause itself, as a
// stopped load or analysis returns) says nothing more than the signal.
func interrupted(cause, err error) error {
	if errors.Is(err, errInterrupted) {
		return err
	}
	if err == context.Canceled || cause != nil && errors.Is(err, cause) {
		err = nil
	}
	ie := &interruptError{err: err}
	errors.As(cause, &ie.sig)
	return ie
}

// interruptError is an interrupted run's error, marked as errInterrupted:
// "interrupted by SIGINT: " and what the command said.
type interruptError struct {
	err error        // the command's, or nil
	sig *signalError // nil when no signal is known
}

func (e *interruptError) Error() string {
	head := "interrupted"
	if e.sig != nil {
		head += " by " + e.sig.name()
	}
	if e.err == nil {
		return head + "; the run did not finish"
	}
	msg := e.err.Error()
	if rest, ok := strings.CutPrefix(msg, "interrupted"); ok && (errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) {
		return head + rest // the cancellation's own words
	}
	return head + ": " + msg
}

func (e *interruptError) Unwrap() []error {
	errs := []error{errInterrupted}
	if e.err != nil {
		errs = append(errs, e.err)
	}
	if e.sig != nil {
		errs = append(errs, e.sig)
	}
	return errs
}

// status is the run's exit status: the signal's, else exitInterrupted.
func (e *interruptError) status() int {
	if e.sig != nil {
		return e.sig.status()
	}
	return exitInterrupted
}

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
		say(stderr, "%v", err)
		var ie *interruptError
		if errors.As(err, &ie) {
			return ie.status()
		}
		return exitInterrupted
	case errors.Is(err, errGateFailed):
		return exitGateFail
	}
	say(stderr, "%v", err)
	var ue *usageError
	switch {
	case errors.As(err, &ue) && ue.cmd != "":
		fmt.Fprintf(stderr, "Run 'profdiff %s --help' for usage.\n", ue.cmd)
	case ue != nil:
		fmt.Fprintln(stderr, "Run 'profdiff --help' for usage.")
	}
	return exitBad
}
