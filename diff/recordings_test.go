package diff

import (
	"sync"
	"testing"
)

// recording is what a test records once per test binary for every test
// that reads it (contendedGoProfiles, recordLibcWaits, recordClones): the
// recorded bytes, kept in memory, which each test parses into its own
// profiles.
type recording struct {
	once    sync.Once
	data    [][]byte
	first   string // the test that recorded it
	ok      bool
	skipped bool
}

// get returns the bytes that record returned to the first test that asked.
// A skip or failure of that recording (record calls t.Skip or t.Fatal) is
// every later test's too: they skip or fail, naming the first test.
func (r *recording) get(t *testing.T, record func(*testing.T) [][]byte) [][]byte {
	t.Helper()
	r.once.Do(func() {
		r.first = t.Name()
		defer func() { r.skipped = !r.ok && t.Skipped() }()
		r.data = record(t)
		r.ok = true
	})
	switch {
	case r.ok:
		return r.data
	case r.skipped:
		t.Skipf("skipped: the shared recording skipped in %s", r.first)
	default:
		t.Fatalf("the shared recording failed in %s", r.first)
	}
	return nil
}
