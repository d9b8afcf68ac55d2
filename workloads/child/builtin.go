package child

import "github.com/profdiff/profdiff/workloads/jsonserver"

// The built-in JSON server is registered here rather than by jsonserver
// itself, so jsonserver stays a plain handler package that does not import
// child, and every program that calls MaybeRun can serve "json".
func init() { Register("json", jsonserver.Handler) }
