//go:build unix

package profile

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A gzipped profile in a named pipe loads as from a file: the fast path
// for gzipped files (gunzipFile) leaves a pipe alone, without opening it,
// so the one writer's data reaches the one read that follows.
func TestLoadRawNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "cpu.pb.gz")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	data := encodeT(t, testCPUProfile(), true)
	wrote := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
		if err == nil {
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		wrote <- err
	}()
	type loaded struct {
		r   *Raw
		l   *Loaded
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		r, l, err := LoadRaw(context.Background(), fifo, Options{})
		done <- loaded{r, l, err}
	}()
	var got loaded
	select {
	case got = <-done:
	case <-time.After(time.Minute): // a deadlock guard, not a timing
		t.Fatal("LoadRaw of a named pipe did not return: its data went to another open")
	}
	r, l, err := got.r, got.l, got.err
	if err != nil {
		t.Fatalf("LoadRaw of a named pipe: %v", err)
	}
	if werr := <-wrote; werr != nil {
		t.Fatalf("the pipe's writer: %v", werr)
	}
	if r == nil && (l == nil || len(l.Profile.Sample) == 0) {
		t.Fatalf("nothing loaded: raw %v, loaded %v", r != nil, l != nil)
	}
	if r != nil {
		if l, err = r.Load(); err != nil || len(l.Profile.Sample) != len(testCPUProfile().Sample) {
			t.Fatalf("Load: %v", err)
		}
	}
}
