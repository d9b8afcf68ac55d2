package main

import (
	"bufio"
	stdgzip "compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/profdiff/profdiff/profile/inflate"
)

// floorEnv selects benchcmp's hidden floor mode: when set, benchcmp is not
// the comparison command but the decompression floor, run as a subprocess
// so that its wall time, CPU and peak RSS are measured exactly as
// profdiff's are. Its value is an inflater ("std", "klauspost" or
// "inflate"),
// optionally followed by ",parallel"; the arguments are gzipped files.
// It decompresses each file and discards the bytes, then prints the
// number of files and decompressed bytes on stdout.
const floorEnv = "BENCHCMP_FLOOR"

// inflaters are the gzip readers the floor compares: compress/gzip and
// github.com/klauspost/compress/gzip streaming a file through a buffered
// reader, and profdiff's own whole-file inflater (package
// profile/inflate), which reads the file mapped, as profdiff does, into a
// buffer of the decompressed size.
var inflaters = []string{"std", "klauspost", "inflate"}

// inflaterDesc names an inflater's package in the tables.
func inflaterDesc(name string) string {
	switch name {
	case "std":
		return "compress/gzip"
	case "klauspost":
		return "github.com/klauspost/compress/gzip"
	case "inflate":
		return "profdiff's profile/inflate"
	}
	return name
}

// floorMain is the floor mode's main: mode is floorEnv's value.
func floorMain(mode string, files []string, stdout, stderr io.Writer) int {
	inflater, parallel := mode, false
	if s, ok := strings.CutSuffix(mode, ",parallel"); ok {
		inflater, parallel = s, true
	}
	n, err := inflateAll(inflater, files, parallel)
	if err != nil {
		fmt.Fprintln(stderr, "benchcmp floor:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d files %d bytes\n", len(files), n)
	return 0
}

// inflateAll decompresses files one after another, or with parallel up to
// GOMAXPROCS at once, and returns the decompressed bytes in all.
func inflateAll(inflater string, files []string, parallel bool) (int64, error) {
	if !slices.Contains(inflaters, inflater) {
		return 0, fmt.Errorf("unknown inflater %q (want one of %s)", inflater, strings.Join(inflaters, ", "))
	}
	workers := 1
	if parallel {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		mu       sync.Mutex
		total    int64
		firstErr error
		wg       sync.WaitGroup
		next     = make(chan string)
	)
	for range min(workers, max(1, len(files))) {
		wg.Go(func() {
			for f := range next {
				n, err := inflateFile(inflater, f)
				mu.Lock()
				total += n
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	for _, f := range files {
		next <- f
	}
	close(next)
	wg.Wait()
	return total, firstErr
}

// inflateFile decompresses one gzipped file into io.Discard (inflate:
// into a buffer of its size, which is dropped).
func inflateFile(inflater, name string) (int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if inflater == "inflate" {
		st, err := f.Stat()
		if err != nil {
			return 0, err
		}
		out, err := inflate.GunzipFile(f, st.Size(), 0)
		if err != nil {
			return 0, fmt.Errorf("%s: %v", name, err)
		}
		return int64(len(out)), nil
	}
	br := bufio.NewReaderSize(f, 256<<10)
	var zr io.Reader
	if inflater == "std" {
		zr, err = stdgzip.NewReader(br)
	} else {
		zr, err = kgzip.NewReader(br)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %v", name, err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil {
		return n, fmt.Errorf("%s: after %d decompressed bytes: %v", name, n, err)
	}
	return n, nil
}

// floorSet is the floor measured on one set of files: each inflater one
// file after another, and the fastest of them with the files in parallel.
type floorSet struct {
	raw     int64     // decompressed bytes of all the files
	seq     []*result // per inflater, in the order of inflaters
	best    int       // index of the fastest sequential inflater
	par     *result   // the fastest inflater, workers files at once (the floor itself when workers is 1)
	workers int       // files inflated at once: GOMAXPROCS, at most the files
}

// floor returns the sequential floor of the fastest inflater, the one
// that profdiff is compared with.
func (f *floorSet) floor() *result { return f.seq[f.best] }

// bestName is the fastest inflater's package.
func (f *floorSet) bestName() string { return inflaterDesc(inflaters[f.best]) }

// measureFloor times the decompression floor of files: benchcmp itself
// (floorEnv) with each inflater, one file after another and, with two
// or more CPUs and files, as many at once as there are CPUs.
func measureFloor(o options, files []string, stderr io.Writer) (*floorSet, error) {
	_, fs, err := measureWithFloor(o, nil, files, stderr)
	if err != nil {
		return nil, fmt.Errorf("floor: %v", err)
	}
	return fs, nil
}

// measureWithFloor times c (when not nil) and the floor of files in the
// same rounds (measureRounds): c, then each inflater's floor, one round
// after another, so that their ratios are of the same minutes.
func measureWithFloor(o options, c *command, files []string, stderr io.Writer) (*result, *floorSet, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	fs := &floorSet{workers: min(runtime.GOMAXPROCS(0), len(files))}
	var cs []command
	if c != nil {
		cs = append(cs, *c)
	}
	first := len(cs)
	out := o.dir + "/floor.out"
	defer os.Remove(out)
	for _, inf := range inflaters {
		cs = append(cs, command{name: self, args: files, out: out, env: []string{floorEnv + "=" + inf}})
	}
	if fs.workers >= 2 {
		for _, inf := range inflaters {
			cs = append(cs, command{name: self, args: files, env: []string{floorEnv + "=" + inf + ",parallel"}})
		}
	}
	rs, err := measureRounds(cs, o.runs, o.timeout, stderr) // its errors name the command
	if err != nil {
		return nil, nil, err
	}
	if fs.raw, err = floorBytes(out); err != nil {
		return nil, nil, err
	}
	fs.seq = rs[first : first+len(inflaters)]
	for i, r := range fs.seq {
		if r.wall < fs.seq[fs.best].wall {
			fs.best = i
		}
	}
	fs.par = fs.floor() // one file or one CPU: the parallel floor is the floor
	if fs.workers >= 2 {
		fs.par = rs[first+len(inflaters)+fs.best]
	}
	var r *result
	if c != nil {
		r = rs[0]
	}
	return r, fs, nil
}

// floorBytes reads the decompressed byte count that floor mode printed.
func floorBytes(out string) (int64, error) {
	data, err := os.ReadFile(out)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data))
	if len(f) != 4 || f[3] != "bytes" {
		return 0, errors.New("floor: unexpected output " + strconv.Quote(string(data)))
	}
	return strconv.ParseInt(f[2], 10, 64)
}
