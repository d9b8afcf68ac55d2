package rules

import "fmt"

// Bucket is where a sample's time went. The names are part of profdiff's
// interface (JSON, CSV, rule files, gate thresholds).
type Bucket uint8

const (
	CPU            Bucket = iota // running code that is none of the below
	Wait                         // parked waiting for work or a signal
	LockContention               // waiting for, or spinning on, a lock held by someone else
	GC                           // collector work and waiting for it
	IO                           // waiting for network or file readiness
	Syscall                      // inside other system calls
	NumBuckets     = 6
)

var bucketNames = [NumBuckets]string{"cpu", "wait", "lock-contention", "gc", "io", "syscall"}

// Buckets lists every bucket in report order.
var Buckets = [NumBuckets]Bucket{CPU, Wait, LockContention, GC, IO, Syscall}

func (b Bucket) String() string {
	if int(b) < len(bucketNames) {
		return bucketNames[b]
	}
	return fmt.Sprintf("bucket(%d)", b)
}

// ParseBucket reads a bucket name.
func ParseBucket(s string) (Bucket, error) {
	for i, n := range bucketNames {
		if n == s {
			return Bucket(i), nil
		}
	}
	return 0, fmt.Errorf("unknown bucket %q (want cpu, wait, lock-contention, gc, io or syscall)", s)
}

func (b Bucket) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

func (b *Bucket) UnmarshalText(t []byte) error {
	v, err := ParseBucket(string(t))
	*b = v
	return err
}
