package child

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

// Params is what a workload's serve function is given.
type Params struct {
	// Variant is Spec.Variant.
	Variant string
	// Args is Spec.Args.
	Args []string
	// Log is where the workload writes its own log lines: the child's
	// standard error, which the parent copies to Spec.Log. When Start
	// calls the function in the parent to check the variant and
	// arguments, Log is io.Discard.
	Log io.Writer
}

// ServeFunc builds a workload's HTTP handler. An error means the variant
// or the arguments are refused. A handler that is also an io.Closer is
// closed when the child stops (and at once after Start's check).
type ServeFunc func(Params) (http.Handler, error)

// Table maps workload names to their serve functions: everything a
// program's children can serve. The program builds it once and hands the
// same table to MaybeRun (the child side) and to Start (the parent side,
// which checks names and variants against it before starting a child).
// Builtin returns profdiff's table.
type Table map[string]ServeFunc

// Names lists the table's workload names, sorted.
func (t Table) Names() []string {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (t Table) lookup(name string) (ServeFunc, error) {
	if s := t[name]; s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("unknown workload %q (have %s)", name, strings.Join(t.Names(), ", "))
}
