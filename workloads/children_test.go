package workloads

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/profdiff/profdiff/workloads/child"
	"github.com/profdiff/profdiff/workloads/jsonserver"
)

// testTable is child.Builtin() with workloads that fail, for the tests of
// Run's failures. Each serves the JSON test (any path) and, at its
// Args[0]-th request (default 1):
//
//	dies    exits with status 2
//	hangs   stops the whole process (SIGSTOP; elsewhere it blocks its handler)
//	stalls  blocks that request and every later one, the process still up
func testTable() child.Table {
	t := child.Builtin()
	t["dies"] = failAt(func(p child.Params, n int64) {
		fmt.Fprintf(p.Log, "dies: exiting after %d requests\n", n)
		os.Exit(2)
	})
	t["hangs"] = failAt(func(p child.Params, n int64) { stopSelf() })
	t["stalls"] = failAt(func(p child.Params, n int64) { select {} })
	return t
}

// failAt is a serve function for a JSON server that calls fail at its n-th
// request and at every later one.
func failAt(fail func(p child.Params, n int64)) child.ServeFunc {
	return func(p child.Params) (http.Handler, error) {
		n := int64(1)
		if len(p.Args) > 0 {
			var err error
			if n, err = strconv.ParseInt(p.Args[0], 10, 64); err != nil {
				return nil, err
			}
		}
		h, err := jsonserver.Handler("baseline")
		if err != nil {
			return nil, err
		}
		var count atomic.Int64
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if count.Add(1) >= n {
				fail(p, n)
			}
			h.ServeHTTP(w, r)
		}), nil
	}
}
