//go:build !unix

package main

import "time"

// selfCPU is unknown off Unix (loadcmp's peer, wrk, runs only there).
func selfCPU() time.Duration { return 0 }
