package result

// Wait is the who-made-it-wait analysis (package diff/wait) of one side
// or two: the locks waited for, with the waiters' time and the holders'
// critical sections beside them, and the wake-up edges (who woke each
// blocked stretch). Values are nanoseconds of delay or blocked time, per
// side (index 0 base, 1 new; a single side is index 0).
type Wait struct {
	// Sides is 1 for one side (top), 2 for a comparison.
	Sides   int         `json:"sides"`
	Inputs  [2]WaitSide `json:"-"`
	Locks   []WaitLock  `json:"locks"`
	Wakeups []WakeEdge  `json:"wakeups"`
	Paths   []WaitPath  `json:"critical_paths,omitempty"`
	// Notes say in words what the data cannot tell (only one half of a
	// pair, a format that names no holder), each once.
	Notes   []string    `json:"notes,omitempty"`
	Verdict WaitVerdict `json:"verdict"`
	// Warnings are for stderr.
	Warnings []string `json:"-"`
}

// WaitSide is what one side's inputs held.
type WaitSide struct {
	Sources []string `json:"sources"`
	// Mutex, Block and Labelled count the mutex profiles, block profiles
	// and profiles whose samples name a waker or owner.
	Mutex, Block, Labelled int
}

// WaitLock is one contended lock, as the data identifies it: a group of
// waiter sites and holder sites paired by how Match says.
type WaitLock struct {
	// Name is the lock's identity where the data has one, else its
	// principal waiter and holder sites ("main.waitHere ← main.holdSlow").
	Name string `json:"name"`
	// Evidence is where the pairing comes from: "mutex+block" (Go's
	// mutex and block profiles, paired by site and delay totals),
	// "waker" (the waiters' samples name who woke them: a Go execution
	// trace, perf sched_waking), or "owner" (they name the thread that
	// held the lock: JFR).
	Evidence string `json:"evidence"`
	// Waited is the waiters' delay; Held the delay their holders
	// released (the mutex profile's charge to the end of a critical
	// section; for waker and owner evidence, the same as Waited).
	Waited [2]float64 `json:"waited_ns"`
	Held   [2]float64 `json:"held_ns"`
	// Waiters and Holders are the sites, largest first.
	Waiters []WaitSite `json:"waiters"`
	Holders []WaitSite `json:"holders"`
	// Match says how waiters and holders were paired, one entry per rule
	// that joined them ("call site: main.f locks and unlocks",
	// "delay totals: ..."); empty for a half.
	Match []string `json:"match,omitempty"`
	// Ambiguous, when set, says why the pairing may be wrong (another
	// group's delay fits as well).
	Ambiguous string `json:"ambiguous,omitempty"`
	// Half is "waiters only" or "holders only" when only one half of the
	// lock is in the data, with why.
	Half string `json:"half,omitempty"`
}

// WaitSite is one waiter or holder site: the program's frame calling the
// lock (or the blocking call), its value per side, and for a holder the
// share of its lock's waiting it is charged with (its part of Held).
type WaitSite struct {
	Site    string      `json:"site"`
	Value   [2]float64  `json:"value_ns"`
	Charged [2]float64  `json:"charged,omitempty"` // fraction 0..1 of the lock's Waited, holders only
	Stacks  []WaitStack `json:"stacks,omitempty"`
}

// WaitStack is one stack of a site, root first, with its value per side.
type WaitStack struct {
	Frames []string   `json:"frames"`
	Value  [2]float64 `json:"value_ns"`
}

// WakeEdge is the blocked time of waiters at one site that one waker site
// ended, per side. Waker is a site, or a labels.Waker "[none: …]" value
// when no thread woke it.
type WakeEdge struct {
	Waiter string `json:"waiter"`
	Waker  string `json:"waker"`
	// Bucket is the waiters' bucket (lock-contention, wait, io...).
	Bucket string     `json:"bucket"`
	Value  [2]float64 `json:"value_ns"`
	// WakerStack is the waker's commonest stack at this edge, root first.
	WakerStack []string `json:"waker_stack,omitempty"`
}

// WaitVerdict names the principal holder when one explains most of the
// lock waiting (one side) or of its growth (two sides).
type WaitVerdict struct {
	// Holder is the principal holder site, "" when none explains most.
	Holder string `json:"holder,omitempty"`
	// Lock is the Name of its lock: of the one charged most to it, where
	// it holds several.
	Lock string `json:"lock,omitempty"`
	// Locks is how many locks Holder is charged waiting of (a thread
	// holding several monitors at once); 1 for one.
	Locks int `json:"locks,omitempty"`
	// Share is the fraction (0..1) of the waiting, or of its growth,
	// that Holder explains.
	Share float64 `json:"share"`
	// Waited is the lock waiting per side, all locks, nanoseconds.
	Waited [2]float64 `json:"waited_ns"`
}

// WaitPath is the critical path of the goroutines (or threads) that
// waited at one stack: their elapsed time charged to the code that ran on
// the path, by bucket and by function, per side.
type WaitPath struct {
	// Site is the program's frame of Stack, the stack (root first) where
	// these goroutines waited longest.
	Site    string     `json:"site"`
	Stack   []string   `json:"stack"`
	Elapsed [2]float64 `json:"elapsed_ns"`
	// Buckets and Functions share out Elapsed, the largest first; a
	// function is the program's frame of each charged stack.
	Buckets   []WaitPart `json:"buckets"`
	Functions []WaitPart `json:"functions"`
	// Stacks are the charged stacks, root first, for a flame graph.
	Stacks []WaitStack `json:"-"`
}

// WaitPart is a part of a path's time, per side.
type WaitPart struct {
	Name  string     `json:"name"`
	Value [2]float64 `json:"value_ns"`
}
