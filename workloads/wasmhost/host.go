// Package wasmhost is the built-in Wasm plugin host workload: a plugin
// system modelled on one built on Wasmtime's pooling allocator, running on
// wazero.
//
// The plugin module (Guest) is compiled once and shared. Every request
// leases a memory slot from a Pool, instantiates a fresh anonymous instance
// of the module into it, copies the request into guest memory, calls the
// guest's handler under a time limit, and closes the instance, which resets
// the slot (memset of the keep-resident prefix, madvise of the rest) and
// returns it. Host runs that either in a loop on one goroutine (Loop) or
// behind HTTP (ServeHTTP) for concurrent load.
//
// Capacity is checked before instantiation. When every slot is leased the
// request fails at once with a *FullError, HTTP answers 503 with a body
// naming the limit, and a log line is written at the point the limit is hit
// (rate-limited, with a running count). Every other failure (a guest trap,
// a guest past its time limit, an instantiation error, a guest that saw
// memory it should have received zeroed) is logged the same way: no error
// status leaves the host without a log line.
//
// The package logs only to Config.Log, never exits, and its errors do not
// name the command's flags: a command that maps a setting to a flag
// matches the typed error (*FullError for the pool's size) and adds the
// hint. It does not import package child; child.Builtin serves it as the
// "wasm" workload, its settings passed as Config.Args.
package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
)

// Defaults.
const (
	DefaultPages    = 32      // 2 MiB of guest memory, what a Go wasip1 module starts with
	DefaultTouch    = 1 << 20 // the guest's working set per request
	DefaultPoolSize = 1000    // Wasmtime's default total_memories
	DefaultTimeout  = time.Second
)

// Config configures a Host. The zero value is usable: the defaults above,
// keep-resident 0 (reset by madvise alone).
type Config struct {
	// KeepResident is Wasmtime's linear_memory_keep_resident: bytes of each
	// memory's accessible size reset with memset (and kept resident) when
	// an instance is torn down; the rest is decommitted with madvise.
	KeepResident int64
	// PoolSize is the number of memory slots (total_memories): at most this
	// many instances live at once. 0 means DefaultPoolSize.
	PoolSize int
	// Pages is the guest's memory in 64 KiB pages (0: DefaultPages).
	Pages int
	// Touch is how many bytes of its memory the guest touches per request
	// (0: DefaultTouch; rounded up to 4 KiB; at most the memory minus the
	// request area).
	Touch int
	// Modules is the number of plugin modules sharing the pool (0: 1):
	// each is compiled once, with its own data segment, and requests are
	// spread over them round robin.
	Modules int
	// MaxUnusedWarm is Wasmtime's max_unused_warm_slots (nil:
	// DefaultMaxUnusedWarmSlots): how many free slots may stay bound to
	// other modules before a module with no warm slot of its own takes
	// theirs rather than a cold one.
	MaxUnusedWarm *int
	// Timeout bounds each guest call (0: DefaultTimeout); a guest past it
	// is stopped and its request fails.
	Timeout time.Duration
	// Interpreter runs the guest in wazero's interpreter instead of its
	// compiler.
	Interpreter bool
	// Log receives the host's failure lines (nil: discarded).
	Log io.Writer
	// LogEvery is the least time between two log lines of one kind of
	// failure (0: one second). The first of each kind is logged at once.
	LogEvery time.Duration
}

// Host runs the plugin.
type Host struct {
	cfg      Config
	rt       wazero.Runtime
	compiled []wazero.CompiledModule // one per module
	next     atomic.Uint64           // round robin over compiled
	exports  map[string]bool         // the guest's exported functions
	pool     *Pool
	touch    int
	log      *limitedLog

	served atomic.Int64

	closeOnce sync.Once
	closeErr  error
	failed    sync.Map // failure kind → *atomic.Int64
}

// Failure kinds, as counted in Stats and named in log lines.
const (
	FailPoolFull    = "pool-full"
	FailTrap        = "trap"
	FailTimeout     = "timeout"
	FailInstantiate = "instantiate"
	FailIsolation   = "isolation"
	FailBadRequest  = "bad-request"
	FailCanceled    = "canceled"
)

// New compiles the guest and reserves the pool.
func New(ctx context.Context, cfg Config) (*Host, error) {
	if cfg.PoolSize == 0 {
		cfg.PoolSize = DefaultPoolSize
	}
	if cfg.Pages == 0 {
		cfg.Pages = DefaultPages
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.LogEvery == 0 {
		cfg.LogEvery = time.Second
	}
	if cfg.Modules == 0 {
		cfg.Modules = 1
	}
	warm := DefaultMaxUnusedWarmSlots
	if cfg.MaxUnusedWarm != nil {
		warm = *cfg.MaxUnusedWarm
	}
	if cfg.Timeout < 0 || cfg.PoolSize < 0 || cfg.Touch < 0 || cfg.KeepResident < 0 || cfg.Modules < 0 || warm < 0 {
		return nil, errors.New("wasm host: negative timeout, pool size, touch, keep-resident, modules or max unused warm slots")
	}
	if cfg.Modules > MaxModules {
		return nil, fmt.Errorf("wasm host: at most %d plugin modules, not %d", MaxModules, cfg.Modules)
	}
	if _, err := Guest(cfg.Pages); err != nil {
		return nil, fmt.Errorf("wasm host: %w", err)
	}
	memBytes := cfg.Pages * PageSize
	touch := cfg.Touch
	if touch == 0 {
		touch = min(DefaultTouch, memBytes-RequestArea)
	}
	touch = (touch + guestPage - 1) / guestPage * guestPage
	if touch > memBytes-RequestArea {
		return nil, fmt.Errorf("wasm host: the guest cannot touch %d bytes: its memory is %d bytes, %d of them the request area", touch, memBytes, RequestArea)
	}
	pool, err := NewAffinePool(cfg.PoolSize, memBytes, cfg.KeepResident, warm)
	if err != nil {
		return nil, fmt.Errorf("wasm host: %w", err)
	}
	rc := wazero.NewRuntimeConfig()
	if cfg.Interpreter {
		rc = wazero.NewRuntimeConfigInterpreter()
	}
	// CloseOnContextDone makes a guest past its deadline stop: the
	// compiler inserts checks in loops and calls.
	rc = rc.WithCloseOnContextDone(true).WithMemoryLimitPages(uint32(cfg.Pages))
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	var compiled []wazero.CompiledModule
	for id := range cfg.Modules {
		mod, err := GuestModule(cfg.Pages, id)
		if err == nil {
			var c wazero.CompiledModule
			c, err = rt.CompileModule(ctx, mod)
			compiled = append(compiled, c)
		}
		if err != nil {
			rt.Close(ctx)
			pool.Close()
			return nil, fmt.Errorf("wasm host: compiling plugin module %d: %w", id, err)
		}
	}
	exports := map[string]bool{}
	for name := range compiled[0].ExportedFunctions() {
		exports[name] = true
	}
	return &Host{cfg: cfg, rt: rt, compiled: compiled, exports: exports, pool: pool, touch: touch, log: newLimitedLog(cfg.Log, cfg.LogEvery)}, nil
}

// Close logs a summary of every failure kind seen and releases the runtime
// and the pool. Later calls return the first call's result.
func (h *Host) Close() error {
	h.closeOnce.Do(func() { h.closeErr = h.close() })
	return h.closeErr
}

func (h *Host) close() error {
	for _, k := range h.failureKinds() {
		if n := h.failures(k); n > 0 {
			h.log.printf("wasm host: %s: %d request(s) failed in all", k, n)
		}
	}
	err := h.rt.Close(context.Background())
	if perr := h.pool.Close(); err == nil {
		err = perr
	}
	return err
}

// Pool returns the host's memory pool.
func (h *Host) Pool() *Pool { return h.pool }

// Timeout is the time limit of each guest call.
func (h *Host) Timeout() time.Duration { return h.cfg.Timeout }

// MaxModules bounds Config.Modules.
const MaxModules = 1024

// Modules is the number of plugin modules sharing the pool.
func (h *Host) Modules() int { return len(h.compiled) }

// Touch is the bytes the guest touches per request.
func (h *Host) Touch() int { return h.touch }

// Reply is what the plugin returned for one request.
type Reply struct {
	Hash    uint32 // FNV-1a of the request bytes, computed in the guest
	Touched int    // bytes of working set the guest walked
}

// Guest functions a request may call; FuncHandle is the normal path, the
// others inject faults.
const (
	FuncHandle = "handle"
	FuncTrap   = "trap"
	FuncSpin   = "spin"
)

// Handle serves one request: lease a slot (or fail at once with a
// *FullError when the pool is full), instantiate, copy req into guest
// memory, call fn under the time limit, close. The slot goes back to the
// pool on every path. Every error is logged (rate-limited) before it is
// returned. Requests go to the plugin modules round robin.
func (h *Host) Handle(ctx context.Context, fn string, req []byte) (Reply, error) {
	return h.HandleModule(ctx, -1, fn, req)
}

// HandleModule is Handle for one plugin module (0 to Modules()-1; a
// negative module means the next one round robin).
func (h *Host) HandleModule(ctx context.Context, module int, fn string, req []byte) (Reply, error) {
	if !h.functionExported(fn) {
		return Reply{}, h.fail(FailBadRequest, fmt.Errorf("the plugin exports no function %q (want %s, %s or %s)", fn, FuncHandle, FuncTrap, FuncSpin))
	}
	if module >= len(h.compiled) {
		return Reply{}, h.fail(FailBadRequest, fmt.Errorf("no plugin module %d (the host has %d)", module, len(h.compiled)))
	}
	if module < 0 {
		module = int((h.next.Add(1) - 1) % uint64(len(h.compiled)))
	}
	lease, err := h.pool.AcquireFor(module)
	if err != nil {
		return Reply{}, h.fail(FailPoolFull, fmt.Errorf("%w: request refused", err))
	}
	defer lease.Release()

	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	ictx := experimental.WithMemoryAllocator(ctx, lease)
	mod, err := h.rt.InstantiateModule(ictx, h.compiled[module], wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		return Reply{}, h.fail(FailInstantiate, fmt.Errorf("instantiating the plugin: %w", err))
	}
	defer mod.Close(context.Background())

	if len(req) > ImageOffset {
		req = req[:ImageOffset]
	}
	if !mod.Memory().Write(0, req) {
		return Reply{}, h.fail(FailInstantiate, errors.New("writing the request into guest memory failed"))
	}
	var params []uint64
	if fn == FuncHandle {
		params = []uint64{uint64(len(req)), uint64(h.touch)}
	}
	res, err := mod.ExportedFunction(fn).Call(ctx, params...)
	if err != nil {
		var exit *sys.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded {
			return Reply{}, h.fail(FailTimeout, fmt.Errorf("plugin stopped after its %v time limit: %w", h.cfg.Timeout, err))
		}
		if errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeContextCanceled {
			return Reply{}, h.fail(FailCanceled, fmt.Errorf("plugin stopped: the request was canceled (client gone or server stopping): %w", err))
		}
		return Reply{}, h.fail(FailTrap, fmt.Errorf("plugin trapped: %w", err))
	}
	if fn != FuncHandle {
		return Reply{}, nil
	}
	r := res[0]
	if dirty := r >> 32; dirty != 0 {
		return Reply{}, h.fail(FailIsolation, fmt.Errorf("isolation broken: the plugin found %d non-zero words in memory it should have received zeroed", dirty))
	}
	h.served.Add(1)
	return Reply{Hash: uint32(r), Touched: h.touch}, nil
}

// Failure is every error Handle returns: the failure kind (FailPoolFull,
// FailTrap, ...) and the cause. It has been logged when it is returned.
type Failure struct {
	Kind string
	Err  error
}

func (f *Failure) Error() string { return f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

// FailureKind returns the kind of a Handle error ("" for other errors).
func FailureKind(err error) string {
	var f *Failure
	if errors.As(err, &f) {
		return f.Kind
	}
	return ""
}

// oneLine keeps the first line of a trap's message (wazero appends a guest
// stack trace).
func oneLine(err error) string {
	s := err.Error()
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

func (h *Host) counter(kind string) *atomic.Int64 {
	c, _ := h.failed.LoadOrStore(kind, new(atomic.Int64))
	return c.(*atomic.Int64)
}

func (h *Host) failures(kind string) int64 { return h.counter(kind).Load() }

func (h *Host) failureKinds() []string {
	var ks []string
	h.failed.Range(func(k, _ any) bool { ks = append(ks, k.(string)); return true })
	sort.Strings(ks)
	return ks
}

// fail counts a failure of a kind, logs it (rate-limited per kind, with the
// running count) and returns it as a *Failure.
func (h *Host) fail(kind string, err error) error {
	n := h.counter(kind).Add(1)
	h.log.event(kind, n, "wasm host: %s", oneLine(err))
	return &Failure{Kind: kind, Err: err}
}

// Stats are the host's counters.
type Stats struct {
	Served   int64            `json:"served"`
	Failures map[string]int64 `json:"failures"` // kind → count; {} when none
	Pool     PoolStats        `json:"pool"`
	Touch    int              `json:"touch_bytes"`
	Modules  int              `json:"modules"`
	Timeout  float64          `json:"timeout_s"`
	// MinorFaults is the whole process's minor page faults so far
	// (getrusage ru_minflt; -1 where unavailable).
	MinorFaults int64 `json:"minor_faults"`
}

// Stats returns the host's counters.
func (h *Host) Stats() Stats {
	s := Stats{Served: h.served.Load(), Failures: map[string]int64{}, Pool: h.pool.Stats(), Touch: h.touch, Modules: len(h.compiled), Timeout: h.cfg.Timeout.Seconds(), MinorFaults: minorFaults()}
	for _, k := range h.failureKinds() {
		s.Failures[k] = h.failures(k)
	}
	return s
}

// limitedLog writes at most one line per kind per interval; the first of a
// kind at once, later ones with the running count and how many lines were
// held back.
type limitedLog struct {
	w     io.Writer
	every time.Duration
	mu    sync.Mutex
	last  map[string]time.Time
	held  map[string]int64
}

func newLimitedLog(w io.Writer, every time.Duration) *limitedLog {
	return &limitedLog{w: w, every: every, last: map[string]time.Time{}, held: map[string]int64{}}
}

func (l *limitedLog) event(kind string, count int64, format string, a ...any) {
	if l.w == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.last[kind]; ok && now.Sub(t) < l.every {
		l.held[kind]++
		return
	}
	l.last[kind] = now
	msg := fmt.Sprintf(format, a...)
	suffix := " (" + strconv.FormatInt(count, 10) + " so far"
	if h := l.held[kind]; h > 0 {
		suffix += fmt.Sprintf("; %d like it not logged in the last %v", h, l.every)
		l.held[kind] = 0
	}
	fmt.Fprintf(l.w, "%s%s)\n", msg, suffix)
}

func (l *limitedLog) printf(format string, a ...any) {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", a...)
}

// functionExported reports whether the compiled guest exports fn (wazero
// builds its export map on every call, so New keeps one).
func (h *Host) functionExported(fn string) bool { return h.exports[fn] }
