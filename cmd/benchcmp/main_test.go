package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for benchcmp when the machinery
// re-executes itself (os.Executable) in spawn or floor mode.
func TestMain(m *testing.M) {
	if res := os.Getenv(spawnEnv); res != "" {
		os.Exit(spawnMain(res, os.Args[1:], os.Stderr))
	}
	if mode := os.Getenv(floorEnv); mode != "" {
		os.Exit(floorMain(mode, os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func runBenchcmp(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(args, &out, &errb); err != nil {
		t.Fatalf("benchcmp %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

// wantLines fails unless every pattern matches a line of out.
func wantLines(t *testing.T, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile("(?m)" + p).MatchString(out) {
			t.Errorf("no line matches %q in:\n%s", p, out)
		}
	}
}

const (
	ratioRE = `\d+\.\dx`
	secsRE  = `\d+\.\d\d s`
)

// inflaterRE matches the package of any of the floor's inflaters, the
// fastest of which, on files this small, differs from run to run.
var inflaterRE = func() string {
	var names []string
	for _, inf := range inflaters {
		names = append(names, regexp.QuoteMeta(inflaterDesc(inf)))
	}
	return "(" + strings.Join(names, "|") + ")"
}()

// TestSingleTopGate runs the single-pair report with a tiny top and a
// gate of 3 vs 3 profiles, then a sweep that reuses the files.
func TestSingleTopGate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds profdiff and generates profiles")
	}
	dir := t.TempDir()
	out, _ := runBenchcmp(t, "-stacks", "2000", "-runs", "1", "-skip-pprof", "-top-stacks", "3000",
		"-gate-profiles", "3", "-gate-stacks", "500", "-dir", dir)
	wantLines(t, out,
		`^## 2000 stacks per profile, 15-45 frames, 20000 functions \(.* MiB \+ .* MiB gzipped, \d+\.\d MB decompressed\), best of 1$`,
		`^\| `+"`profdiff diff BASE NEW`"+` \| `+secsRE+` \| `+secsRE+` \| \d+ MiB \|$`,
		`^\| floor: gunzip both, compress/gzip \| `+secsRE,
		`^\| floor: gunzip both, github.com/klauspost/compress/gzip \| `+secsRE,
		`^\| floor: gunzip both, profdiff's profile/inflate \| `+secsRE,
		`^\| \*\*profdiff / floor\*\* \(`+inflaterRE+`\) \| \*\*`+ratioRE+`\*\* \| `+ratioRE+` \| `+ratioRE+` \|$`,
		`^\(pprof skipped: -skip-pprof\)$`,
		"^## `profdiff top` on one profile of 3000 stacks",
		"^\\| `profdiff top PROFILE` \\| "+secsRE,
		"^## `profdiff gate`: 3 vs 3 profiles of about 500 stacks",
		"^\\| `profdiff gate --base 'base-\\*.pb.gz' --new 'new-\\*.pb.gz'` \\| "+secsRE,
		`^- (PASS|FAIL) 200k pair: `+"`profdiff diff`"+` wall: measured `+secsRE+` \(user\+sys `+secsRE+`\), target ≤ 0.30 s \(measured at 2000 stacks, the target is set for 200000\)$`,
		`^- (PASS|FAIL) 200k pair: `+"`profdiff diff`"+` peak RSS: measured \d+ MiB, target ≤ 150 MiB`,
		`^- NOT RUN 200k pair: `+"`profdiff diff`"+` vs pprof: target ≥ 70x faster; pprof skipped: -skip-pprof$`,
		`^- (PASS|FAIL) 200k pair: `+"`profdiff diff`"+` vs the decompression floor: measured `+ratioRE+` the floor`,
		`^- (PASS|FAIL) 1M-stack profile: `+"`profdiff top`"+` wall: measured `+secsRE+` \(user\+sys `+secsRE+`; `+ratioRE+` the floor's .*\), target ≤ 3.00 s \(measured at 3000 stacks, the target is set for 1000000\)$`,
		`^- (PASS|FAIL) gate of 200 vs 200 1-MB profiles peak RSS: measured \d+ MiB, target ≤ 200 MiB \(measured at 3 profiles per side, the target is set for 200\)$`,
		`^\d passed, \d failed, 1 not run \(a report`,
	)
	gates, _ := filepath.Glob(filepath.Join(dir, "gate3-*", "*.pb.gz"))
	if len(gates) != 6 {
		t.Errorf("gate corpus: %d files, want 3 base and 3 new: %v", len(gates), gates)
	}

	// A sweep over two sizes, reusing the 2000-stack pair and the gate
	// corpus; pprof runs at 1000 stacks and is skipped above 1500.
	out, errs := runBenchcmp(t, "-sweep", "-sizes", "1000,2000", "-skip-pprof-above", "1500", "-top-stacks", "0",
		"-gate-profiles", "3", "-gate-stacks", "500", "-dir", dir, "-profdiff", filepath.Join(dir, "profdiff"))
	row := func(n string) string {
		return `^\| ` + n + ` \| .* MiB \+ .* MiB \| \d+\.\d \| ` + secsRE + ` \| ` + secsRE + ` \| \d+ MiB \| `
	}
	wantLines(t, section(t, out, "## profdiff sweep"), row("1000"), row("2000"))
	pp := section(t, out, "## pprof sweep")
	wantLines(t, pp, row("1000"), `^\| 2000 \| .* \| – \| skipped \|`,
		`^Skipped at 2000 stacks: 2000 stacks is above -skip-pprof-above 1500 \(pprof takes minutes and GBs there\)\.$`)
	if i, j := strings.Index(pp, "\n| 1000 |"), strings.Index(pp, "\n| 2000 |"); i > j {
		t.Errorf("pprof sweep rows out of order:\n%s", pp)
	}
	if regexp.MustCompile(`(?m)^\| 1000 \| .*skipped`).MatchString(pp) {
		t.Errorf("pprof skipped at 1000 stacks, below -skip-pprof-above 1500:\n%s", pp)
	}
	wantLines(t, section(t, out, "## Decompression floor"),
		`^\| 1000 \| \d+\.\d MB \| `+strings.Repeat(secsRE+` \| `, len(inflaters))+secsRE+` \| \d+ MiB \| `+secsRE+` \|$`,
		`^\| 2000 \| \d+\.\d MB \| `)
	wantLines(t, section(t, out, "## Ratios"),
		`^\| 1000 \| `+ratioRE+` \| `+ratioRE+` \| `+ratioRE+` \| `+inflaterRE+` \| `+ratioRE+` \| `+ratioRE+` \| `+ratioRE+` \|$`,
		`^\| 2000 \| `+ratioRE+` \| .* \| skipped \| – \| – \|$`)
	wantLines(t, out,
		`^- NOT RUN 200k pair: `+"`profdiff diff`"+` vs pprof: target ≥ 70x faster; pprof skipped: 2000 stacks is above -skip-pprof-above 1500`,
		`^- NOT RUN 1M-stack profile: `+"`profdiff top`"+`: target ≤ 3.00 s, ≤ 400 MiB; not measured \(-top-stacks 0\)$`,
		`^- (PASS|FAIL) gate of 200 vs 200 1-MB profiles wall: `,
		`^\d passed, \d failed, 2 not run`)
	if !strings.Contains(errs, "n1000-f20000-d15-45-base.pb.gz") || strings.Contains(errs, "generated "+filepath.Join(dir, "synth2-seed1-n2000")) || strings.Contains(errs, "gate profiles") {
		t.Errorf("want the 1000-stack pair generated and the 2000-stack pair and gate corpus reused; stderr:\n%s", errs)
	}
}

// section is the part of a report from the heading that starts with
// prefix to the next heading.
func section(t *testing.T, out, prefix string) string {
	t.Helper()
	i := strings.Index(out, "\n"+prefix)
	if i < 0 {
		t.Fatalf("no section %q in:\n%s", prefix, out)
	}
	s := out[i+1:]
	if j := strings.Index(s[2:], "\n## "); j >= 0 {
		s = s[:j+2]
	}
	return s
}

// TestFloorMode checks the floor's inflaters against each other and the
// raw size, and that a file that is not gzip is an error naming it.
func TestFloorMode(t *testing.T) {
	dir := t.TempDir()
	raw := bytes.Repeat([]byte("profdiff floor "), 50_000)
	var files []string
	for i := range 3 {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(raw[:len(raw)-i])
		zw.Close()
		name := filepath.Join(dir, "f"+string(rune('0'+i))+".gz")
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	want := int64(3*len(raw) - 3)
	for _, inf := range inflaters {
		for _, par := range []bool{false, true} {
			n, err := inflateAll(inf, files, par)
			if err != nil || n != want {
				t.Errorf("inflateAll(%s, parallel %v) = %d, %v; want %d", inf, par, n, err, want)
			}
		}
	}
	o := options{dir: dir, runs: 1, timeout: time.Minute}
	fs, err := measureFloor(o, files, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	if fs.raw != want || len(fs.seq) != len(inflaters) || fs.par == nil || fs.workers != min(3, fs.workers) {
		t.Errorf("measureFloor: raw %d (want %d), %d inflaters, parallel %v with %d workers", fs.raw, want, len(fs.seq), fs.par, fs.workers)
	}
	bad := filepath.Join(dir, "text.pb.gz")
	os.WriteFile(bad, []byte("not gzip\n"), 0o644)
	_, err = measureFloor(o, []string{files[0], bad}, new(bytes.Buffer))
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("floor of a text file: %v; want an error naming %s", err, bad)
	}
	// A status listed in command.ok (gate's 1: a check failed) is a
	// result, not an error; the floor exits 1 on the text file.
	self, _ := os.Executable()
	c := command{name: self, args: []string{bad}, env: []string{floorEnv + "=std"}, ok: []int{1}}
	if r, err := measureCmd(c, 1, time.Minute, new(bytes.Buffer)); err != nil || r.wall <= 0 {
		t.Errorf("measureCmd with exit status 1 allowed: %+v, %v", r, err)
	}
	if _, err := inflateAll("zstd", files, false); err == nil {
		t.Error("inflateAll with an unknown inflater: no error")
	}

	// A command timed with the floor runs in the floor's rounds: each
	// round runs every command once, the command first.
	var progress bytes.Buffer
	tc := command{name: self, args: files[:1], env: []string{floorEnv + "=std"}}
	o.runs = 2
	r, fs, err := measureWithFloor(o, &tc, files, &progress)
	if err != nil || r == nil || fs.raw != want || len(fs.seq) != len(inflaters) || fs.par == nil {
		t.Fatalf("measureWithFloor: %+v, %+v, %v", r, fs, err)
	}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(progress.String()), "\n") {
		f := strings.Fields(line)
		order = append(order, f[0]+" "+strings.TrimSuffix(f[2], ":"))
	}
	var wantOrder []string
	for _, round := range []string{"1/2", "2/2"} {
		wantOrder = append(wantOrder, "floor(std) "+round) // the command timed
		for _, inf := range inflaters {
			wantOrder = append(wantOrder, "floor("+inf+") "+round)
		}
		if fs.workers >= 2 {
			for _, inf := range inflaters {
				wantOrder = append(wantOrder, "floor("+inf+",parallel) "+round)
			}
		}
	}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("runs in the order\n%s\nwant\n%s", strings.Join(order, "\n"), strings.Join(wantOrder, "\n"))
	}
}
