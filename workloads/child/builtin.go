package child

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/profdiff/profdiff/workloads/jsonserver"
	"github.com/profdiff/profdiff/workloads/wasmhost"
)

// The built-in workloads are registered here rather than by their packages,
// so jsonserver and wasmhost stay plain packages that do not import child,
// and every program that calls MaybeRun can serve them.
func init() {
	Register("json", jsonserver.Handler)
	Register("wasm", serveWasm)
}

// WasmVariants are the wasm workload's variants; there is one, the pooling
// allocator, and its settings travel as Spec.Args (wasmhost.Config.Args).
var WasmVariants = []string{"pooling"}

func serveWasm(variant string) (http.Handler, error) {
	if variant != "" && variant != "pooling" {
		return nil, fmt.Errorf("wasm: unknown variant %q (want pooling)", variant)
	}
	cfg, err := wasmhost.ParseArgs(Args())
	if err != nil {
		return nil, err
	}
	cfg.Log = os.Stderr
	h, err := wasmhost.New(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	if current == nil {
		// Start validating the variant in the parent: no settings line.
		return wasmhost.NewHandler(h), nil
	}
	st := h.Pool()
	fmt.Fprintf(os.Stderr, "wasm host: pool of %d slots of %s, keep-resident %s, guest touches %s per request, time limit %v\n",
		st.Size(), wasmhost.FormatSize(int64(st.SlotSize())), wasmhost.FormatSize(int64(st.KeepResident())), wasmhost.FormatSize(int64(h.Touch())), h.Timeout())
	return wasmhost.NewHandler(h), nil
}
