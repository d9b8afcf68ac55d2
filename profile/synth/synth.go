// Package synth generates large, reproducible, Go-like pprof CPU profiles for
// benchmarks (cmd/benchcmp, and the benchmarks of packages diff and profile).
//
// A generated pair is two profiles, Base and New, built from one "program":
// the same functions, call graph and stacks (all derived from Config.Seed),
// so that they differ the way two captures of one service do:
//
//   - 5% of the stacks appear only in Base and another 5% only in New; each
//     side has exactly Config.Stacks unique stacks (one sample each);
//   - New's weights are shifted: about a fifth of the functions run 1.5-4x
//     more or 0.25-0.7x as much, lock contention and GC assists grow, I/O
//     waits shrink;
//   - 1% of the functions are renamed in New (a `V2` suffix), so some
//     methods exist on one side only.
//
// Stacks hang off goroutine entry points and walk a random call graph with a
// skew towards hot helpers; a third or so end in runtime tails the
// classifier has to recognize (sync.(*Mutex).lockSlow, runtime.selectgo,
// internal/poll.runtime_pollWait, runtime.gopark, GC assists, syscalls,
// the scheduler). Output is fully determined by the Config.
//
// Locations are shaped like those of a real Go CPU profile, where every
// distinct program counter is a Location: one Mapping (/usr/local/bin/server,
// HasFunctions and friends set) holds the code, each function a 2 KiB block
// of it; a caller's frame is the return address of its call site, so a
// function has one Location per callee it calls (with its own address and
// line), and a leaf frame is one of 1-16 PCs in the function's body. One
// call site in ten carries an inlined helper (a Location with two Lines).
// The 200,000-stack default pair has about 8 Locations per Function (150,000
// Locations over 19,000 Functions); Config.PCsPerFunction caps that, down to
// one Location per function.
package synth

import (
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand"
	"os"
	"strings"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/build"
	"github.com/profdiff/profdiff/profile/internal/labels"
)

// Side selects which profile of a pair Generate builds.
type Side int

const (
	Base Side = 0
	New  Side = 1
)

// Config describes a profile pair. Two calls with equal Configs return equal
// profiles.
type Config struct {
	Seed      int64
	Stacks    int  // unique stacks (= sample records) per profile
	MinDepth  int  // locations per stack, inclusive bounds (a location with an
	MaxDepth  int  // inlined call holds two frames)
	Functions int  // user functions in the program; ~50 runtime/stdlib frames come on top
	Side      Side // Base or New

	// PCsPerFunction caps the distinct PCs (Locations) of a function.
	// 0, the default, is the realistic shape: one per call site (2-8
	// callees, plus calls into the runtime) and 1-16 leaf PCs, up to 28 in
	// all. 1 gives every function a single Location, whichever callee it
	// calls; n > 1 folds the realistic PCs onto n per function.
	PCsPerFunction int
}

// DefaultConfig is the large pair: 200,000 unique stacks of 15-45
// frames over 20,000 functions (about 14 MB gzipped per profile).
func DefaultConfig() Config {
	return Config{Seed: 1, Stacks: 200_000, MinDepth: 15, MaxDepth: 45, Functions: 20_000}
}

func (c Config) check() error {
	switch {
	case c.Stacks < 0:
		return fmt.Errorf("synth: Stacks %d < 0", c.Stacks)
	case c.MinDepth < 1 || c.MaxDepth < c.MinDepth:
		return fmt.Errorf("synth: want 1 <= MinDepth <= MaxDepth, got %d, %d", c.MinDepth, c.MaxDepth)
	case c.Functions < 1:
		return fmt.Errorf("synth: Functions %d < 1", c.Functions)
	case c.Side != Base && c.Side != New:
		return fmt.Errorf("synth: bad Side %d", c.Side)
	case c.PCsPerFunction < 0 || c.PCsPerFunction > 1<<varBits:
		return fmt.Errorf("synth: PCsPerFunction %d not in 0..%d", c.PCsPerFunction, 1<<varBits)
	}
	return nil
}

// Version changes whenever the profiles generated for some Config change, so
// that tools caching generated files (cmd/benchcmp -dir) can tell stale ones.
const Version = 2

// Period is the sampling period (10ms of CPU, as runtime/pprof writes).
const Period = 10_000_000

// Generate builds one side of the pair described by cfg. It panics on an
// invalid Config (negative sizes, MinDepth > MaxDepth).
func Generate(cfg Config) *pprofile.Profile {
	if err := cfg.check(); err != nil {
		panic(err)
	}
	u := newUniverse(cfg.Seed, cfg.Functions)
	st := u.stacks(cfg)
	return u.build(cfg, st)
}

// Write writes one side of the pair, gzipped, as runtime/pprof does.
func Write(w io.Writer, cfg Config) error {
	if err := cfg.check(); err != nil {
		return err
	}
	return Generate(cfg).Write(w)
}

// WriteFile writes one side of the pair to a gzipped pprof file.
func WriteFile(name string, cfg Config) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := Write(f, cfg); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// tail is a chain of runtime/stdlib frames (root side first) that ends a
// stack, with how often it occurs and how New scales its weight.
type tail struct {
	frames []string
	prob   float64
	scale  float64
}

var tails = []tail{
	{nil, 0.44, 1},
	{[]string{"runtime.newobject", "runtime.mallocgc", "runtime.mallocgcSmallScanNoHeader"}, 0.06, 1.1},
	{[]string{"runtime.memmove"}, 0.04, 1},
	{[]string{"runtime.mapaccess2_faststr"}, 0.03, 1},
	{[]string{"runtime.asyncPreempt"}, 0.02, 1},
	{[]string{"sync.(*Mutex).Lock", "sync.(*Mutex).lockSlow"}, 0.04, 2},
	{[]string{"sync.(*Mutex).Lock", "sync.(*Mutex).lockSlow", "sync.runtime_SemacquireMutex", "runtime.semacquire1", "runtime.gopark"}, 0.03, 2},
	{[]string{"sync.(*Mutex).Lock", "sync.(*Mutex).lockSlow", "runtime.procyield"}, 0.01, 2},
	{[]string{"runtime.selectgo", "runtime.gopark"}, 0.06, 1},
	{[]string{"runtime.chanrecv1", "runtime.chanrecv", "runtime.gopark"}, 0.04, 1},
	{[]string{"sync.(*WaitGroup).Wait", "sync.runtime_SemacquireWaitGroup", "runtime.semacquire1", "runtime.gopark"}, 0.02, 1},
	{[]string{"time.Sleep"}, 0.01, 1},
	{[]string{"internal/poll.(*FD).Read", "internal/poll.(*pollDesc).waitRead", "internal/poll.(*pollDesc).wait", "internal/poll.runtime_pollWait", "runtime.netpollblock", "runtime.gopark"}, 0.06, 0.8},
	{[]string{"os.(*File).Write", "internal/poll.(*FD).Write", "syscall.Write", "syscall.write", "syscall.Syscall", "syscall.RawSyscall6", "internal/runtime/syscall.Syscall6"}, 0.04, 1},
	{[]string{"runtime.mallocgc", "runtime.gcAssistAlloc", "runtime.systemstack", "runtime.gcAssistAlloc.func1", "runtime.gcAssistAlloc1", "runtime.gcDrainN", "runtime.scanobject"}, 0.03, 1.5},
	{[]string{"runtime.gopark", "runtime.mcall", "runtime.park_m", "runtime.schedule", "runtime.findRunnable", "runtime.netpoll", "internal/runtime/syscall/linux.EpollWait"}, 0.03, 1},
	{[]string{"runtime.mcall", "runtime.park_m", "runtime.schedule", "runtime.findRunnable", "runtime.stealWork", "runtime.runqgrab"}, 0.02, 1},
	{[]string{"runtime.futexsleep", "runtime.futex"}, 0.02, 1},
}

// Roots (root first) of a stack: goroutines started by `go` and the main one.
var roots = [][]string{{"runtime.goexit"}, {"runtime.goexit", "runtime.main"}}

// universe is the program both sides of a pair are captured from.
type universe struct {
	nUser   int       // user functions are 0..nUser-1, runtime ones follow
	names   []string  // function names
	renamed []string  // New's name for a renamed function, else ""
	files   []string  // source file per function
	lines   []int64   // first line per function
	nleaf   []uint8   // distinct leaf PCs (locations) per function, 1-16
	callees [][]int32 // call graph over user functions
	factor  []float64 // New's weight multiplier per function
	entries int       // functions 0..entries-1 are goroutine entry points
	hot     int       // entries..entries+hot-1 are hot helpers
	rt      map[string]int32
	tailIDs [][]int32
	rootIDs [][]int32
	mainFn  int32 // main.main
}

var (
	words = strings.Fields(`account auth batch buffer cache cart catalog codec config conn cursor
		decode encode event feed filter flush frame gateway graph handler header index invoice
		job journal ledger limiter lock log match meta metric order packet page parse payment
		peer pool proto query queue quota rank record region render replica request route
		rpc schema scope search session shard signal snapshot span stream sync table tenant
		token trace tree txn user vector view wal worker`)
	verbs = strings.Fields(`Get Put Load Store Read Write Encode Decode Marshal Unmarshal Handle
		Serve Process Apply Build Check Compute Fetch Flush Lookup Merge Open Close Parse Prepare
		Resolve Scan Send Recv Update Validate Visit Walk append grow hash init next reset run
		split step emit collect`)
	stdPkgs = strings.Fields(`encoding/json encoding/binary bufio bytes strings strconv sort
		compress/gzip compress/flate crypto/tls crypto/sha256 crypto/aes net/http net/url
		database/sql io regexp text/template reflect fmt hash/crc32 container/heap math/big
		google.golang.org/grpc google.golang.org/protobuf/proto github.com/jackc/pgx/v5
		go.uber.org/zap github.com/redis/go-redis/v9`)
)

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func newUniverse(seed int64, nUser int) *universe {
	r := rand.New(rand.NewSource(seed))
	u := &universe{nUser: nUser}
	u.entries = max(min(nUser, 8), nUser/100)
	u.hot = max(1, nUser/20)
	u.userFunctions(r, packageNames(r, nUser))
	u.callGraph(r)
	u.runtimeFunctions()
	return u
}

// packageNames makes about one package per 40 functions, service packages
// and libraries.
func packageNames(r *rand.Rand, nUser int) []string {
	nPkg := max(1, nUser/40)
	pkgs := make([]string, nPkg)
	for i := range pkgs {
		switch {
		case i%3 == 2 && i/3 < len(stdPkgs):
			pkgs[i] = stdPkgs[i/3]
		case i%2 == 0:
			pkgs[i] = fmt.Sprintf("github.com/acme/%s/internal/%s", words[r.Intn(len(words))], words[r.Intn(len(words))])
		default:
			pkgs[i] = fmt.Sprintf("github.com/acme/%s/pkg/%s%d", words[r.Intn(len(words))], words[r.Intn(len(words))], i)
		}
	}
	return pkgs
}

// userFunctions names the user functions and draws their files, lines,
// leaf PCs and New's weight factors.
func (u *universe) userFunctions(r *rand.Rand, pkgs []string) {
	nUser, nPkg := u.nUser, len(pkgs)
	seen := make(map[string]bool, nUser)
	u.names = make([]string, nUser)
	u.renamed = make([]string, nUser)
	u.files = make([]string, nUser)
	u.lines = make([]int64, nUser)
	u.nleaf = make([]uint8, nUser)
	u.factor = make([]float64, nUser)
	for f := 0; f < nUser; f++ {
		pi := r.Intn(nPkg)
		pkg := pkgs[pi]
		typ := title(words[r.Intn(len(words))]) + title(words[r.Intn(len(words))])
		verb := verbs[r.Intn(len(verbs))]
		var base, name string
		switch k := r.Intn(10); {
		case f < u.entries:
			base = fmt.Sprintf("%s.(*%s).", pkg, typ)
			name = []string{"serveConn", "worker", "loop", "run", "handleStream"}[k%5]
		case k < 4:
			base, name = fmt.Sprintf("%s.(*%s).", pkg, typ), verb
		case k < 6:
			base, name = fmt.Sprintf("%s.%s.", pkg, typ), verb
		case k < 9:
			base, name = pkg+".", verb+title(words[r.Intn(len(words))])
		default:
			base, name = fmt.Sprintf("%s.(*%s).", pkg, typ), verb
		}
		full := base + name
		for n := 2; seen[full]; n++ {
			full = fmt.Sprintf("%s%s%d", base, name, n)
		}
		if k := r.Intn(12); k == 0 && f >= u.entries {
			full += fmt.Sprintf(".func%d", 1+r.Intn(3))
			if seen[full] {
				full = strings.TrimSuffix(full, full[strings.LastIndex(full, ".func"):])
			}
		}
		seen[full] = true
		u.names[f] = full
		if r.Intn(100) == 0 && f >= u.entries {
			u.renamed[f] = full + "V2"
		}
		u.files[f] = fmt.Sprintf("/src/%s/%s.go", pkgs[pi], words[r.Intn(len(words))])
		u.lines[f] = int64(20 + r.Intn(900))
		u.nleaf[f] = uint8(1 + r.Intn(16))
		switch x := r.Float64(); {
		case x < 0.10:
			u.factor[f] = 1.5 + 2.5*r.Float64()
		case x < 0.20:
			u.factor[f] = 0.25 + 0.45*r.Float64()
		default:
			u.factor[f] = 1
		}
	}

}

// callGraph gives every user function 2-8 callees, a third of them hot
// helpers.
func (u *universe) callGraph(r *rand.Rand) {
	nUser := u.nUser
	u.callees = make([][]int32, nUser)
	flat := make([]int32, 0, nUser*5)
	for f := range u.callees {
		k := 2 + r.Intn(7)
		start := len(flat)
		for range k {
			var c int
			if r.Intn(3) == 0 {
				c = u.entries + r.Intn(u.hot)
			} else {
				c = u.entries + r.Intn(max(1, nUser-u.entries))
			}
			flat = append(flat, int32(min(c, nUser-1)))
		}
		u.callees[f] = flat[start:len(flat):len(flat)]
	}

}

// runtimeFunctions adds the runtime and stdlib functions that tails and
// roots use, after the user functions.
func (u *universe) runtimeFunctions() {
	u.rt = map[string]int32{}
	rtID := func(name string) int32 {
		id, ok := u.rt[name]
		if !ok {
			id = int32(len(u.names))
			u.rt[name] = id
			u.names = append(u.names, name)
			u.renamed = append(u.renamed, "")
			pkg := name[:strings.IndexByte(name, '.')]
			u.files = append(u.files, "/usr/local/go/src/"+pkg+"/"+pkg[strings.LastIndexByte(pkg, '/')+1:]+".go")
			u.lines = append(u.lines, int64(100+len(u.names)%700))
			u.nleaf = append(u.nleaf, 4)
			u.factor = append(u.factor, 1)
		}
		return id
	}
	for _, t := range tails {
		ids := make([]int32, len(t.frames))
		for i, n := range t.frames {
			ids[i] = rtID(n)
		}
		u.tailIDs = append(u.tailIDs, ids)
	}
	for _, rt := range roots {
		ids := make([]int32, len(rt))
		for i, n := range rt {
			ids[i] = rtID(n)
		}
		u.rootIDs = append(u.rootIDs, ids)
	}
	u.mainFn = rtID("main.main")
}

// varBits is the bits of a frame code that hold the location variant:
// variants 0-11 are call sites (a callee's index, or 8-11 for calls into a
// runtime tail) and 12-27 are leaf PCs.
const varBits = 5

// leafVariant is the first location variant of a leaf PC.
const leafVariant = 12

// stackSet holds the generated stacks, root first, as frame codes
// (function<<varBits | location variant). A location variant is a call
// site (the callee's index) for a caller frame and a PC in the body for a
// leaf, as in real CPU profiles where every distinct PC is a location.
type stackSet struct {
	frames []int32
	off    []int32 // stack i is frames[off[i]:off[i+1]]
	weight []int64
	tail   []uint8
}

// stacks generates Stacks + Stacks/20 unique stacks from the universe's
// seed; Base uses the first Stacks, New the last Stacks.
func (u *universe) stacks(cfg Config) *stackSet {
	r := rand.New(rand.NewSource(cfg.Seed*7919 + 17))
	n := cfg.Stacks + cfg.Stacks/20
	s := &stackSet{
		frames: make([]int32, 0, n*(cfg.MinDepth+cfg.MaxDepth)/2),
		off:    make([]int32, 1, n+1),
		weight: make([]int64, 0, n),
		tail:   make([]uint8, 0, n),
	}
	cum := make([]float64, len(tails))
	acc := 0.0
	for i, t := range tails {
		acc += t.prob
		cum[i] = acc
	}
	fold := func(v int32) int32 {
		if cfg.PCsPerFunction > 0 {
			return v % int32(cfg.PCsPerFunction)
		}
		return v
	}
	seen := make(map[uint64]struct{}, n)
	h := fnv.New64a()
	var buf [4]byte
	for attempts := 0; len(s.weight) < n; attempts++ {
		if attempts > 20*n+1000 {
			panic(fmt.Sprintf("synth: cannot make %d unique stacks of depth %d-%d over %d functions", n, cfg.MinDepth, cfg.MaxDepth, cfg.Functions))
		}
		depth := cfg.MinDepth + r.Intn(cfg.MaxDepth-cfg.MinDepth+1)
		x := r.Float64() * acc
		ti := 0
		for ti < len(cum)-1 && x >= cum[ti] {
			ti++
		}
		root := u.rootIDs[r.Intn(len(u.rootIDs))]
		tl := u.tailIDs[ti]
		if depth < len(root)+len(tl)+1 {
			tl, ti = nil, 0
		}
		if depth < len(root)+1 {
			root = root[:max(0, depth-1)]
		}
		start := len(s.frames)
		for _, f := range root {
			s.frames = append(s.frames, f<<varBits)
		}
		s.frames = u.userFrames(r, s.frames, len(root), depth-len(root)-len(tl), tl, ti, fold)
		s.frames = u.tailFrames(r, s.frames, tl, fold)
		h.Reset()
		for _, c := range s.frames[start:] {
			buf[0], buf[1], buf[2], buf[3] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
			h.Write(buf[:])
		}
		w := 1 + int64(math.Min(r.ExpFloat64()*r.ExpFloat64()*1.5, 500))
		if _, dup := seen[h.Sum64()]; dup {
			s.frames = s.frames[:start]
			continue
		}
		seen[h.Sum64()] = struct{}{}
		s.off = append(s.off, int32(len(s.frames)))
		s.weight = append(s.weight, w)
		s.tail = append(s.tail, uint8(ti))
	}
	return s
}

// userFrames appends a stack's nUser user frames, caller first, below a
// root of nRoot frames: a walk of the call graph from an entry point (or
// main.main) that ends in a leaf PC, or in a call into the runtime tail tl
// (tails[ti]).
func (u *universe) userFrames(r *rand.Rand, frames []int32, nRoot, nUser int, tl []int32, ti int, fold func(int32) int32) []int32 {
	var cur int32
	switch nRoot {
	case 2: // runtime.main → main.main → ...
		cur = u.mainFn
	case 1: // runtime.goexit → a goroutine's entry point
		cur = int32(r.Intn(u.entries))
	default: // a stack too short for a root: any function
		cur = int32(r.Intn(u.nUser))
	}
	for j := range nUser {
		var v, next int32
		switch {
		case int(cur) >= u.nUser: // main.main starts a service loop
			next = int32(r.Intn(u.entries))
			v = next % leafVariant
		case j == nUser-1 && len(tl) > 0: // calls into the runtime tail
			v = int32(len(u.callees[cur]) + ti%4)
		case j == nUser-1: // the leaf: any PC in the body
			v = int32(leafVariant + r.Intn(int(u.nleaf[cur])))
		default:
			cs := u.callees[cur]
			ci := min(len(cs)-1, int(r.ExpFloat64()*1.5))
			v, next = int32(ci), cs[ci]
		}
		frames = append(frames, cur<<varBits|fold(v))
		cur = next
	}
	return frames
}

// tailFrames appends the runtime tail tl, ending in a leaf PC.
func (u *universe) tailFrames(r *rand.Rand, frames []int32, tl []int32, fold func(int32) int32) []int32 {
	for j, f := range tl {
		var v int32
		if j == len(tl)-1 {
			v = int32(leafVariant + r.Intn(int(u.nleaf[f])))
		} else {
			// The call site of the next frame: runtime functions shared
			// by several tails (mallocgc, gopark, ...) call different
			// callees from different PCs.
			v = (tl[j+1] - int32(u.nUser)) % leafVariant
		}
		frames = append(frames, f<<varBits|fold(v))
	}
	return frames
}

// inlined reports the helper inlined at a location of f, or -1: one call site
// in ten carries an inlined hot helper.
func (u *universe) inlined(f, v int32) int32 {
	if int(f) >= u.nUser || (f*31+v*7)%10 != 0 {
		return -1
	}
	return int32(u.entries + (int(f)*131+int(v))%u.hot)
}

// shift returns New's weight w of a stack (frames root first) with tail
// ti: the sample's own function (the deepest user frame) drives the shift,
// plus the tail's category.
func (u *universe) shift(w float64, frames []int32, ti uint8) float64 {
	for j := len(frames) - 1; j >= 0; j-- {
		if f := frames[j] >> varBits; int(f) < u.nUser {
			w *= u.factor[f]
			break
		}
	}
	return w * tails[ti].scale
}

func (u *universe) build(cfg Config, s *stackSet) *pprofile.Profile {
	side := cfg.Side
	r := rand.New(rand.NewSource(cfg.Seed*104729 + int64(side)*31 + 5))
	const mapStart = 0x400000
	m := &pprofile.Mapping{
		ID: 1, Start: mapStart, Limit: mapStart + uint64(len(u.names))<<varBits*0x40 + 0x1000,
		File: "/usr/local/bin/server", BuildID: fmt.Sprintf("synth-%d", cfg.Seed),
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true,
	}
	p := &pprofile.Profile{
		SampleType:    []*pprofile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &pprofile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        Period,
		TimeNanos:     1_750_000_000_000_000_000 + int64(side)*60_000_000_000,
		DurationNanos: 30_000_000_000,
		Mapping:       []*pprofile.Mapping{m},
	}
	// Functions and locations are interned by their dense index (function
	// index, frame code) in slices, faster than the builder's maps; the
	// builder numbers them.
	b := build.New[int32, int32](p)
	funcs := make([]*pprofile.Function, len(u.names))
	fn := func(f int32) *pprofile.Function {
		if funcs[f] == nil {
			name := u.names[f]
			if side == New && u.renamed[f] != "" {
				name = u.renamed[f]
			}
			funcs[f] = b.AddFunction(&pprofile.Function{Name: name, SystemName: name, Filename: u.files[f], StartLine: u.lines[f]})
		}
		return funcs[f]
	}
	locs := make([]*pprofile.Location, len(u.names)<<varBits)
	loc := func(code int32) *pprofile.Location {
		if locs[code] == nil {
			f, v := code>>varBits, code&(1<<varBits-1)
			l := &pprofile.Location{Mapping: m, Address: mapStart + uint64(code)*0x40 + 0x10}
			line := u.lines[f] + 3 + int64(v)*7
			if h := u.inlined(f, v); h >= 0 {
				l.Line = append(l.Line, pprofile.Line{Function: fn(h), Line: u.lines[h] + 2})
			}
			l.Line = append(l.Line, pprofile.Line{Function: fn(f), Line: line})
			locs[code] = b.AddLocation(l)
		}
		return locs[code]
	}
	first := 0
	if side == New {
		first = len(s.weight) - cfg.Stacks
	}
	p.Sample = make([]*pprofile.Sample, 0, cfg.Stacks)
	samples := make([]pprofile.Sample, cfg.Stacks)
	values := make([]int64, 2*cfg.Stacks)
	nFrames := int(s.off[first+cfg.Stacks] - s.off[first])
	locBuf := make([]*pprofile.Location, 0, nFrames)
	for i := range cfg.Stacks {
		k := first + i
		fr := s.frames[s.off[k]:s.off[k+1]]
		w := float64(s.weight[k]) * (0.8 + 0.4*r.Float64())
		if side == New {
			w = u.shift(w, fr, s.tail[k])
		}
		c := max(1, int64(math.Round(w)))
		start := len(locBuf)
		for j := len(fr) - 1; j >= 0; j-- { // leaf first
			locBuf = append(locBuf, loc(fr[j]))
		}
		smp := &samples[i]
		smp.Location = locBuf[start:len(locBuf):len(locBuf)]
		smp.Value = values[2*i : 2*i+2 : 2*i+2]
		smp.Value[0], smp.Value[1] = c, c*Period
		p.Sample = append(p.Sample, smp)
	}
	return p
}

// Labelled gives some of p's samples labels an analysis reads (thread,
// comm, a profiler's) and some it does not (numeric ones, a key with two
// values), and adds a sample of a profiler goroutine's frame
// (runtime/pprof.profileWriter), which readers drop. It returns p.
func Labelled(p *pprofile.Profile) *pprofile.Profile {
	for i, s := range p.Sample {
		switch i % 7 {
		case 1:
			s.Label = map[string][]string{labels.Thread: {fmt.Sprint("t", i%5)}}
		case 2:
			s.Label = map[string][]string{"comm": {"synth"}, "x": {"a", "b"}}
		case 4:
			s.Label = map[string][]string{labels.Profiler: {"true"}}
		case 3:
			s.NumLabel = map[string][]int64{"bytes": {int64(i)}}
			s.NumUnit = map[string][]string{"bytes": {"bytes"}}
		}
	}
	fn := &pprofile.Function{ID: uint64(len(p.Function) + 1), Name: "runtime/pprof.profileWriter"}
	loc := &pprofile.Location{ID: uint64(len(p.Location) + 1), Line: []pprofile.Line{{Function: fn}}}
	p.Function, p.Location = append(p.Function, fn), append(p.Location, loc)
	ps := &pprofile.Sample{Location: []*pprofile.Location{p.Location[0], loc}, Value: make([]int64, len(p.SampleType))}
	for i := range ps.Value {
		ps.Value[i] = 5
	}
	p.Sample = append(p.Sample, ps)
	return p
}
