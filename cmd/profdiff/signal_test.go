package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/profdiff/profdiff/profile/capture"
	"github.com/profdiff/profdiff/profile/synth"
)

// Cancelling the context (what SIGINT does in main) stops a long load
// promptly, and the run ends with an interrupted error and exit status 130
// (SIGINT's, the signal being unknown here), not with success.
func TestInterruptStopsLoad(t *testing.T) {
	var once sync.Once
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(started) })
		w.Write([]byte("ok"))
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"load", "-c", "2", "-d", "10m", "--warmup", "0s", srv.URL + "/"}, strings.NewReader(""), &out, &stderr)
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("load ended before any request: %v\n%s", err, stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("no request reached the server")
	}
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("load did not stop within 30s of the cancel")
	}
	if !errors.Is(err, errInterrupted) {
		t.Fatalf("err = %v, want an interrupted error", err)
	}
	t.Logf("stderr: %s; err: %v", stderr.String(), err)
	var msg bytes.Buffer
	if code := exitCode(err, &msg); code != exitInterrupted || !strings.HasPrefix(msg.String(), "profdiff: interrupted") {
		t.Errorf("exit %d, message %q", code, msg.String())
	}
}

// A command that returns nil over an ended context still reports the
// interruption.
func TestInterruptedNeverSucceeds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, stderr bytes.Buffer
	err := run(ctx, []string{"rules"}, strings.NewReader(""), &out, &stderr)
	if !errors.Is(err, errInterrupted) || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("err = %v", err)
	}
	if err := run(ctx, []string{"help"}, nil, &out, &stderr); !errors.Is(err, errInterrupted) {
		t.Errorf("help: err = %v", err)
	}
	if err := run(ctx, []string{"diff", "--help"}, nil, &out, &stderr); err != errHelp {
		t.Errorf("diff --help: err = %v", err)
	}
}

// startProfdiff starts profdiff (this test binary re-executed as main
// runs it, signals included: see docsExecEnv) in dir with args; stderr
// collects what it says.
func startProfdiff(t *testing.T, dir string, stderr *bytes.Buffer, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), docsExecEnv+"=1")
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd
}

// waitExit waits for cmd to exit and returns its exit status. What the
// process did is the verdict, not how long it took on a machine that may
// be busy: it waits until shortly before the test binary's own -timeout
// (10 minutes without one), and only then kills it and fails.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	limit := 10 * time.Minute
	if d, ok := t.Deadline(); ok {
		limit = time.Until(d) * 9 / 10
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-timer.C:
		cmd.Process.Kill()
		<-done
		t.Fatalf("profdiff %s was still running after %v (the test binary's -timeout is near); killed", strings.Join(cmd.Args[1:], " "), limit.Round(time.Second))
	}
	return -1
}

// stopSignals are the signals that stop profdiff, with the exit status
// each gives.
var stopSignals = []struct {
	sig    syscall.Signal
	name   string
	status int
}{{syscall.SIGINT, "SIGINT", 130}, {syscall.SIGTERM, "SIGTERM", 143}}

// stallingServer answers the goroutine snapshot and holds every windowed
// request until the client goes; started gets one value per request.
func stallingServer(t *testing.T, started chan<- string) *httptest.Server {
	goroutine := cannedProfile(t, "goroutine", map[string]int64{"main.f;main.main": 3})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case started <- r.URL.Path:
		default:
		}
		if r.URL.Path == "/debug/pprof/goroutine" {
			w.Write(goroutine)
			return
		}
		if r.URL.Query().Get("seconds") == "" {
			http.NotFound(w, r)
			return
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A real SIGINT or SIGTERM to a capture mid-window: it stops at once,
// says so in one line naming the incomplete folder, exits 130 or 143, and
// leaves a manifest marked interrupted and not complete (which a retry
// may replace).
func TestSignalDuringCapture(t *testing.T) {
	t.Parallel()
	for _, c := range stopSignals {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			started := make(chan string, 16)
			srv := stallingServer(t, started)
			dir := t.TempDir()
			var stderr bytes.Buffer
			cmd := startProfdiff(t, dir, &stderr, "capture", srv.URL, "--duration", "1h", "--profiles", "cpu,goroutine,trace", "--out", "cap")
			for range 2 { // cpu and trace; the snapshot waits half an hour
				select {
				case <-started:
				case <-time.After(30 * time.Second):
					t.Fatalf("no request reached the server: %s", stderr.String())
				}
			}
			cmd.Process.Signal(c.sig)
			if code := waitExit(t, cmd); code != c.status {
				t.Errorf("exit %d; want %d", code, c.status)
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			want := "profdiff: interrupted by " + c.name + ": capture folder cap is incomplete (cpu.pb.gz, goroutine.pb.gz, trace.out.gz missing)"
			if lines[len(lines)-1] != want || strings.Count(stderr.String(), "interrupted") != 1 || strings.Contains(stderr.String(), "error") {
				t.Errorf("stderr:\n%s\nwant it to end with the one line\n%s", stderr.String(), want)
			}
			m, err := capture.ReadManifest(filepath.Join(dir, "cap"))
			if err != nil || !m.Interrupted || m.Complete {
				t.Errorf("manifest %+v, %v", m, err)
			}
		})
	}
}

// SIGTERM stops a load run too, with one line and status 143.
func TestSignalDuringLoad(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case started <- r.URL.Path:
		default:
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	var stderr bytes.Buffer
	cmd := startProfdiff(t, t.TempDir(), &stderr, "load", "-c", "2", "-d", "1h", "--warmup", "0s", srv.URL+"/")
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatalf("no request reached the server: %s", stderr.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 143 {
		t.Errorf("exit %d; want 143", code)
	}
	if got := strings.TrimSpace(stderr.String()); strings.Count(got, "\n") != 0 || !strings.HasPrefix(got, "profdiff: interrupted by SIGTERM") {
		t.Errorf("stderr %q; want one line saying interrupted by SIGTERM", got)
	}
}

// stoppedFD, set in a re-executed test binary's environment, is the file
// descriptor on which it writes one line when its signal context ends:
// what a test waits for to know that profdiff has taken the signal.
const stoppedFD = "PROFDIFF_TEST_STOPPED_FD"

// announcedSignalContext is signalContext for a re-executed test binary,
// which says on the descriptor stoppedFD names (when set) that it ended.
func announcedSignalContext() context.Context {
	ctx := signalContext()
	if fd, err := strconv.Atoi(os.Getenv(stoppedFD)); err == nil {
		go func() {
			<-ctx.Done()
			f := os.NewFile(uintptr(fd), "stopped")
			f.Write([]byte("stopped\n"))
			f.Close()
		}()
	}
	return ctx
}

// One SIGTERM or SIGINT while diff writes its folded stacks stops the
// write: profdiff exits 143 or 130 at once with the one line saying the
// report is cut short, having written at most a pipe's buffer and a
// write in flight once it took the signal. The report is several
// megabytes, and profdiff writes it to a pipe that the test does not
// read from its first byte until profdiff has taken the signal, so the
// render cannot have finished before; without the stop, draining the
// pipe would take the whole report.
func TestSignalDuringRender(t *testing.T) {
	dir := t.TempDir()
	for side, name := range []string{"base.pb.gz", "new.pb.gz"} {
		cfg := synth.Config{Seed: 1, Stacks: 5000, MinDepth: 20, MaxDepth: 45, Functions: 2000, Side: synth.Side(side)}
		if err := synth.WriteFile(filepath.Join(dir, name), cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range stopSignals {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe, "diff", "--format", "folded", "base.pb.gz", "new.pb.gz")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), docsExecEnv+"=1", stoppedFD+"=3")
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stopped, announce, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.ExtraFiles = []*os.File{announce}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			announce.Close()
			t.Cleanup(func() { cmd.Process.Kill() })
			first := make([]byte, 1)
			if _, err := io.ReadFull(stdout, first); err != nil {
				t.Fatalf("no report byte: %v\n%s", err, stderr.String())
			}
			cmd.Process.Signal(c.sig)
			sent := time.Now()
			line, err := io.ReadAll(stopped)
			if string(line) != "stopped\n" {
				t.Fatalf("profdiff did not say it took the signal: %q, %v", line, err)
			}
			rest, err := io.Copy(io.Discard, stdout)
			if err != nil {
				t.Fatal(err)
			}
			code := waitExit(t, cmd)
			took := time.Since(sent)
			if code != c.status {
				t.Errorf("exit %d; want %d", code, c.status)
			}
			if want := "profdiff: interrupted by " + c.name + ": the report on standard output is cut short"; strings.TrimSpace(stderr.String()) != want {
				t.Errorf("stderr:\n%s\nwant the one line\n%s", stderr.String(), want)
			}
			const most = 1 << 20 // a pipe's buffer (64 KiB on Linux) and a write in flight, with room
			if rest > most {
				t.Errorf("%d bytes came after profdiff took the signal; want at most %d", rest, most)
			}
			if took > 5*time.Second {
				t.Errorf("profdiff took %v to exit after the signal; want at most 5s", took)
			}
			t.Logf("exit %d, %v and %d bytes after the signal", code, took, rest)
		})
	}
}

// A stopped load or analysis returns the bare cancellation or the signal
// itself: the one line names the signal once and says the run did not
// finish, not "context canceled" or the signal twice.
func TestInterruptedBareCancel(t *testing.T) {
	cause := &signalError{syscall.SIGTERM}
	for _, err := range []error{context.Canceled, cause, fmt.Errorf("walking: %w", cause)} {
		var msg bytes.Buffer
		code := exitCode(interrupted(cause, err), &msg)
		if want := "profdiff: interrupted by SIGTERM; the run did not finish\n"; code != 143 || msg.String() != want {
			t.Errorf("%v: exit %d, %q; want 143, %q", err, code, msg.String(), want)
		}
	}
}
