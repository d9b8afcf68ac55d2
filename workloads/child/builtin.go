package child

import (
	"context"
	"fmt"
	"net/http"

	"github.com/profdiff/profdiff/workloads/jsonserver"
	"github.com/profdiff/profdiff/workloads/wasmhost"
)

// Builtin returns profdiff's workload table: "json" (package
// workloads/jsonserver, variants jsonserver.Variants) and "wasm" (package
// workloads/wasmhost, one variant, "pooling", the default; its settings in Spec.Args as
// wasmhost.Config.Args writes them). The profdiff command and every test
// binary that starts children pass it to MaybeRun and Start. It lives here
// rather than in those packages so that they stay plain packages that do
// not import child; each call returns a new table.
func Builtin() Table {
	return Table{
		"json": func(p Params) (http.Handler, error) { return jsonserver.Handler(p.Variant) },
		"wasm": serveWasm,
	}
}

func serveWasm(p Params) (http.Handler, error) {
	if p.Variant != "" && p.Variant != "pooling" {
		return nil, fmt.Errorf("wasm: unknown variant %q (want pooling)", p.Variant)
	}
	cfg, err := wasmhost.ParseArgs(p.Args)
	if err != nil {
		return nil, err
	}
	cfg.Log = p.Log
	h, err := wasmhost.New(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	st := h.Pool()
	fmt.Fprintf(p.Log, "wasm host: pool of %d slots of %s, keep-resident %s, guest touches %s per request, time limit %v\n",
		st.Size(), wasmhost.FormatSize(int64(st.SlotSize())), wasmhost.FormatSize(int64(st.KeepResident())), wasmhost.FormatSize(int64(h.Touch())), h.Timeout())
	return wasmhost.NewHandler(h), nil
}
