package bounded

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/profdiff/profdiff/profile/internal/memtest"
)

// held returns the bytes f allocated on the heap plus the most it had
// mapped at once (the pieces after the first): a bound on what it held.
func held(f func()) uint64 {
	var heap uint64
	peak := MappedPeak(func() { heap = memtest.Allocated(f) })
	return heap + uint64(peak)
}

// endless is a stream of zeros without end, as a trickling or endless
// HTTP body or a compression bomb gives.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// A stream without end is refused once past the limit, having allocated
// the limit and no more (but the allocator's rounding of each piece to
// whole pages, and the list of pieces: a 32nd of it) whatever its hint says: no hint, a hint past the
// limit, or one of exactly the limit (the buffer of the hint is then made
// once the bytes make it believable, with the pieces before it a quarter
// of it at most). It reads one byte past the limit, no more.
func TestReadAllEndlessHoldsTheLimit(t *testing.T) {
	const limit = 8 << 20
	for _, c := range []struct {
		hint, first int64
		most        uint64 // allocated, besides a margin for the error
	}{
		{0, 64 << 10, limit},
		{1 << 40, 64 << 10, limit},
		{limit, 64 << 10, limit + limit/4},
		{limit, 1 << 20, limit + limit/4},
	} {
		t.Run(fmt.Sprintf("hint%d-first%d", c.hint, c.first), func(t *testing.T) {
			r := &endless{}
			var err error
			var out []byte
			got := held(func() { out, err = ReadAll(r, limit, c.hint, c.first) })
			if !errors.Is(err, ErrPastLimit) || out != nil {
				t.Fatalf("got %d bytes, %v; want ErrPastLimit", len(out), err)
			}
			if want := c.most + limit/32; got > want {
				t.Errorf("allocated %d bytes, want at most %d", got, want)
			}
			if r.n > limit+minChunk {
				t.Errorf("read %d bytes of a %d-byte limit", r.n, limit)
			}
		})
	}
}

// Streams of every size around the limit, read in pieces of any size,
// come back whole up to the limit, and fail one byte past it.
func TestReadAllSizes(t *testing.T) {
	const limit = 300 << 10
	data := make([]byte, limit+1)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	for _, n := range []int{0, 1, minChunk - 1, minChunk, minChunk + 1, 100 << 10, limit - 1, limit, limit + 1} {
		for _, hint := range []int64{0, int64(n), int64(n) / 3, int64(n) * 3} {
			readers := map[string]io.Reader{
				"whole": bytes.NewReader(data[:n]),
				"bytes": iotest.OneByteReader(bytes.NewReader(data[:n])),
				"half":  iotest.HalfReader(bytes.NewReader(data[:n])),
			}
			for name, r := range readers {
				out, err := ReadAll(r, limit, hint, 4<<10)
				if n > limit {
					if !errors.Is(err, ErrPastLimit) {
						t.Errorf("%d bytes (hint %d, %s): %d bytes, %v; want ErrPastLimit", n, hint, name, len(out), err)
					}
					continue
				}
				if err != nil || !bytes.Equal(out, data[:n]) {
					t.Errorf("%d bytes (hint %d, %s): %d bytes back, %v", n, hint, name, len(out), err)
				}
			}
		}
	}
}

// A right hint within first is one buffer of exactly its size, never
// copied; a right hint past first costs its buffer and the pieces before
// it, a sixteenth of it at most (a quarter where first is tiny).
func TestReadAllRightHint(t *testing.T) {
	data := bytes.Repeat([]byte("profile "), 1<<20) // 8 MiB
	n := int64(len(data))
	for _, c := range []struct {
		first int64
		most  int64
	}{{0, n}, {n, n}, {n / 16, n + n/16 + n/4}} {
		var out []byte
		var err error
		got := held(func() { out, err = ReadAll(bytes.NewReader(data), 1<<30, n, c.first) })
		if err != nil || !bytes.Equal(out, data) || int64(cap(out)) != n {
			t.Fatalf("first %d: %d bytes (capacity %d), %v", c.first, len(out), cap(out), err)
		}
		if got > uint64(c.most)+64<<10 {
			t.Errorf("first %d: allocated %d bytes for %d with a right hint, want at most %d", c.first, got, n, c.most)
		}
	}
}

// A reader's error is returned with what came before it.
func TestReadAllError(t *testing.T) {
	boom := errors.New("boom")
	out, err := ReadAll(io.MultiReader(bytes.NewReader(make([]byte, 100<<10)), iotest.ErrReader(boom)), 1<<20, 0, 0)
	if !errors.Is(err, boom) || len(out) != 100<<10 {
		t.Errorf("%d bytes, %v; want 100 KiB and the reader's error", len(out), err)
	}
}

// The join of a stream of unknown length holds the data and a piece, not
// the data twice, even where the heap has used the pages it lands on
// before (which make would zero, touching the whole buffer while every
// piece is still mapped): the process's peak resident memory, reset just
// before the read (/proc/self/clear_refs), stays under the data and two
// pieces above what it held before.
func TestReadAllJoinTouchesTheDataOnce(t *testing.T) {
	const size = 128 << 20
	// A run of pages the heap has used and freed, resident, at the top
	// of the heap: the join's buffer starts there and goes on into pages
	// never used, which make would zero with them.
	garbage := make([]byte, 4<<20)
	for i := range garbage {
		garbage[i] = 1
	}
	garbage = nil
	runtime.GC()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak resident memory here: %v", err)
	}
	before := statusKB(t, "VmRSS:")
	data, err := ReadAll(iotest.HalfReader(io.LimitReader(&endless{}, size)), 1<<30, 0, 0)
	peak := statusKB(t, "VmHWM:")
	if err != nil || len(data) != size {
		t.Fatalf("read %d bytes, %v", len(data), err)
	}
	grew := (peak - before) << 10
	t.Logf("peak %d MiB above the %d MiB before", grew>>20, before>>10)
	if bound := int64(size + 2*maxPiece); grew > bound {
		t.Errorf("peak %d MiB above what the process held before: past the data and two pieces, %d MiB", grew>>20, bound>>20)
	}
	runtime.KeepAlive(data)
}

// statusKB is a /proc/self/status field in KiB.
func statusKB(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			var kb int64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb); err == nil {
				return kb
			}
		}
	}
	t.Skipf("no %s in /proc/self/status", field)
	return 0
}
