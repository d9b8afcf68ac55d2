package profile

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParse checks that no input crashes Parse and that every result is
// either a valid profile with samples or a one-line *Error naming the
// source. Without -fuzz it runs the seeds.
func FuzzParse(f *testing.F) {
	f.Add(encodeT(f, testCPUProfile(), false))
	f.Add(encodeT(f, testCPUProfile(), true))
	f.Add(handProfile(true))
	f.Add(legacyCPU())
	f.Add([]byte(simpleFolded))
	f.Add(utf16Bytes(simpleFolded, false))
	f.Add([]byte("--- contentionz 1 ---\ncycles/second = 1000\nsampling period = 1\n  5 2 @ 0x1 0x2\n"))
	f.Add([]byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1\n"))
	f.Add([]byte("goroutine profile: total 1\n1 @ 0x1\n"))
	f.Add([]byte(perfScript))
	f.Add([]byte(`{"traceEvents": []}`))
	f.Add([]byte("app.exe!Main;ntdll!Start 3\n# c\nbad\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse("fuzz.pb", data, 1<<20)
		if err != nil {
			checkError(t, err, "fuzz.pb")
			if strings.Contains(err.Error(), "parser failed") {
				t.Errorf("a panic turned into an error: %v", err) // it names no place in the input
			}
			return
		}
		checkLoaded(t, l, "fuzz.pb")
		DetectKind(l.Profile)
		DropProfilerSamples(l.Profile)
		if err := l.Profile.CheckValid(); err != nil {
			t.Errorf("after DropProfilerSamples: %v", err)
		}
	})
}

// FuzzSize: a size ParseSize accepts (--max-size) is positive and prints
// with FormatSize as a size that parses back to itself; anything else is
// an error quoting the input.
func FuzzSize(f *testing.F) {
	for _, s := range []string{"1GiB", "512MiB", "64KiB", "1G", "100M", "4096", "10MB", " 3 KiB ", "8589934591G", "-1", "0B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
				t.Errorf("error %q does not quote the input", err)
			}
			return
		}
		if n <= 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Errorf("ParseSize(%q) = %d prints as %q, which parses as %d, %v", s, n, FormatSize(n), back, err)
		}
	})
}
