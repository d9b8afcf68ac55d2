//go:build !unix

package benchgen

import "time"

// cpuTime is 0 where the process's CPU time is not read: Loop reports
// wall time then.
func cpuTime() time.Duration { return 0 }
