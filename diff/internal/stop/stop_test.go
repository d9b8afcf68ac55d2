package stop

import (
	"context"
	"errors"
	"testing"
)

// A Check looks at its context once every Every calls, and then says why
// it ended; a nil context never stops.
func TestCheck(t *testing.T) {
	cause := errors.New("signal")
	ctx, cancel := context.WithCancelCause(context.Background())
	c := New(ctx)
	for i := range 3 * Every {
		if err := c.Err(); err != nil {
			t.Fatalf("call %d: %v before the end", i, err)
		}
	}
	cancel(cause)
	calls := 0
	for c.Err() == nil {
		calls++
	}
	if calls != Every-1 {
		t.Errorf("%d calls after the end said nothing; want %d", calls, Every-1)
	}
	if err := c.Err(); err != nil {
		t.Errorf("the next call said %v; looks only every %d", err, Every)
	}
	if err := Now(ctx); err != cause {
		t.Errorf("Now = %v, want the cause", err)
	}
	var none Check
	for range 2 * Every {
		if none.Err() != nil || Now(nil) != nil {
			t.Fatal("a nil context stopped")
		}
	}
}
