package symbolize

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// run runs a command and returns its stdout, failing the test on error.
func run(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out)
}

// buildC compiles testdata/elf/<src> with gcc and the flags into dir.
func buildC(t *testing.T, dir, out, src string, flags ...string) string {
	t.Helper()
	gcc := tool(t, "gcc")
	bin := filepath.Join(dir, out)
	run(t, "", gcc, append(flags, "-o", bin, filepath.Join("testdata", "elf", src))...)
	return bin
}

// openT opens an Object or fails the test.
func openT(t *testing.T, path string) Object {
	t.Helper()
	o, err := OpenObject(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// nmSym is one function symbol as nm prints it.
type nmSym struct {
	addr, size uint64
	name       string
}

// nmFuncs returns the text symbols (T, t) in nm's output, whose lines
// are "ADDR [SIZE] TYPE NAME"; sizeBase is 16 for GNU nm -S, 10 for go
// tool nm -size.
func nmFuncs(out string, sizeBase int) []nmSym {
	var syms []nmSym
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		var s nmSym
		s.addr, _ = strconv.ParseUint(f[0], 16, 64)
		typ, rest := f[1], f[2:]
		if len(f[1]) > 1 || len(f) >= 4 && len(f[2]) == 1 {
			s.size, _ = strconv.ParseUint(f[1], sizeBase, 64)
			typ, rest = f[2], f[3:]
		}
		s.name = strings.Join(rest, " ")
		if len(typ) == 1 && strings.Contains("Tt", typ) && s.addr != 0 {
			syms = append(syms, s)
		}
	}
	return syms
}

// names returns the frames' names, innermost first.
func names(fr []SymFrame) []string {
	var n []string
	for _, f := range fr {
		n = append(n, f.Name)
	}
	return n
}

func lookTool(name string) (string, error) { return exec.LookPath(name) }

func execCommand(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}

// perfOpts are the options perfRecord adds to `perf record`:
// --no-bpf-event, because perf's BPF side-band costs about 0.8 s of
// waiting per recording (perf 6.1; the recorded programs load no BPF),
// and -N, so that no binary is copied into ~/.debug. An option this perf
// does not know is dropped when a recording fails for it.
var perfOpts = struct {
	sync.Mutex
	opts []string
}{opts: []string{"--no-bpf-event", "-N"}}

// unknownOption is perf's complaint about an option it does not know.
var unknownOption = regexp.MustCompile("unknown (?:option|switch) `([^']+)'")

// perfRecord runs `perf record` with perfOpts' options and args and
// returns its combined output.
func perfRecord(perf string, args ...string) ([]byte, error) {
	perfOpts.Lock()
	opts := perfOpts.opts
	perfOpts.Unlock()
	for {
		out, err := exec.Command(perf, append(append([]string{"record"}, opts...), args...)...).CombinedOutput()
		m := unknownOption.FindSubmatch(out)
		if err == nil || m == nil {
			return out, err
		}
		kept := slices.DeleteFunc(slices.Clone(opts), func(o string) bool { return strings.TrimLeft(o, "-") == string(m[1]) })
		if len(kept) == len(opts) {
			return out, err
		}
		opts = kept
		perfOpts.Lock()
		perfOpts.opts = kept
		perfOpts.Unlock()
	}
}
