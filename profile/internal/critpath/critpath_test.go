package critpath

import (
	"reflect"
	"testing"
)

// piece is one charge of a walk.
type piece struct {
	from, to int64
	stack    int
}

// walk charges thread 1's path and returns what it charged.
func walk(tl map[int64][]Stretch, depth int) []piece {
	var got []piece
	w := &Walk{Timeline: tl, Depth: depth, Add: func(s Stretch, from, to int64, stack int) {
		if stack < 0 {
			stack = s.Stack
		}
		got = append(got, piece{from: from, to: to, stack: stack})
	}}
	w.Path(1)
	return got
}

// TestWalk: thread 1 waits [10, 50) for thread 2, woken at 2's stack 20;
// thread 2 ran [0, 30) and waited [30, 45) for thread 3 (woken at 30),
// which ran throughout, but whose timeline starts at 35. The wait goes
// to 2's wake-up stack while 2 ran, to 3's wake-up stack where 3's
// timeline covers 2's wait, to 2's own wait where it does not, and to
// 1's own wait after 2's timeline ends; with depth 1, 2's wait stays its
// own.
func TestWalk(t *testing.T) {
	tl := map[int64][]Stretch{
		1: {{From: 0, To: 10, State: Running, Stack: 1}, {From: 10, To: 50, State: Blocked, Stack: 11, Waker: 2, WakerStack: 20}, {From: 50, To: 60, State: Runnable, Stack: 1}},
		2: {{From: 0, To: 30, State: Running, Stack: 2}, {From: 30, To: 45, State: Blocked, Stack: 21, Waker: 3, WakerStack: 30}},
		3: {{From: 35, To: 70, State: Running, Stack: 3}},
	}
	for _, c := range []struct {
		depth int
		want  []piece
	}{
		{8, []piece{{from: 0, to: 10, stack: 1}, {from: 10, to: 30, stack: 20}, {from: 35, to: 45, stack: 30}, {from: 30, to: 35, stack: 21}, {from: 10, to: 15, stack: 11}, {from: 50, to: 60, stack: 1}}},
		{1, []piece{{from: 0, to: 10, stack: 1}, {from: 10, to: 30, stack: 20}, {from: 30, to: 45, stack: 21}, {from: 10, to: 15, stack: 11}, {from: 50, to: 60, stack: 1}}},
	} {
		if got := walk(tl, c.depth); !reflect.DeepEqual(got, c.want) {
			t.Errorf("depth %d:\n got %v\nwant %v", c.depth, got, c.want)
		}
	}
}
