package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cancelling the context (what SIGINT does in main) stops a long load
// promptly, and the run ends with an interrupted error and exit status 2,
// not with success.
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
	if code := exitCode(err, &msg); code != exitBad || !strings.HasPrefix(msg.String(), "profdiff: interrupted") {
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
