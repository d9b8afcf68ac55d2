package jfr

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/labels"
)

// recordHolders records testdata/Holders.java with settings=profile (its
// monitor enter, wait and park thresholds are 10 ms) and returns the
// recording and the holder's Java thread id, which the program prints.
func recordHolders(t *testing.T) (string, string) {
	t.Helper()
	jdk(t)
	if err := compile(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "holders.jfr")
	out, err := exec.Command("java", slices.Concat(jvmFlags, []string{"-XX:StartFlightRecording=filename=" + path + ",settings=profile", "-cp", classDir, "Holders"})...).CombinedOutput()
	if err != nil {
		t.Fatalf("java Holders: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^holder (\d+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("Holders printed no holder id:\n%s", out)
	}
	return path, string(m[1])
}

// TestWhoWaited reads a JDK recording of Holders: the monitor enters of
// the waiters name the holder as their owner and their monitor as the
// lock, the waits the holder notified name it as their waker, the waits
// that timed out a timeout, and the parks their parked-on class as the
// lock and no owner.
func TestWhoWaited(t *testing.T) {
	t.Parallel()
	path, holderID := recordHolders(t)
	p, _ := parseFile(t, path)
	one := func(s *pprofile.Sample, k string) string {
		if v := s.Label[k]; len(v) == 1 {
			return v[0]
		}
		return ""
	}
	lockRE := regexp.MustCompile(`^java\.lang\.Object@0x[0-9a-f]+$`)
	var entered, byHolder, bell, rung, napped, timedOut int64
	parks := 0
	enter, wait, park := sampleIndex(p, "monitor-enter"), sampleIndex(p, "monitor-wait"), sampleIndex(p, "park")
	if enter < 0 || wait < 0 || park < 0 {
		t.Fatalf("sample types %v, want monitor-enter, monitor-wait and park", p.SampleType)
	}
	for _, s := range p.Sample {
		stack := javaFrames(s)
		switch {
		case s.Value[enter] > 0 && strings.Contains(stack, "Holders.waitHere"):
			entered += s.Value[enter]
			if one(s, labels.Owner) == "holder" {
				byHolder += s.Value[enter]
			}
			if l := one(s, labels.Lock); !lockRE.MatchString(l) {
				t.Errorf("monitor enter's lock %q, want java.lang.Object@0xADDR", l)
			}
		case s.Value[wait] > 0 && strings.Contains(stack, "Holders.waitForBell"):
			bell += s.Value[wait]
			if one(s, labels.Waker) == "holder" && one(s, labels.WakerThread) == holderID {
				rung += s.Value[wait]
			}
		case s.Value[wait] > 0 && strings.Contains(stack, "Holders.waitTimed"):
			napped += s.Value[wait]
			if one(s, labels.Waker) == labels.WakerTimeout {
				timedOut += s.Value[wait]
			}
		case s.Value[park] > 0 && strings.Contains(stack, "Holders.parkHere"):
			parks++
			if l := one(s, labels.Lock); !strings.HasPrefix(l, "Holders$Bell@0x") {
				t.Errorf("park's lock %q, want Holders$Bell@0xADDR", l)
			}
			if o := one(s, labels.Owner); o != "" {
				t.Errorf("a park names owner %q: JFR records none", o)
			}
		}
	}
	t.Logf("waiters blocked %d ns, %d ns of it with owner holder; the bell waited %d ns, %d ns of it notified by holder; timed waits %d ns, %d ns of it timed out; %d park records",
		entered, byHolder, bell, rung, napped, timedOut, parks)
	if entered == 0 || bell == 0 || napped == 0 || parks == 0 {
		t.Fatal("the recording lacks the monitor enters, waits or parks of Holders")
	}
	if byHolder < entered*9/10 {
		t.Errorf("%d of the waiters' %d ns of monitor enters name the holder as owner, want 90%%", byHolder, entered)
	}
	if rung < bell*9/10 {
		t.Errorf("%d of the sleeper's %d ns of waits name the holder as waker, want 90%%", rung, bell)
	}
	if timedOut != napped {
		t.Errorf("%d of the napper's %d ns of waits are labelled %s, want all", timedOut, napped, labels.WakerTimeout)
	}
}

// javaFrames joins a sample's frame names, leaf first, with ";".
func javaFrames(s *pprofile.Sample) string {
	var names []string
	for _, l := range s.Location {
		for _, ln := range l.Line {
			names = append(names, ln.Function.Name)
		}
	}
	return strings.Join(names, ";")
}

// TestWhoWaitedAsyncProfiler: async-profiler's lock events (2.9 and 4.2.1)
// declare previousOwner but leave it empty: their monitor enters name the
// monitor as the lock and no owner, their parks the parked-on class.
func TestWhoWaitedAsyncProfiler(t *testing.T) {
	for _, v := range asprofVersions {
		p, _ := parseFile(t, asprofPath(v, "lock"))
		enter, park := sampleIndex(p, "monitor-enter"), sampleIndex(p, "park")
		if enter < 0 || park < 0 {
			t.Fatalf("%s: sample types %v, want monitor-enter and park", v, p.SampleType)
		}
		enters, parks := 0, 0
		for _, s := range p.Sample {
			if s.Value[enter] == 0 && s.Value[park] == 0 {
				continue
			}
			want := `^java\.lang\.Object@0x[0-9a-f]+$`
			if s.Value[enter] > 0 {
				enters++
			} else {
				parks++
				want = `^java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync@0x[0-9a-f]+$`
			}
			if l := s.Label[labels.Lock]; len(l) != 1 || !regexp.MustCompile(want).MatchString(l[0]) {
				t.Errorf("%s: lock %q, want %s", v, l, want)
			}
			if o := s.Label[labels.Owner]; o != nil {
				t.Errorf("%s: owner %q: async-profiler writes none", v, o)
			}
		}
		if enters == 0 || parks == 0 {
			t.Errorf("%s: %d monitor enter and %d park records", v, enters, parks)
		}
	}
}
