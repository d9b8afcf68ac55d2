package jfr

import (
	"os"
	"os/exec"
	"testing"
)

// FuzzRead: no input makes Parse panic, and what it accepts is a valid
// profile. The seed is a real recording made at test time (when a JDK is
// installed) and its first bytes.
func FuzzRead(f *testing.F) {
	f.Add([]byte("FLR\x00\x00\x02\x00\x01"))
	if _, err := exec.LookPath("java"); err == nil {
		if _, err := exec.LookPath("javac"); err == nil {
			data, err := os.ReadFile(record(f, "sleep"))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
			f.Add(data[:len(data)/3])
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
