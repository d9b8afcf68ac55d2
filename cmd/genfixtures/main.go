// Command genfixtures writes the folded-stack fixtures in testdata/ that the
// tests, the README and the default demo use:
//
//	go run ./cmd/genfixtures            # rewrites testdata/dotnet/*.folded
//	go run ./cmd/genfixtures -check     # exits 1 if the committed files differ
//
// testdata/dotnet/net10.folded and net11.folded model the EventPipe
// SampleProfiler comparison in the .NET 11 Kestrel JSON regression
// (../shared/background/dotnet11-kestrel-json-regression.txt): 10,000
// samples per side, TraceEvent-style `Module!Method` frames, `Thread (N)`
// roots and CPU_TIME/UNMANAGED_CODE_TIME/BLOCKED_TIME pseudo-leaves, with
// the shares of the report's Trace Analysis table: total wait/sync 80.4% →
// 92.3%, LowLevelLock.WaitAndAcquire 0.27% → 4.86%, PollGCWorker 5.52% →
// 10.91%, two new WaitSubsystem rows, and the socket wait moving from the
// native SystemNative_WaitForSocketEvents to managed
// Interop+Sys.WaitForSocketEvents.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// stack is one folded stack (frames root first) and its sample count.
type stack struct {
	frames []string
	count  int
}

const (
	corelib = "System.Private.CoreLib!System.Threading."
	kestrel = "Microsoft.AspNetCore.Server.Kestrel.Core!Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http."
	sockets = "System.Net.Sockets!"
)

var (
	workerRoot  = []string{corelib + "Thread.StartCallback", corelib + "PortableThreadPool+WorkerThread.WorkerThreadStart"}
	requestRoot = append(append([]string{}, workerRoot...),
		corelib+"ExecutionContext.RunFromThreadPoolDispatchLoop",
		kestrel+"HttpProtocol.ProcessRequests")
	engineRoot = []string{corelib + "Thread.StartCallback", sockets + "System.Net.Sockets.SocketAsyncEngine.EventLoop"}
	timerRoot  = []string{corelib + "Thread.StartCallback", corelib + "TimerQueue.TimerThread"}
)

// split spreads count samples over n threads, deterministically, so the
// fixture has several distinct stacks per method like a real capture.
func split(frames []string, leaf string, count int, threads []int) []stack {
	var out []stack
	left := count
	for i, t := range threads {
		c := count / len(threads)
		if i == len(threads)-1 {
			c = left
		}
		left -= c
		if c == 0 {
			continue
		}
		f := append([]string{fmt.Sprintf("Thread (%d)", t)}, frames...)
		if leaf != "" {
			f = append(f, leaf)
		}
		out = append(out, stack{frames: f, count: c})
	}
	return out
}

func with(root []string, frames ...string) []string {
	return append(append([]string{}, root...), frames...)
}

// shares holds one side's sample counts (out of 10,000) per modelled method.
type shares struct {
	jsonWrite, processRequests, memmove, opQueue int // cpu
	waitAndAcquire, enterSlow                    int // lock-contention
	pollGC                                       int // gc
	nativeSocketWait, managedSocketWait          int // io
	lifoWaitForSignal, lifoWaitNative            int // wait (thread pool idle)
	threadWaitInfo, waitLocked                   int // wait (managed WaitSubsystem, .NET 11)
	monitorWait, mresWait                        int // wait
}

var net10 = shares{
	jsonWrite: 620, processRequests: 540, memmove: 400, opQueue: 400,
	waitAndAcquire: 27, enterSlow: 151, pollGC: 552,
	nativeSocketWait: 1530, lifoWaitForSignal: 1280, lifoWaitNative: 3100,
	monitorWait: 900, mresWait: 500,
}

var net11 = shares{
	jsonWrite: 250, processRequests: 210, memmove: 160, opQueue: 150,
	waitAndAcquire: 486, enterSlow: 160, pollGC: 1091,
	managedSocketWait: 1551, lifoWaitNative: 3400,
	threadWaitInfo: 456, waitLocked: 386,
	monitorWait: 1000, mresWait: 700,
}

func build(s shares) []stack {
	threads := []int{4101, 4102, 4103}
	lifo := with(workerRoot, corelib+"LowLevelLifoSemaphore.Wait")
	var out []stack
	add := func(st []stack) { out = append(out, st...) }
	add(split(with(requestRoot, "System.Text.Json!System.Text.Json.Utf8JsonWriter.WriteStringValue(value class System.String)"), "CPU_TIME", s.jsonWrite, threads))
	add(split(with(requestRoot, kestrel+"Http1Connection.ProcessRequestsAsync"), "CPU_TIME", s.processRequests, threads))
	add(split(with(requestRoot, "System.Private.CoreLib!System.Buffer.Memmove(unsigned int8&,unsigned int8&,native uint)"), "CPU_TIME", s.memmove, threads))
	add(split(with(engineRoot, sockets+"System.Net.Sockets.SocketAsyncContext+OperationQueue`1.Process"), "CPU_TIME", s.opQueue, []int{4200}))
	add(split(with(lifo, corelib+"LowLevelLock.Acquire", corelib+"LowLevelLock.WaitAndAcquire"), "UNMANAGED_CODE_TIME", s.waitAndAcquire, threads))
	add(split(with(requestRoot, corelib+"Monitor.Enter_Slowpath(class System.Object)"), "BLOCKED_TIME", s.enterSlow, threads))
	add(split(with(requestRoot, corelib+"Thread.<PollGC>g__PollGCWorker|74_0"), "UNMANAGED_CODE_TIME", s.pollGC, threads))
	add(split(with(engineRoot, "libSystem.Native!SystemNative_WaitForSocketEvents"), "UNMANAGED_CODE_TIME", s.nativeSocketWait, []int{4200}))
	add(split(with(engineRoot, sockets+"Interop+Sys.WaitForSocketEvents(int,struct SocketEvent*,int32*)"), "BLOCKED_TIME", s.managedSocketWait, []int{4200}))
	add(split(with(lifo, corelib+"LowLevelLifoSemaphore.WaitForSignal(int32)"), "UNMANAGED_CODE_TIME", s.lifoWaitForSignal, threads))
	add(split(with(lifo, corelib+"LowLevelLifoSemaphore.WaitNative"), "UNMANAGED_CODE_TIME", s.lifoWaitNative, threads))
	add(split(with(lifo, corelib+"WaitSubsystem+ThreadWaitInfo.Wait(int32,bool,bool)"), "BLOCKED_TIME", s.threadWaitInfo, threads))
	add(split(with(lifo, corelib+"WaitSubsystem+WaitableObject.Wait_Locked(int32,class ThreadWaitInfo,bool)"), "BLOCKED_TIME", s.waitLocked, threads))
	add(split(with(timerRoot, corelib+"Monitor.Wait(class System.Object,int32)"), "BLOCKED_TIME", s.monitorWait, []int{4300}))
	add(split(with(requestRoot, corelib+"ManualResetEventSlim.Wait(int32,value class CancellationToken)"), "BLOCKED_TIME", s.mresWait, threads))
	return out
}

// render writes stacks in folded form, sorted so the file is byte-stable.
func render(stacks []stack) []byte {
	lines := make([]string, 0, len(stacks))
	for _, s := range stacks {
		lines = append(lines, fmt.Sprintf("%s %d", strings.Join(s.frames, ";"), s.count))
	}
	sort.Strings(lines)
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Files returns the fixture files by path relative to the repository root.
func Files() map[string][]byte {
	return map[string][]byte{
		"testdata/dotnet/net10.folded": render(build(net10)),
		"testdata/dotnet/net11.folded": render(build(net11)),
	}
}

func main() {
	check := flag.Bool("check", false, "only report whether the committed fixtures are up to date")
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	names := make([]string, 0)
	files := Files()
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	stale := 0
	for _, n := range names {
		path := filepath.Join(*root, n)
		if *check {
			old, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(old, files[n]) {
				fmt.Fprintf(os.Stderr, "genfixtures: %s is out of date; run go run ./cmd/genfixtures\n", n)
				stale++
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "genfixtures: %v\n", err)
			os.Exit(2)
		}
		if err := os.WriteFile(path, files[n], 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "genfixtures: %v\n", err)
			os.Exit(2)
		}
	}
	if stale > 0 {
		os.Exit(1)
	}
}
