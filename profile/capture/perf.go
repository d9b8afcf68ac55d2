package capture

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/internal/perfopts"
)

// PerfKind is the manifest kind of a perf recording: `perf script` text of
// the process recorded during the window (Options.PerfPID).
const PerfKind = "perf"

// PerfFile is the perf recording's file name in a capture folder: perf
// script text, gzipped (a busy server's text is tens of MiB a second
// before, about a fifteenth of that after).
const PerfFile = "perf.txt.gz"

// DefaultPerfMaxScript bounds the perf script text stored (Options.
// PerfMaxScript's default): a busy server recorded with stacks at perf's
// default 4000 samples per second writes tens of MiB a second.
const DefaultPerfMaxScript = 256 << 20

// PerfStopGrace is how long perf record is given to write its data after
// the SIGINT that ends the window before it is killed.
const PerfStopGrace = 10 * time.Second

// perfMaxData bounds the perf.data file perf record writes (perf stops
// recording there).
const perfMaxData = "1G"

// perfScriptTimeout bounds the `perf script` run.
const perfScriptTimeout = 2 * time.Minute

// PerfStatus says whether perf can record here, and what: the perf binary
// and the events a recording takes, or why it cannot.
type PerfStatus struct {
	Path   string   // the perf binary found in PATH
	Events []string // cpu-clock, and sched:sched_switch where it records
	// Err is why perf cannot record (nil: it can).
	Err error
}

// perfProbes caches probe answers per perf binary, so a process probes
// once (a PATH without perf is looked up again, which is cheap).
var perfProbes sync.Map // path → *perfProbe

type perfProbe struct {
	once sync.Once
	st   PerfStatus
}

// ProbePerf says whether perf can record here: it is in PATH,
// /proc/sys/kernel/perf_event_paranoid allows it, and a quick `perf record
// -e cpu-clock -g -o X -- true` succeeds; then whether sched:sched_switch
// records too (with --switch-events, for off-CPU time). The answer is
// cached per perf binary for the life of the process.
func ProbePerf() PerfStatus {
	path, err := exec.LookPath("perf")
	if err != nil {
		return PerfStatus{Err: errors.New("perf is not installed (not found in PATH)")}
	}
	v, _ := perfProbes.LoadOrStore(path, &perfProbe{})
	p := v.(*perfProbe)
	p.once.Do(func() { p.st = probePerf(path) })
	return p.st
}

// perfCPUArgs and perfSchedArgs are the events perf record takes.
var (
	perfCPUArgs   = []string{"-g", "-e", "cpu-clock"}
	perfSchedArgs = []string{"-e", "sched:sched_switch", "--switch-events"}
)

func probePerf(path string) PerfStatus {
	paranoid := "unknown"
	if b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid"); err == nil {
		paranoid = strings.TrimSpace(string(b))
	}
	tmp, err := os.MkdirTemp("", "profdiff-perf-probe-")
	if err != nil {
		return PerfStatus{Path: path, Err: fmt.Errorf("perf probe: %v", err)}
	}
	defer os.RemoveAll(tmp)
	try := func(args []string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		all := perfopts.Record(path, append(append([]string{"-o", filepath.Join(tmp, "probe.data")}, args...), "--", "true")...)
		out, err := exec.CommandContext(ctx, path, all...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, lastLine(out))
		}
		return nil
	}
	if err := try(perfCPUArgs); err != nil {
		return PerfStatus{Path: path, Err: fmt.Errorf("perf record -e cpu-clock -g fails here (perf_event_paranoid=%s, uid %d): %v", paranoid, os.Getuid(), err)}
	}
	st := PerfStatus{Path: path, Events: []string{"cpu-clock"}}
	if try(append(slicesClone(perfCPUArgs), perfSchedArgs...)) == nil {
		st.Events = append(st.Events, "sched:sched_switch")
	}
	return st
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// lastLine is the last non-empty line of a command's output, for messages.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// PerfRecorder is a perf record attached to one local process, started
// with its events disabled (StartPerf), so that perf's start-up —
// attaching to every thread, a fraction of a second, seconds on a busy
// machine — comes before the window it records: its owner waits for it
// (Ready) before the window opens, and Capture enables it when its
// window opens and stops it when the window closes (Options.Perf).
type PerfRecorder struct {
	st       PerfStatus
	err      error // why it cannot record; nothing else is set then
	pid      int
	tmp      string // holds perf.data
	cmd      *exec.Cmd
	stderr   *limitedBuffer
	exited   chan struct{} // closed once perf record has exited
	waitErr  error         // its exit, once exited is closed
	ctl, ack *os.File      // perf's --control pipes: our ends
	events   []string      // perf record's events and target
	closed   bool
	// sent counts the commands written to perf's control pipe, acked
	// the acknowledgements read back (perf answers each in order);
	// acksEnd is closed when the pipe ends, ackErr then saying why.
	// sendMu keeps the commands in the order they are counted; ackMu
	// guards ackNext, closed and replaced at each acknowledgement.
	sendMu      sync.Mutex
	sent, acked atomic.Int64
	ackMu       sync.Mutex
	ackNext     chan struct{}
	acksEnd     chan struct{}
	ackErr      error
}

// StartPerf starts `perf record` on pid with its events disabled, writing
// into a temporary folder. When perf cannot record here (see ProbePerf)
// or does not start, the recorder holds why (Err), and a capture given it
// notes that and goes on. Close ends perf and removes the folder on every
// path.
func StartPerf(pid int) *PerfRecorder {
	st := ProbePerf()
	if st.Err != nil {
		return &PerfRecorder{err: st.Err, pid: pid}
	}
	r, err := startPerf(st, pid)
	if err != nil {
		return &PerfRecorder{err: fmt.Errorf("starting %s: %v", st.Path, err), pid: pid}
	}
	return r
}

// Err is why the recorder cannot record (nil: it can).
func (r *PerfRecorder) Err() error { return r.err }

func startPerf(st PerfStatus, pid int) (*PerfRecorder, error) {
	tmp, err := os.MkdirTemp("", "profdiff-perf-")
	if err != nil {
		return nil, err
	}
	events := slicesClone(perfCPUArgs)
	if len(st.Events) > 1 {
		events = append(events, perfSchedArgs...)
	}
	events = append(events, "-p", strconv.Itoa(pid))
	r := &PerfRecorder{st: st, pid: pid, tmp: tmp, stderr: &limitedBuffer{max: 64 << 10}, exited: make(chan struct{}), events: events}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	r.ctl, r.ack = ctlW, ackR
	// perfopts.Record (no BPF side-band, whose 1 s poll each recording
	// would wait out; no copies into ~/.debug); -D -1: events start
	// disabled, enabled through the control pipe (fd 3, acknowledged on
	// fd 4); --max-size bounds perf.data.
	args := perfopts.Record(st.Path, "-D", "-1", "--control", "fd:3,4", "--max-size="+perfMaxData, "-o", filepath.Join(tmp, "perf.data"))
	r.cmd = exec.Command(st.Path, append(args, events...)...)
	r.cmd.Stderr = r.stderr
	r.cmd.ExtraFiles = []*os.File{ctlR, ackW}
	err = r.cmd.Start()
	ctlR.Close()
	ackW.Close()
	if err != nil {
		r.ctl.Close()
		r.ack.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	go func() {
		r.waitErr = r.cmd.Wait()
		close(r.exited)
	}()
	r.ackNext, r.acksEnd = make(chan struct{}), make(chan struct{})
	go r.readAcks()
	return r, nil
}

// readAcks counts perf's acknowledgements ("ack" lines on the ack pipe)
// until the pipe ends.
func (r *PerfRecorder) readAcks() {
	defer close(r.acksEnd)
	br := bufio.NewReader(r.ack)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("perf record exited: %s", r.stderr.lastLine())
			}
			r.ackErr = err
			return
		}
		// perf writes "ack\n" with its C string's NUL.
		if line = strings.TrimLeft(line, "\x00"); !strings.HasPrefix(line, "ack") {
			r.ackErr = fmt.Errorf("perf answered %q on its control pipe", strings.TrimSpace(line))
			return
		}
		r.ackMu.Lock()
		r.acked.Add(1)
		close(r.ackNext)
		r.ackNext = make(chan struct{})
		r.ackMu.Unlock()
	}
}

// send writes cmd to perf's control pipe. It returns at once; the channel
// says, once, whether perf acknowledged it within perfAckTimeout (an
// acknowledgement owed to an earlier command that timed out is not taken
// for this one's).
func (r *PerfRecorder) send(cmd string) <-chan error {
	res := make(chan error, 1)
	r.sendMu.Lock()
	n := r.sent.Add(1)
	_, err := r.ctl.Write([]byte(cmd + "\n"))
	r.sendMu.Unlock()
	if err != nil {
		res <- fmt.Errorf("sending %q to perf record: %v", cmd, err)
		return res
	}
	go func() {
		timeout := time.NewTimer(perfAckTimeout)
		defer timeout.Stop()
		for {
			r.ackMu.Lock()
			next, got := r.ackNext, r.acked.Load()
			r.ackMu.Unlock()
			if got >= n {
				break
			}
			select {
			case <-next:
			case <-r.acksEnd:
				if r.acked.Load() < n {
					res <- fmt.Errorf("perf record did not acknowledge %s: %v", cmd, r.ackErr)
					return
				}
			case <-timeout.C:
				res <- fmt.Errorf("perf record did not acknowledge %s within %v", cmd, perfAckTimeout)
				return
			}
		}
		res <- nil
	}()
	return res
}

// Ready waits until perf has attached to the process and reads its
// control pipe, so that enabling it when a window opens takes effect at
// once: it sends "disable", which changes nothing (the events are off
// until the capture enables them) and is acknowledged only from perf's
// main loop. It returns how long that took, or why perf is not ready
// (it died, did not answer within 10 s, or ctx ended). A recorder that
// cannot record returns at once with its Err.
func (r *PerfRecorder) Ready(ctx context.Context) (time.Duration, error) {
	if r.err != nil {
		return 0, r.err
	}
	start := time.Now()
	select {
	case err := <-r.send("disable"):
		return time.Since(start), err
	case <-ctx.Done():
		return time.Since(start), context.Cause(ctx)
	}
}

// perfLateNote is the acknowledgement delay from which a capture notes
// that its perf recording is late.
const perfLateNote = 250 * time.Millisecond

// perfAckTimeout bounds the wait for perf's acknowledgement of a command.
const perfAckTimeout = 10 * time.Second

// enable turns the events on. It returns at once; the channel says, once,
// whether perf acknowledged within perfAckTimeout.
func (r *PerfRecorder) enable() <-chan error { return r.send("enable") }

// command is the perf record command line, as the manifest records it
// (less its control pipes and output file).
func (r *PerfRecorder) command() string {
	return "perf record " + strings.Join(r.events, " ")
}

// stop ends the recording: SIGINT (perf writes its data and exits), then
// SIGKILL after grace. It says how perf ended when that was not the
// SIGINT's clean exit: it died before (the process it records exited, or
// perf failed), or it had to be killed.
func (r *PerfRecorder) stop(grace time.Duration) error {
	select {
	case <-r.exited:
		return fmt.Errorf("perf record ended before the window closed (%v): %s", exitText(r.waitErr), r.stderr.lastLine())
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-r.exited:
		if r.waitErr != nil && !isSIGINTExit(r.waitErr) {
			return fmt.Errorf("perf record failed (%v): %s", exitText(r.waitErr), r.stderr.lastLine())
		}
		return nil
	case <-t.C:
		_ = r.cmd.Process.Kill()
		<-r.exited
		return fmt.Errorf("perf record did not stop within %v of SIGINT and was killed", grace)
	}
}

// Close ends perf record if it still runs (SIGKILL: what it recorded is
// not wanted any more), waits for it and removes its temporary folder. It
// may be called more than once.
func (r *PerfRecorder) Close() {
	if r == nil || r.closed || r.err != nil {
		return
	}
	r.closed = true
	select {
	case <-r.exited:
	default:
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
	r.ctl.Close()
	r.ack.Close()
	os.RemoveAll(r.tmp)
}

// isSIGINTExit reports whether perf ended by the SIGINT itself.
func isSIGINTExit(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && (ws.Signaled() && ws.Signal() == syscall.SIGINT || ws.ExitStatus() == 130)
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// limitedBuffer keeps the first max bytes written to it and drops the
// rest; it may be read while a command writes to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// String is what was kept so far.
func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// lastLine is the last non-empty line written so far.
func (l *limitedBuffer) lastLine() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return lastLine(l.buf.Bytes())
}

// errScriptLimit stops copying perf script's output at the limit.
var errScriptLimit = errors.New("perf script output limit reached")

// capWriter writes to w until max bytes have passed, then fails.
type capWriter struct {
	w   io.Writer
	n   int64
	max int64
	hit bool
}

func (c *capWriter) Write(p []byte) (int, error) {
	if room := c.max - c.n; int64(len(p)) > room {
		c.hit = true
		n, _ := c.w.Write(p[:room])
		c.n += int64(n)
		return n, errScriptLimit
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// script runs `perf script` on the recording into dir/PerfFile, at most
// max bytes of it (cut at the last complete sample when the limit is hit,
// which a note says), checks that profdiff loads it, and returns its
// manifest entry and notes: a note also says when perf lost events, or
// when the samples of a recording that was not cut span less than half
// the window.
func (r *PerfRecorder) script(ctx context.Context, dir string, window time.Duration, max, maxSize int64) (*File, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, perfScriptTimeout)
	defer cancel()
	part := filepath.Join(dir, "."+PerfFile+partSuffix)
	defer os.Remove(part)
	out, err := os.Create(part)
	if err != nil {
		return nil, nil, err
	}
	args := []string{"script", "-i", filepath.Join(r.tmp, "perf.data")}
	if len(r.st.Events) > 1 {
		args = append(args, "--show-switch-events")
	}
	cmd := exec.CommandContext(ctx, r.st.Path, args...)
	stderr := &limitedBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	cw := &capWriter{w: out, max: max}
	cmd.Stdout = cw
	err = cmd.Run()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	var notes []string
	switch {
	case cw.hit:
		if err := cutAtLastRecord(part); err != nil {
			return nil, nil, err
		}
		notes = append(notes, fmt.Sprintf("perf: perf script output cut at the limit of %s (the last samples of the window are missing)", profile.FormatSize(max)))
	case err != nil:
		return nil, nil, fmt.Errorf("perf script failed (%v): %s", err, stderr.lastLine())
	}
	if lost := lostLine(r.stderr.String() + "\n" + stderr.String()); lost != "" {
		notes = append(notes, "perf: perf says "+strconv.Quote(lost)+" (perf could not keep up: the recording misses those events)")
	}
	f, notes, err := r.storeScript(ctx, dir, part, notes, maxSize)
	if err == nil && !cw.hit {
		if short := shortSpan(f, window, r.stderr.lastLine()); short != "" {
			notes = append(notes, short)
		}
	}
	return f, notes, err
}

// storeScript loads the perf script text as profdiff diff does, counts
// its samples and moves it into place.
func (r *PerfRecorder) storeScript(ctx context.Context, dir, part string, notes []string, maxSize int64) (*File, []string, error) {
	f := &File{Kind: PerfKind, Path: PerfFile, Events: r.st.Events, Command: r.command()}
	l, err := profile.Load(ctx, part, profile.Options{MaxSize: maxSize, AllowEmpty: true})
	if err != nil {
		return nil, notes, fmt.Errorf("perf script text does not load: %v", err)
	}
	f.SpanNanos = l.Profile.DurationNanos
	if f.Samples = len(l.Profile.Sample); f.Samples == 0 {
		notes = append(notes, "perf: the recording holds no samples (the process did not run in the window?)")
	}
	if err := gzipFile(part); err != nil {
		return nil, notes, err
	}
	n, err := publish(part, filepath.Join(dir, PerfFile))
	if err != nil {
		return nil, notes, err
	}
	f.Bytes = n
	return f, notes, nil
}

// lostLine is the first line of perf's output that says events were lost
// ("Processed 81234 events and lost 12 chunks!"), or "".
func lostLine(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); strings.Contains(line, " lost ") {
			return line
		}
	}
	return ""
}

// shortSpan says, for a recording whose samples span less than half of
// its window, how little it holds; "" otherwise. A process that barely
// ran in the window records little, as does a perf that started late,
// stopped early or lost its events: the note names both, with perf
// record's last words.
func shortSpan(f *File, window time.Duration, lastWords string) string {
	if window <= 0 || f.Samples == 0 || time.Duration(f.SpanNanos) >= window/2 {
		return ""
	}
	s := fmt.Sprintf("perf: the recording's %d samples span only %v of the %v window: the process barely ran, or perf missed most of the window", f.Samples, time.Duration(f.SpanNanos).Round(time.Microsecond), window)
	if lastWords != "" {
		s += " (perf record said: " + strconv.Quote(lastWords) + ")"
	}
	return s
}

// cutAtLastRecord truncates a perf script file after its last blank line,
// so a sample cut by the size limit is dropped whole.
func cutAtLastRecord(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	const tail = 1 << 20
	off := max(st.Size()-tail, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return err
	}
	keep := int64(0)
	if i := bytes.LastIndex(buf, []byte("\n\n")); i >= 0 {
		keep = off + int64(i) + 2
	}
	return f.Truncate(keep)
}

// perfRun is a recording during a capture's window: enabled when the
// window opens, stopped by its own timer at the window's end, or when the
// context ends.
type perfRun struct {
	rec    *PerfRecorder
	ackErr error // perf did not acknowledge enable
	// ackDelay is how long after the window opened perf acknowledged.
	ackDelay time.Duration
	stopped  chan struct{}
	stopErr  error
}

// beginPerf enables rec for the window; a recorder that cannot record
// gets a note in m saying why (the capture goes on without it), and nil.
func (pl *plan) beginPerf(ctx context.Context, m *Manifest, rec *PerfRecorder) *perfRun {
	m.Params["perf_pid"] = rec.pid
	if rec.err != nil {
		pl.perfNote(m, fmt.Sprintf("perf: not recorded: %v", rec.err))
		return nil
	}
	fmt.Fprintf(pl.log, "capture: perf      %s for %d s\n", rec.command(), pl.seconds)
	p := &perfRun{rec: rec, stopped: make(chan struct{})}
	sent := time.Now()
	acked := rec.enable()
	go func() {
		defer close(p.stopped)
		// The window is timed from perf's acknowledgement: on a busy
		// machine perf may take a while to act on "enable" (seconds were
		// seen), and the recording is then as long as the others, late
		// by that much, rather than short or empty.
		select {
		case p.ackErr = <-acked:
			p.ackDelay = time.Since(sent)
		case <-ctx.Done():
		}
		if p.ackErr == nil && ctx.Err() == nil {
			t := time.NewTimer(pl.window)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		}
		p.stopErr = rec.stop(PerfStopGrace)
	}()
	return p
}

func (pl *plan) perfNote(m *Manifest, note string) {
	m.Notes = append(m.Notes, note)
	fmt.Fprintf(pl.log, "capture: %s\n", note)
}

// finish waits for the recording to stop, turns it into perf script text
// in the folder and adds it to m; what went wrong goes to m's errors
// (perf died, was killed, or its text does not load) and the log.
func (p *perfRun) finish(ctx context.Context, pl *plan, m *Manifest) {
	<-p.stopped
	fail := func(err error) {
		m.Errors = append(m.Errors, PerfKind+": "+err.Error())
		fmt.Fprintf(pl.log, "capture: error: %s: %v\n", PerfKind, err)
	}
	if ctx.Err() != nil {
		fail(errors.New("interrupted: perf script not run"))
		return
	}
	if p.ackErr != nil {
		fail(p.ackErr)
		return
	}
	if p.ackDelay > perfLateNote {
		pl.perfNote(m, fmt.Sprintf("perf: enabled %v after the window opened (a busy machine); its recording is as long, that much later", p.ackDelay.Round(time.Millisecond)))
	}
	if p.stopErr != nil {
		// Logged; what perf wrote before it ended may still be readable.
		fmt.Fprintf(pl.log, "capture: %s: %v\n", PerfKind, p.stopErr)
		m.Notes = append(m.Notes, PerfKind+": "+p.stopErr.Error())
	}
	f, notes, err := p.rec.script(ctx, pl.out, pl.window, pl.perfMax, pl.maxSize)
	for _, note := range notes {
		pl.perfNote(m, note)
	}
	if err != nil {
		fail(err)
		return
	}
	m.Files = append(m.Files, *f)
	fmt.Fprintf(pl.log, "capture: %-9s %s, %d samples (%s) → %s\n", f.Kind, profile.FormatSize(f.Bytes), f.Samples, strings.Join(f.Events, ", "), filepath.Join(pl.out, f.Path))
}
