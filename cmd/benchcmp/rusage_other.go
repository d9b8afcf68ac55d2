//go:build !unix

package main

import "os"

// peakRSS is unknown off Unix.
func peakRSS(*os.ProcessState) int64 { return 0 }
