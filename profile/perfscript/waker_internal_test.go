package perfscript

import (
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile/internal/labels"
)

// TestWakerExcerpt reads the excerpt of a real recording among the seeds
// (a waiter's switch-out, the holder's sched_waking of it, its switch-in):
// the waiter's 187 µs off the CPU name the holder's stack, root first,
// and thread; and the excerpt of a nap ended by a timer interrupt taken
// in the holder names the timer, not the holder.
func TestWakerExcerpt(t *testing.T) {
	var text string
	for _, s := range seeds {
		if strings.Contains(s, "pid=28236 ") {
			text = s
		}
	}
	p, _, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	off := -1
	for i, st := range p.SampleType {
		if st.Type == OffCPUType {
			off = i
		}
	}
	if off < 0 {
		t.Fatalf("no off-cpu type in %v", p.SampleType)
	}
	const want = "waker;hold_work;__GI___pthread_mutex_unlock_usercnt;lll_mutex_unlock_optimized;__GI___lll_lock_wake"
	n := 0
	for _, s := range p.Sample {
		if s.Value[off] == 0 {
			continue
		}
		n++
		if got := s.Label[labels.Waker]; len(got) != 1 || got[0] != want {
			t.Errorf("waker %q, want %q", got, want)
		}
		if got := s.Label[labels.WakerThread]; len(got) != 1 || got[0] != "28234" {
			t.Errorf("waker thread %q, want 28234", got)
		}
		if s.Value[off] != 187_000 {
			t.Errorf("off-CPU %d ns, want 187000", s.Value[off])
		}
	}
	if n != 1 {
		t.Errorf("%d off-CPU records, want 1", n)
	}

	// The napper's 1071 µs asleep were ended by a timer, not by the
	// holder whose stack the interrupt stopped.
	p, _, err = Parse(seeds[len(seeds)-1])
	if err != nil {
		t.Fatal(err)
	}
	n = 0
	for _, s := range p.Sample {
		if s.Value[off] == 0 {
			continue
		}
		n++
		if w := s.Label[labels.Waker]; len(w) != 1 || w[0] != labels.WakerTimer || len(s.Label[labels.WakerThread]) > 0 {
			t.Errorf("timer wake-up labelled %q, thread %q; want %s and no thread", w, s.Label[labels.WakerThread], labels.WakerTimer)
		}
		if s.Value[off] != 1_071_000 {
			t.Errorf("nap %d ns off the CPU, want 1071000", s.Value[off])
		}
	}
	if n != 1 {
		t.Errorf("%d off-CPU records of the nap, want 1", n)
	}
}
