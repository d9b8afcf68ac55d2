package symbolize

import "strings"

// goStdRoots are the top-level packages of the Go standard library.
var goStdRoots = map[string]bool{
	"archive": true, "bufio": true, "builtin": true, "bytes": true, "cmp": true, "compress": true,
	"container": true, "context": true, "crypto": true, "database": true, "debug": true, "embed": true,
	"encoding": true, "errors": true, "expvar": true, "flag": true, "fmt": true, "go": true, "hash": true,
	"html": true, "image": true, "index": true, "internal": true, "io": true, "iter": true, "log": true,
	"maps": true, "math": true, "mime": true, "net": true, "os": true, "path": true, "plugin": true,
	"reflect": true, "regexp": true, "runtime": true, "slices": true, "sort": true, "strconv": true,
	"strings": true, "structs": true, "sync": true, "syscall": true, "testing": true, "text": true,
	"time": true, "unicode": true, "unique": true, "unsafe": true, "vendor": true, "weak": true,
}

// IsGoStd reports whether a frame name is a Go standard-library function
// ("sync.(*Mutex).Lock", "internal/sync.runtime_SemacquireMutex",
// "net/http.(*conn).serve"): its import path's first element is a standard
// root. Names of other runtimes ("System.Threading.Monitor.Enter") never
// are, nor are module paths ("github.com/...", "main.").
func IsGoStd(name string) bool {
	root := name
	if i := strings.IndexAny(root, "/."); i >= 0 {
		root = root[:i]
	}
	return goStdRoots[root]
}
