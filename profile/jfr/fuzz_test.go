package jfr

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/readertest"
)

// FuzzRead: no input makes Parse panic, and what it accepts is a valid
// profile. The seeds are small: the smallest recording the JDK writes (a
// program that exits at once, recorded with settings that enable only
// jdk.ExecutionSample: its metadata, about 100 KB, is most of it) and its
// first bytes, and three async-profiler recordings of 16 to 23 KB
// (asyncSeeds); the large recordings are the unit tests' inputs. Fuzz
// workers, which are handed their inputs, record nothing.
func FuzzRead(f *testing.F) {
	f.Add([]byte("FLR\x00\x00\x02\x00\x01"))
	for _, name := range asyncSeeds {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if fl := flag.Lookup("test.fuzzworker"); fl != nil && fl.Value.String() == "true" {
		f.Fuzz(fuzzParse)
		return
	}
	_, javaErr := exec.LookPath("java")
	_, javacErr := exec.LookPath("javac")
	if javaErr == nil && javacErr == nil {
		data, err := os.ReadFile(tinyRecording(f))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		for _, n := range []int{headerSize, 1024, 16 << 10} {
			f.Add(data[:min(n, len(data))])
		}
	}
	boundMinimize()
	f.Fuzz(fuzzParse)
}

// asyncSeeds are committed async-profiler recordings (testdata/README.md),
// a writer other than the JDK's: CPU samples of 2.9, 4.2.1's wall-clock
// samples (profiler.WallClockSample) and lock events.
var asyncSeeds = []string{"ap2.9-cpu.jfr", "ap4.2.1-wall.jfr", "ap4.2.1-lock.jfr"}

// boundMinimize limits the minimizing of each new input to a second,
// unless -fuzzminimizetime says otherwise: an input grown from a 100 KB
// recording otherwise takes the default minute, in which nothing new is
// tried.
func boundMinimize() {
	set := false
	flag.Visit(func(fl *flag.Flag) { set = set || fl.Name == "test.fuzzminimizetime" })
	if !set {
		flag.Set("test.fuzzminimizetime", "1s")
	}
}

// fuzzParse: Parse allocates at most readertest.AllocLimit; an error is
// one non-empty line and comes without a profile; a profile is valid, with no negative value, and its warnings are
// single lines.
func fuzzParse(t *testing.T, data []byte) {
	var p *pprofile.Profile
	var warns []string
	var err error
	readertest.BoundedAlloc(t, "Parse", len(data), func() { p, warns, err = Parse(data) })
	if err != nil {
		if msg := err.Error(); p != nil || strings.TrimSpace(msg) == "" || strings.ContainsAny(msg, "\r\n") {
			t.Fatalf("profile %v with error %q", p != nil, msg)
		}
		return
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("Parse accepted input but made an invalid profile: %v", err)
	}
	for i, s := range p.Sample {
		for j, v := range s.Value {
			if v < 0 {
				t.Fatalf("sample %d value %d (%s) is %d", i, j, p.SampleType[j].Type, v)
			}
		}
	}
	for _, w := range warns {
		if strings.TrimSpace(w) == "" || strings.ContainsAny(w, "\r\n") {
			t.Errorf("warning %q is not one line", w)
		}
	}
}

// tinySettings enables one event type, sampled often enough that a
// program exiting at once has a few samples.
const tinySettings = `<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="fuzz seed">
  <event name="jdk.ExecutionSample"><setting name="enabled">true</setting><setting name="period">1 ms</setting></event>
</configuration>
`

// tinyRecording records Busy with no modes (it exits at once) with
// tinySettings.
func tinyRecording(t testing.TB) string {
	jdk(t)
	return recordOnce(t, "tiny.jfr", recordTiny)
}

func recordTiny(path string) error {
	settings := filepath.Join(filepath.Dir(path), "tiny.jfc")
	if err := os.WriteFile(settings, []byte(tinySettings), 0o644); err != nil {
		return err
	}
	return runJava([]string{"-XX:StartFlightRecording=filename=" + path + ",settings=" + settings}, "Busy", nil)
}
