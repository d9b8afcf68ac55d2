#!/bin/sh
# series.sh: the four-step series of the built-in JSON workload (issue 41),
# seven runs a step, and the check that `profdiff series` attributes each
# injected change to its step. Not part of `go test ./...`: it takes about
# a minute and a half (35 runs of DURATION plus warmup). Seven rather than
# the five the U test needs: with 5 against 5 the smallest two-sided p is
# 2/252 and one run out of place costs a change its significance after
# Holm's adjustment; with 7 against 7 it is 2/3432.
#
# Two series of the same captures: the wall-clock profiles judged on rates
# (waits and lock contention: the lock at gc-lock, its recovery at fewer)
# and the CPU profiles judged on shares (GC). The wall-clock sampler sees
# goroutines only, so GC's mark workers never reach it, and the goroutines
# it catches in a GC assist are too few and too bursty to measure GC by
# (they once flagged gc at the control step): the wall series drops those
# samples (--ignore), and GC is judged where the CPU profile holds all of
# it. On shares because the server's CPU rate follows how much of the
# shared machine it got, while GC's part of its CPU is the workload's own.
#
#   step     variant  cores  injected
#   base     baseline 2      -
#   again    baseline 2      nothing: the control, where nothing may be flagged
#   gc       gc       2      GC pressure
#   gc-lock  gc-lock  2      a contended global lock
#   fewer    gc-lock  1      fewer worker threads: the lock's recovery
#
# Usage: workloads/series.sh [OUT]   (from the repository root; OUT defaults
# to profdiff-out/series; DURATION=1s sets each measured window, RUNS=7 the
# runs a step, at least 5)
set -eu
out=${1:-profdiff-out/series}
dur=${DURATION:-1s}
runs=${RUNS:-7}
mkdir -p "$out"
bin=$out/profdiff
go build -o "$bin" ./cmd/profdiff
for run in $(seq "$runs"); do # interleaved, so that drift on the machine reaches every step alike
	for step in "base baseline 2" "again baseline 2" "gc gc 2" "gc-lock gc-lock 2" "fewer gc-lock 1"; do
		set -- $step
		"$bin" workload json --variant "$2" --cores "$3" --duration "$dur" --warmup 500ms --perf=false \
			--out "$out/$1/run-$run" >"$out/$1-run-$run.txt" 2>&1
	done
done
# Each step's mean requests/s, from the runs' tables (the row's second
# column), for the table's header row.
rps=
for step in base again gc gc-lock fewer; do
	r=$(cat "$out/$step"-run-*.txt | awk -F'│' '$2 ~ /^ *[0-9]+ *$/ {s += $3; n++} END {if (n) printf "%.0f", s / n}')
	rps=${rps:+$rps,}${r:-0}
done
steps="base=$out/base/run-*/cores-2 again=$out/again/run-*/cores-2 gc=$out/gc/run-*/cores-2 gc-lock=$out/gc-lock/run-*/cores-2 fewer=$out/fewer/run-*/cores-1"
assists='^runtime\.gcAssistAlloc$'
# shellcheck disable=SC2086 # the steps are words, their globs for profdiff
"$bin" series --ignore "$assists" --top 10 --metric "requests/s=$rps" $steps | tee "$out/series.txt"
# shellcheck disable=SC2086
"$bin" series --ignore "$assists" --format json --metric "requests/s=$rps" $steps >"$out/series.json"
# shellcheck disable=SC2086
"$bin" series --kind cpu --normalize share --top 10 --metric "requests/s=$rps" $steps | tee "$out/series-cpu.txt"
# shellcheck disable=SC2086
"$bin" series --kind cpu --normalize share --format json $steps >"$out/series-cpu.json"
case $out in
/*) abs=$out ;;
*) abs=$PWD/$out ;;
esac
PROFDIFF_SERIES_JSON=$abs/series.json PROFDIFF_SERIES_CPU_JSON=$abs/series-cpu.json \
	go test ./cmd/profdiff -run TestSeriesWorkload -count=1 -v
