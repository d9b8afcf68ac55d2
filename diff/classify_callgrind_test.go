package diff

import (
	"path/filepath"
	"testing"

	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile/producertest"
)

// A C program whose threads take a pthread mutex and work while they hold
// it, run under callgrind twice, the held work doubled: the diff's largest
// growth is held_work, and pthread_mutex_lock is lock-contention by the
// native rules. callgrind counts instructions, so the lock's share is
// only its own instructions (valgrind runs one thread at a time: the
// mutex is seldom contended, and a blocked thread would cost nothing).
func TestCallgrindMutexHold(t *testing.T) {
	dir := t.TempDir()
	bin := producertest.LockProgram(t, dir)
	record := func(name, hold string) string {
		out := filepath.Join(dir, name)
		producertest.Callgrind(t, out, bin, nil, hold)
		return out
	}
	r := diffOf(t, Options{Top: -1}, loadFile(t, record("base.out", "1")), loadFile(t, record("new.out", "2")))
	var top *result.MethodRow
	for i := range r.Methods {
		if m := &r.Methods[i]; top == nil || m.Delta > top.Delta {
			top = m
		}
	}
	if top == nil || top.Name != "held_work" {
		t.Fatalf("largest growth %+v, want held_work", top)
	}
	if ratio := top.NewValue / top.BaseValue; ratio < 1.9 || ratio > 2.1 {
		t.Errorf("held_work %.0f → %.0f instructions, want doubled", top.BaseValue, top.NewValue)
	}
	lock := findMethod(r, "pthread_mutex_lock")
	if lock == nil || lock.Bucket != rules.LockContention || lock.BaseValue == 0 {
		t.Errorf("pthread_mutex_lock row %+v, want lock-contention with instructions", lock)
	}
	if b := r.Buckets[rules.LockContention]; b.BaseValue == 0 || b.NewValue == 0 {
		t.Errorf("lock-contention bucket %+v, want the lock's instructions on both sides", b)
	}
}
