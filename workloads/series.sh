#!/bin/sh
# series.sh: the four-step series of the built-in JSON workload (issue 41),
# five runs a step, and the check that `profdiff series` attributes each
# injected change to its step. Not part of `go test ./...`: it takes about
# a minute (25 runs of DURATION plus warmup).
#
#   step     variant  cores  injected
#   base     baseline 2      -
#   again    baseline 2      nothing: the control, where nothing may be flagged
#   gc       gc       2      GC pressure
#   gc-lock  gc-lock  2      a contended global lock
#   fewer    gc-lock  1      fewer worker threads: the lock's recovery
#
# Usage: workloads/series.sh [OUT]   (from the repository root; OUT defaults
# to profdiff-out/series; DURATION=1s sets each measured window)
set -eu
out=${1:-profdiff-out/series}
dur=${DURATION:-1s}
mkdir -p "$out"
bin=$out/profdiff
go build -o "$bin" ./cmd/profdiff
for run in 1 2 3 4 5; do # interleaved, so that drift on the machine reaches every step alike
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
# shellcheck disable=SC2086 # the steps are words, their globs for profdiff
"$bin" series --top 10 --metric "requests/s=$rps" $steps | tee "$out/series.txt"
# shellcheck disable=SC2086
"$bin" series --format json --metric "requests/s=$rps" $steps >"$out/series.json"
case $out in
/*) json=$out/series.json ;;
*) json=$PWD/$out/series.json ;;
esac
PROFDIFF_SERIES_JSON=$json go test ./cmd/profdiff -run TestSeriesWorkload -count=1 -v
