package jfr

import (
	"os"
	"os/exec"
	"testing"
)

// FuzzRead: no input makes Parse panic, and what it accepts is a valid
// profile. The seeds are real recordings made at test time (when a JDK is
// installed: Busy sleeping, and Shapes with async-profiler's event types
// and the TLAB events) and their first thirds.
func FuzzRead(f *testing.F) {
	f.Add([]byte("FLR\x00\x00\x02\x00\x01"))
	if _, err := exec.LookPath("java"); err == nil {
		if _, err := exec.LookPath("javac"); err == nil {
			for _, path := range []string{record(f, "sleep"), shapesRecording(f)} {
				data, err := os.ReadFile(path)
				if err != nil {
					f.Fatal(err)
				}
				f.Add(data)
				f.Add(data[:len(data)/3])
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, _, err := Parse(data)
		if err != nil {
			return
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("Parse accepted input but made an invalid profile: %v", err)
		}
	})
}
