//go:build !unix

package workloads

// stopSelf blocks the request for good: without SIGSTOP, the closest to a
// process that stopped answering.
func stopSelf() { select {} }
