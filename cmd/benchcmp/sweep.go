package main

import (
	"fmt"
	"io"

	"github.com/profdiff/profdiff/profile/synth"
)

// row is one pair measured: profdiff, pprof (nil when skipped, ppSkip
// says why) and the decompression floor.
type row struct {
	n      int
	pr     *pairFiles
	pd, pp *result
	ppSkip string
	floor  *floorSet
}

// measureRow generates cfg's pair and times profdiff, pprof and the floor
// on it.
func measureRow(o options, pprofBin []string, cfg synth.Config, stderr io.Writer) (*row, error) {
	pr, err := pair(o.dir, cfg, stderr)
	if err != nil {
		return nil, err
	}
	r := &row{n: cfg.Stacks, pr: pr}
	// profdiff and the floor in the same rounds; pprof (one run of half
	// a minute, by default) after them.
	c := command{name: o.profdiff, args: []string{"diff", pr.base, pr.nw}}
	if r.pd, r.floor, err = measureWithFloor(o, &c, []string{pr.base, pr.nw}, stderr); err != nil {
		return nil, fmt.Errorf("profdiff diff and the floor: %v", err)
	}
	switch {
	case pprofBin == nil:
		r.ppSkip = "-skip-pprof"
	case o.skipPprofAbove > 0 && cfg.Stacks > o.skipPprofAbove:
		r.ppSkip = fmt.Sprintf("%d stacks is above -skip-pprof-above %d (pprof takes minutes and GBs there)", cfg.Stacks, o.skipPprofAbove)
		fmt.Fprintf(stderr, "  pprof skipped at %d stacks: %s\n", cfg.Stacks, r.ppSkip)
	default:
		cmd := append(append([]string{}, pprofBin...), "-top", "-diff_base="+pr.base, pr.nw)
		r.pp, err = measure(o.pprofRuns, o.timeout, stderr, cmd[0], cmd[1:]...)
		if err != nil {
			return nil, fmt.Errorf("pprof: %v", err)
		}
	}
	return r, nil
}

// runSingle measures the one pair of o.cfg and prints its table.
func runSingle(o options, pprofBin []string, rep *report, stdout, stderr io.Writer) error {
	r, err := measureRow(o, pprofBin, o.cfg, stderr)
	if err != nil {
		return err
	}
	rep.rows = []*row{r}
	printCompare(stdout, o, r)
	return nil
}

// runSweep measures a pair at each of o.sizes and prints profdiff's,
// pprof's and the floor's tables over them.
func runSweep(o options, pprofBin []string, rep *report, stdout, stderr io.Writer) error {
	for _, n := range o.sizes {
		cfg := o.cfg
		cfg.Stacks = n
		r, err := measureRow(o, pprofBin, cfg, stderr)
		if err != nil {
			return err
		}
		rep.rows = append(rep.rows, r)
	}
	rows := rep.rows
	fmt.Fprintf(stdout, "Pairs: %d-%d frames, %d functions, %s.\n\n", o.cfg.MinDepth, o.cfg.MaxDepth, o.cfg.Functions, pcsName(o.cfg.PCsPerFunction))
	printSweep(stdout, fmt.Sprintf("profdiff sweep: `profdiff diff BASE NEW`, best of %d", o.runs), rows, func(r *row) *result { return r.pd })
	if pprofBin != nil {
		fmt.Fprintln(stdout)
		printSweep(stdout, fmt.Sprintf("pprof sweep: `go tool pprof -top -diff_base=BASE NEW`, best of %d", o.pprofRuns), rows, func(r *row) *result { return r.pp })
	}
	fmt.Fprintln(stdout)
	printFloorTable(stdout, o, rows)
	fmt.Fprintln(stdout)
	printRatios(stdout, rows)
	return nil
}

// printSweep prints one tool's results over the sweep's sizes (the rows
// where it ran).
func printSweep(w io.Writer, title string, all []*row, get func(*row) *result) {
	var rows []*row
	for _, r := range all {
		if get(r) != nil {
			rows = append(rows, r)
		}
	}
	fmt.Fprintf(w, "## %s\n\n", title)
	fmt.Fprintln(w, "| stacks per profile | input (gzipped) | locations per function | wall | user+sys | peak RSS | stacks vs first row | time vs first row | wall per added stack |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	var first *result
	if len(rows) > 0 {
		first = get(rows[0])
	}
	var prev *row
	for _, row := range all {
		r := get(row)
		if r == nil {
			fmt.Fprintf(w, "| %d | %s + %s | – | skipped | | | | | |\n", row.n, fileMiB(row.pr.base), fileMiB(row.pr.nw))
			continue
		}
		marginal := "–"
		if prev != nil {
			marginal = fmt.Sprintf("%.2f µs", float64(r.wall-get(prev).wall)/1e3/float64(2*(row.n-prev.n)))
		}
		prev = row
		fmt.Fprintf(w, "| %d | %s + %s | %.1f | %s | %s | %s | %.2fx | %.2fx | %s |\n", row.n, fileMiB(row.pr.base), fileMiB(row.pr.nw),
			float64(row.pr.locs)/float64(max(1, row.pr.functions)), secs(r.wall), secs(r.cpu), mib(r.maxRSS),
			float64(row.n)/float64(rows[0].n), ratio(r.wall, first.wall), marginal)
	}
	for _, r := range all {
		if get(r) == nil {
			fmt.Fprintf(w, "\nSkipped at %d stacks: %s.\n", r.n, r.ppSkip)
		}
	}
	if len(rows) > 1 {
		last := rows[len(rows)-1]
		lr := get(last)
		grow := float64(last.n) / float64(rows[0].n)
		perStack := ratio(lr.wall, first.wall) / grow
		fmt.Fprintf(w, "\nStacks grow %.1fx and time %.2fx (user+sys %.2fx) from %d to %d stacks: time per stack changes %.2fx (1.00x is exactly linear; below 1 the fixed per-function and per-location costs are being amortized; well above 1 is super-linear). The last column is the cost of each stack added since the row above (both profiles count).\n",
			grow, ratio(lr.wall, first.wall), ratio(lr.cpu, first.cpu), rows[0].n, last.n, perStack)
	}
}

// printFloorTable prints the decompression floor of each pair: each
// inflater with the two files one after the other, and the fastest with
// both at once.
func printFloorTable(w io.Writer, o options, rows []*row) {
	fmt.Fprintf(w, "## Decompression floor: gunzip BASE and NEW, discard the bytes (benchcmp's floor mode), best of %d\n\n", o.runs)
	head, rule := "| stacks per profile | decompressed |", "|---:|---:|"
	for _, inf := range inflaters {
		head += " " + inflaterDesc(inf) + " |"
		rule += "---:|"
	}
	fmt.Fprintf(w, "%s fastest: user+sys | peak RSS | fastest, %d files at once |\n%s---:|---:|---:|\n", head, rows[0].floor.workers, rule)
	for _, r := range rows {
		f := r.floor
		line := fmt.Sprintf("| %d | %.1f MB |", r.n, float64(f.raw)/1e6)
		for _, s := range f.seq {
			line += " " + secs(s.wall) + " |"
		}
		fmt.Fprintf(w, "%s %s | %s | %s |\n", line, secs(f.floor().cpu), mib(f.floor().maxRSS), secs(f.par.wall))
	}
}

// printRatios prints profdiff's ratios to the floor and pprof's to profdiff.
func printRatios(w io.Writer, rows []*row) {
	fmt.Fprintln(w, "## Ratios")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| stacks per profile | profdiff / floor wall | user+sys | profdiff / parallel floor wall | floor's inflater | pprof / profdiff wall | user+sys | peak RSS |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---|---:|---:|---:|")
	for _, r := range rows {
		f := r.floor
		pp := "skipped | – | –"
		if r.pp != nil {
			pp = fmt.Sprintf("%.1fx | %.1fx | %s", ratio(r.pp.wall, r.pd.wall), ratio(r.pp.cpu, r.pd.cpu), rssRatio(r.pp, r.pd))
		}
		fmt.Fprintf(w, "| %d | %.1fx | %.1fx | %.1fx | %s | %s |\n", r.n, ratio(r.pd.wall, f.floor().wall), ratio(r.pd.cpu, f.floor().cpu),
			ratio(r.pd.wall, f.par.wall), f.bestName(), pp)
	}
}

// printCompare prints the single pair's table: profdiff, pprof, the
// floor and the ratios.
func printCompare(w io.Writer, o options, r *row) {
	c, pr, pd, pp, f := o.cfg, r.pr, r.pd, r.pp, r.floor
	runs := fmt.Sprintf("best of %d", o.runs)
	if pp != nil && o.pprofRuns != o.runs {
		runs = fmt.Sprintf("profdiff and floor best of %d, pprof best of %d", o.runs, o.pprofRuns)
	}
	fmt.Fprintf(w, "## %d stacks per profile, %d-%d frames, %d functions (%s + %s gzipped, %.1f MB decompressed), %s\n\n",
		c.Stacks, c.MinDepth, c.MaxDepth, c.Functions, fileMiB(pr.base), fileMiB(pr.nw), float64(f.raw)/1e6, runs)
	fmt.Fprintf(w, "Base profile: %s; %s.\n\n", pr.shape(), pcsName(c.PCsPerFunction))
	fmt.Fprintln(w, "| tool | wall | user+sys | peak RSS |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	line := func(name string, r *result) {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", name, secs(r.wall), secs(r.cpu), mib(r.maxRSS))
	}
	line("`profdiff diff BASE NEW`", pd)
	if pp != nil {
		line("`go tool pprof -top -diff_base=BASE NEW`", pp)
	}
	for i, inf := range inflaters {
		line("floor: gunzip both, "+inflaterDesc(inf), f.seq[i])
	}
	line(fmt.Sprintf("floor: gunzip both, %d at once, %s", f.workers, f.bestName()), f.par)
	if pp != nil {
		fmt.Fprintf(w, "| **pprof / profdiff** | **%.1fx** | %.1fx | **%s** |\n", ratio(pp.wall, pd.wall), ratio(pp.cpu, pd.cpu), rssRatio(pp, pd))
	}
	fmt.Fprintf(w, "| **profdiff / floor** (%s) | **%.1fx** | %.1fx | %s |\n", f.bestName(), ratio(pd.wall, f.floor().wall), ratio(pd.cpu, f.floor().cpu), rssRatio(pd, f.floor()))
	fmt.Fprintf(w, "| profdiff / parallel floor | %.1fx | %.1fx | %s |\n", ratio(pd.wall, f.par.wall), ratio(pd.cpu, f.par.cpu), rssRatio(pd, f.par))
	if pp == nil {
		fmt.Fprintf(w, "\n(pprof skipped: %s)\n", r.ppSkip)
	}
}
