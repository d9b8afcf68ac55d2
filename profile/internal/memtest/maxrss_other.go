//go:build !unix

package memtest

import "os"

// maxRSS is unknown off Unix.
func maxRSS(*os.ProcessState) (int64, bool) { return 0, false }
