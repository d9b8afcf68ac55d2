package workloads

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/workloads/child"
	"github.com/profdiff/profdiff/workloads/loadgen"
)

// ChildError is the error of a run whose workload server failed it: the
// child exited (or was killed) before the run was over, stopped answering
// (its debug port left a probe unanswered for RunConfig.HangTimeout), or
// answered no request in the measured window. Run has stopped the load and
// reaped the child. It never unwraps to a context error: it is no
// interruption.
type ChildError struct {
	Workload, Variant string
	Cores             int
	Pid               int
	// Reason is what happened, in a few words: "child exited (status 2)",
	// "child killed by signal 9 (killed)", "child stopped answering (...)",
	// "server answered no request in the 1s window". A sweep row shows it
	// as "failed: " + Reason.
	Reason string
	// Dir is the run's capture folder. Captured says it was written: with
	// Complete, every profile and the load report are there; otherwise its
	// manifest is marked interrupted and Missing names what is not.
	Dir      string
	Captured bool
	Complete bool
	Missing  []string
	// Exit is the child's exit when it exited (nil when it stopped
	// answering); it holds the end of its standard error.
	Exit *child.ExitError
}

func (e *ChildError) Error() string {
	var b strings.Builder
	b.WriteString(e.Workload + " server (")
	if e.Variant != "" {
		b.WriteString("variant " + e.Variant + ", ")
	}
	fmt.Fprintf(&b, "%d cores, pid %d): %s", e.Cores, e.Pid, e.Reason)
	switch {
	case !e.Captured:
		fmt.Fprintf(&b, "; nothing captured in %s", e.Dir)
	case e.Complete:
		fmt.Fprintf(&b, "; its profiles are in %s", e.Dir)
	case len(e.Missing) > 0:
		fmt.Fprintf(&b, "; capture folder %s is incomplete (%s missing)", e.Dir, strings.Join(e.Missing, ", "))
	default:
		fmt.Fprintf(&b, "; capture folder %s is incomplete", e.Dir)
	}
	if e.Exit != nil && e.Exit.Stderr != "" {
		lines := strings.Split(e.Exit.Stderr, "\n")
		fmt.Fprintf(&b, "; its stderr ends: %s", strings.TrimSpace(lines[len(lines)-1]))
	}
	return b.String()
}

// Unwrap is the child's exit, when it exited.
func (e *ChildError) Unwrap() error {
	if e.Exit == nil {
		return nil
	}
	return e.Exit
}

// Failed is the result of a run that failed with err, for a sweep that
// goes on to its next run: SweepRows shows it as a failed row.
func Failed(cfg RunConfig, err error) *Result {
	return &Result{Config: cfg, Failure: err}
}

// failureText is a failed row's text: a ChildError's Reason, or the error.
func failureText(err error) string {
	var ce *ChildError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}

func (r *run) childError(reason string) *ChildError {
	return &ChildError{Workload: r.cfg.Workload, Variant: r.cfg.Variant, Cores: r.cfg.Cores, Pid: r.proc.Pid, Reason: reason, Dir: r.cfg.Out}
}

func (r *run) exited(ee *child.ExitError) *ChildError {
	ce := r.childError("child " + ee.Reason())
	ce.Exit = ee
	return ce
}

// probeEvery is how often watch probes the child's debug port.
const probeEvery = time.Second

// watch cancels ctx with a *ChildError when the child exits or stops
// answering: its debug port leaves a probe unanswered for HangTimeout. It
// returns when ctx ends or the child has failed.
func (r *run) watch(ctx context.Context, fail context.CancelCauseFunc) {
	timeout := r.cfg.HangTimeout
	if timeout <= 0 {
		timeout = DefaultHangTimeout
	}
	tick := time.NewTicker(min(probeEvery, timeout))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.proc.Done():
			if ee := r.proc.Exited(); ee != nil {
				fail(r.exited(ee))
			}
			return
		case <-tick.C:
		}
		var v any
		err := doJSON(ctx, "GET", r.proc.DebugURL+"/debug/vars", timeout, &v)
		if err == nil || ctx.Err() != nil {
			continue
		}
		// A refused probe may be a child on its way out: give it a moment
		// to be reaped, and report its exit instead.
		t := time.NewTimer(time.Second)
		select {
		case <-r.proc.Done():
			t.Stop()
			continue
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		r.hung = true // read by Run once measure has waited for watch
		logf(r.cfg.Log, "%s %s: the server (pid %d) stopped answering: %v", r.cfg.Workload, r.cfg.Variant, r.proc.Pid, err)
		fail(r.childError(fmt.Sprintf("child stopped answering (no answer from its debug port within %v)", timeout)))
		return
	}
}

// failure is the child's failure that ended the run, if any: the cause
// mctx was cancelled with, or an exit seen within grace (a failed load or
// capture may be the child's exit, not reaped yet). An interruption (ctx
// ended) is no child failure.
func (r *run) failure(ctx, mctx context.Context, grace time.Duration) *ChildError {
	if ctx.Err() != nil {
		return nil
	}
	var ce *ChildError
	if errors.As(context.Cause(mctx), &ce) {
		return ce
	}
	select {
	case <-r.proc.Done():
	default:
		if grace <= 0 {
			return nil
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-r.proc.Done():
		case <-t.C:
			return nil
		}
	}
	if ee := r.proc.Exited(); ee != nil {
		return r.exited(ee)
	}
	return nil
}

// childFailed completes a child's failure with the state of the capture
// folder: the capture's manifest (nil when it never wrote one) is marked
// interrupted, with the reason among its errors.
func (r *run) childFailed(ce *ChildError, man *capture.Manifest, cerr error) *ChildError {
	logf(r.cfg.Log, "%s %s: %s", r.cfg.Workload, r.cfg.Variant, ce.Reason)
	if man == nil {
		return ce
	}
	ce.Captured = true
	var ie *capture.InterruptedError
	if errors.As(cerr, &ie) && len(ie.Missing) > 0 {
		ce.Missing = ie.Missing
	} else {
		ce.Missing = []string{"load report"}
	}
	man.Interrupted = true
	man.Errors = append(man.Errors, "server: "+ce.Reason)
	if err := capture.WriteManifest(r.cfg.Out, man); err != nil {
		logf(r.cfg.Log, "writing the manifest of %s: %v", r.cfg.Out, err)
	}
	return ce
}

// answered fails a run in which the server answered no request at all:
// every request timed out or was still waiting when the window closed. A
// server that refuses or resets connections is not this (the load report
// says so loudly), nor one that answers with errors.
func (r *run) answered(rep *loadgen.Report) error {
	responses := rep.OK
	for _, n := range rep.Non2xx {
		responses += n
	}
	if responses > 0 || rep.SocketErrors > rep.SocketErrorKinds[loadgen.KindTimeout] {
		return nil
	}
	ce := r.childError(fmt.Sprintf("server answered no request in the %ds window", r.cfg.Seconds))
	ce.Captured, ce.Complete = true, true
	logf(r.cfg.Log, "%s %s: %s", r.cfg.Workload, r.cfg.Variant, ce.Reason)
	return ce
}

// cause is ctx's error with its cause: the cause signal.NotifyContext
// gives names the signal ("interrupt signal received") and is
// context.Canceled too; another cause is joined to ctx.Err().
func cause(ctx context.Context) error {
	err, c := ctx.Err(), context.Cause(ctx)
	switch {
	case c == nil || c == err:
		return err
	case errors.Is(c, err):
		return c
	}
	return fmt.Errorf("%w (%w)", err, c)
}

// withCause adds ctx's cause to the message of err, an interruption, when
// it says more than ctx.Err(): "...: terminated signal received".
func withCause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && c != ctx.Err() {
		return fmt.Errorf("%w: %v", err, c)
	}
	return err
}
