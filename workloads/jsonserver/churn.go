package jsonserver

import (
	"net/http"
	"sync/atomic"
)

// GC pressure of the gc variants: each request allocates a chain of
// churnNodes pointer-linked nodes (64 bytes each, 4 KiB a request) and
// keeps it in a ring of churnKeep slots, replacing the chain of a request
// churnKeep requests before. The live heap is then about 4 MiB of
// pointers for every cycle to mark, and the allocation rate grows with
// throughput, so the collector's mark workers and assists take a share of
// the time that grows with the load: the "GC polling doubled" of the .NET
// story, in Go's terms.
const (
	churnNodes = 64
	churnKeep  = 1024
)

// churnNode is one node of a request's chain: a pointer to mark and
// padding to 64 bytes.
type churnNode struct {
	next *churnNode
	_    [7]uintptr
}

// churnRing keeps the recent chains live.
type churnRing struct {
	slots [churnKeep]atomic.Pointer[churnNode]
	next  atomic.Uint64
}

// churn allocates one request's chain and keeps it in the ring.
//
//go:noinline
func (r *churnRing) churn() {
	var head *churnNode
	for range churnNodes {
		head = &churnNode{next: head}
	}
	r.slots[r.next.Add(1)%churnKeep].Store(head)
}

// withChurn is serve with GC pressure before each request's own work.
func withChurn(serve func(http.ResponseWriter, *http.Request)) func(http.ResponseWriter, *http.Request) {
	r := new(churnRing)
	return func(w http.ResponseWriter, req *http.Request) {
		r.churn()
		serve(w, req)
	}
}
