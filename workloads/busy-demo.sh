#!/usr/bin/env bash
# busy-demo.sh: the demo on a machine made busy on purpose. Starts one busy
# loop per CPU (`yes >/dev/null`, two on a 2-core machine), runs
# `profdiff demo --format json` beside them, stops them, and checks what the
# demo said: either its verdict says the machine was too busy, or its
# verdict names the lock-contention growth that a quiet run names; and it
# never reports throughput rising against that verdict without saying so.
# Not part of `go test` (it takes about half a minute and its point is a
# loaded machine); run it from the repository root:
#
#   workloads/busy-demo.sh            # builds profdiff into a temporary folder
#   PROFDIFF=/path/to/profdiff workloads/busy-demo.sh
#
# Exit status 0 when the demo said what it should, 1 when not (the JSON is
# printed), 2 when it could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
hogs=()
cleanup() {
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
bin=${PROFDIFF:-}
if [ -z "$bin" ]; then
	go build -o "$tmp/profdiff" ./cmd/profdiff || exit 2
	bin=$tmp/profdiff
fi
for _ in $(seq "$(nproc)"); do
	yes >/dev/null &
	hogs+=($!)
done
sleep 2 # let the loops take the CPUs before the first run
"$bin" demo --format json --out "$tmp/demo" >"$tmp/demo.json" 2>"$tmp/demo.err" || { cat "$tmp/demo.err"; exit 2; }
for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
hogs=()
python3 - "$tmp/demo.json" "$tmp/demo/conditions.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cond = json.load(open(sys.argv[2]))
v = d.get("verdict") or {}
summary = v.get("summary", "")
principal = (v.get("principal") or {}).get("bucket")
also = [c.get("bucket") for c in v.get("also") or []]
busy = "The machine was too busy" in summary
names_lock = principal == "lock-contention" or "lock-contention" in also
rps = [r["requests_per_s"] for r in cond["runs"]]
rose = len(rps) == 2 and rps[1] > rps[0]
said_rise = "Throughput rose" in summary
print("others' share per run:", [round(max(r["busy_cpu_s"] - r["own_cpu_s"], 0) / (cond["cpus"] * r["wall_s"]), 2) for r in cond["runs"]])
print("requests/s:", [round(x) for x in rps], "verdict principal:", principal, "also:", also)
print("summary:", summary)
ok = (busy or names_lock) and (not rose or not v.get("grew") or said_rise)
print("OK: the demo said the machine was too busy" if ok and busy else "OK: the quiet run's verdict" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
