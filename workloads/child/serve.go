package child

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

// childLogPrefix starts every line the child logs itself (its workload's
// lines are the workload's own); Start's error for a child that exited
// early looks for it.
const childLogPrefix = "profdiff child "

// MaybeRun serves a workload from table and exits when this process was
// started by Start (the environment variable PROFDIFF_CHILD holds its
// spec); otherwise it returns at once. Call it first thing in main, and in
// TestMain of any test package that starts children, before flags are
// parsed, with the table the parent passes to Start.
func MaybeRun(table Table) {
	v := os.Getenv(envChild)
	if v == "" {
		return
	}
	os.Exit(serveChild(table, v, os.Stdin, os.Stdout, os.Stderr))
}

// serveChild is the child's whole life; it returns the exit status: 2 for
// a spec it cannot serve, 1 when a server failed, 0 after a requested
// stop. PROFDIFF_CHILD stays set, so that Start refuses to run in a
// child: a workload cannot start children of its own.
func serveChild(table Table, specJSON string, stdin io.Reader, stdout, stderr io.Writer) int {
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, childLogPrefix+"%d: "+format+"\n", append([]any{os.Getpid()}, a...)...)
	}
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		logf("bad %s: %v", envChild, err)
		return 2
	}
	var cpus []int
	if spec.Cores > 0 {
		var note string
		cpus, note = restrictCPUs(spec.Cores)
		if note != "" {
			logf("%s", note)
		}
	}
	runtime.SetMutexProfileFraction(spec.MutexFraction)
	runtime.SetBlockProfileRate(spec.BlockRate)

	serve, err := table.lookup(spec.Workload)
	if err != nil {
		logf("%v", err)
		return 2
	}
	h, err := serve(Params{Variant: spec.Variant, Args: spec.Args, Log: stderr})
	if err != nil {
		logf("%v", err)
		return 2
	}
	if c, ok := h.(io.Closer); ok {
		defer c.Close()
	}
	// Caught from before the ready line, which lets the parent Stop the
	// child at once, to the child's exit (see waitForStop).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
	srv, err := listen(h, debugVars(spec, cpus))
	if err != nil {
		logf("%v", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s %s %s gomaxprocs=%d cpus=%s\n",
		readyToken, srv.workURL, srv.debugURL, runtime.GOMAXPROCS(0), formatCPUList(cpus))
	code := 0
	if err := waitForStop(sigs, spec.WatchStdin, stdin, srv.errc); err != nil {
		logf("server failed: %v", err)
		code = 1
	}
	srv.shutdown()
	return code
}

// waitForStop blocks until SIGTERM or SIGINT arrive on sigs, EOF on
// stdin when watchStdin (the parent holds the write end: EOF means it
// closed it in Stop, or died), or a server's failure, which it returns.
//
// The signals are caught from before the child says it is ready until it
// exits. Stop sends SIGTERM and closes stdin: when the EOF is seen first,
// the signal can arrive during the shutdown, and a parent may Stop a
// child the moment it is ready. Either way a signal not caught would end
// the child at once, before its workload is closed and logs its summary
// (the wasm host's count of refused requests), while Stop takes a death
// by its own signal for a clean stop. A child whose shutdown hangs is
// ended by Stop's SIGKILL.
func waitForStop(sigs <-chan os.Signal, watchStdin bool, stdin io.Reader, errc <-chan error) error {
	eof := make(chan struct{})
	if watchStdin {
		go func() {
			io.Copy(io.Discard, stdin)
			close(eof)
		}()
	}
	select {
	case <-sigs:
	case <-eof:
	case err := <-errc:
		return err
	}
	return nil
}
