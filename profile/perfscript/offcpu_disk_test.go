package perfscript_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
)

// recordDisk records `dd` writing a file with O_DIRECT and an fsync (block
// device writes, the thread in D) and returns perf script's text; it skips
// where the temporary directory is on no block device (tmpfs refuses
// O_DIRECT) or perf cannot record.
func recordDisk(t *testing.T) string {
	t.Helper()
	needPerf(t)
	dd, err := exec.LookPath("dd")
	if err != nil {
		t.Skip("dd is not installed")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "disk.data")
	var stdout, stderr bytes.Buffer
	if err := perfRecord(data, &stdout, &stderr, "-e", "sched:sched_switch", "-g", "--switch-events", "--",
		dd, "if=/dev/zero", "of="+filepath.Join(dir, "f"), "bs=64k", "count=64", "oflag=direct", "conv=fsync"); err != nil {
		t.Skipf("perf cannot record dd with O_DIRECT here (%v): %s", err, firstLine(stderr.String()))
	}
	return perfScript(t, data, "--show-switch-events")
}

// TestOffCPUBlockDevice records block-device writes: the kernel marks the
// threads it parks in io_schedule or io_schedule_timeout D, so their
// records carry the io fallback (a thread woken before it left the CPU
// switches out R: scheduler latency, left out here); and io_schedule itself is io whatever
// called it (the stack cut just above it, as when its caller has no rule).
func TestOffCPUBlockDevice(t *testing.T) {
	t.Parallel()
	text := recordDisk(t)
	l := loadText(t, text)
	rs := rules.Default()
	seen := 0
	for _, s := range l.Profile.Sample {
		var names []string
		at := -1
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if n := ln.Function.Name; at < 0 && (n == "io_schedule" || n == "io_schedule_timeout") {
					at = len(names)
				}
				names = append(names, ln.Function.Name)
			}
		}
		if at < 0 || s.Value[0] == 0 || len(s.Label[profile.LabelBucket]) > 0 {
			continue // not there, or preempted (R: woken before it left the CPU)
		}
		seen++
		if fb := s.Label[profile.LabelFallback]; len(fb) != 1 || fb[0] != "io" {
			t.Errorf("a switch-out in %s has fallback %v, want io (prev_state D): %s", names[at], fb, strings.Join(names, ";"))
		}
		if b, _ := diff.ClassifyStack(rs, names, l.Kind); b != rules.IO {
			t.Errorf("%s, want io: %s", b, strings.Join(names, ";"))
		}
		if b, dec := diff.ClassifyStack(rs, names[:at+1], l.Kind); b != rules.IO || dec != at {
			t.Errorf("the stack up to %s is %s (decided at %d), want io decided by it: %s", names[at], b, dec, strings.Join(names[:at+1], ";"))
		}
	}
	if seen == 0 {
		t.Skip("no switch-out in io_schedule was recorded (the writes never waited for the device)")
	}
	t.Logf("%d records of off-CPU time in io_schedule", seen)
}

// TestOffCPUVforkWait records posix_spawnp: glibc's vfork parks the
// parent in D (an uninterruptible completion wait, so its fallback is io)
// until the child execs, which the kernel completion rule makes wait.
func TestOffCPUVforkWait(t *testing.T) {
	t.Parallel()
	needPerf(t)
	bin := buildOnce(t, "gcc", "-O1", "-fno-omit-frame-pointer", filepath.Join("testdata", "spawn", "spawn.c"))
	data := filepath.Join(t.TempDir(), "spawn.data")
	var stdout, stderr bytes.Buffer
	if err := perfRecord(data, &stdout, &stderr, "-e", "sched:sched_switch", "-g", "--switch-events", "--", bin); err != nil {
		t.Skipf("perf cannot record here (%v): %s", err, firstLine(stderr.String()))
	}
	text := perfScript(t, data, "--show-switch-events")
	l := loadText(t, text)
	rs := rules.Default()
	seen := 0
	for _, s := range l.Profile.Sample {
		var names []string
		clone := false
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				names = append(names, ln.Function.Name)
				clone = clone || ln.Function.Name == "kernel_clone"
			}
		}
		if !clone || s.Value[0] == 0 || len(s.Label[profile.LabelBucket]) > 0 || !strings.Contains(strings.Join(names, ";"), "wait_for_completion") {
			continue
		}
		seen++
		if fb := s.Label[profile.LabelFallback]; len(fb) != 1 || fb[0] != "io" {
			t.Errorf("a vfork wait has fallback %v, want io (prev_state D)", fb)
		}
		if b, _ := diff.ClassifyStack(rs, names, l.Kind); b != rules.Wait {
			t.Errorf("%s, want wait: %s", b, strings.Join(names, ";"))
		}
	}
	if seen == 0 {
		t.Skip("no vfork completion wait was recorded")
	}
	t.Logf("%d records of vfork waits", seen)
}
