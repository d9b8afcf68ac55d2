# threadtotals.py FILE prints, one line per thread, "pid P tid T<TAB>ns":
# the wall time a Chrome trace's samples (V8 CPU profile samples, else
# stackFrames samples) or, without samples, its properly nested duration
# events cover on each thread. It reads the JSON independently of the Go
# reader, to check it: each sample weighs the time to its thread's next
# sample, the last one the interval before it; durations are the union of
# each thread's intervals.
import json, sys, collections

def tid(v):
    return str(v)

d = json.load(open(sys.argv[1]))
ev = d if isinstance(d, list) else d.get("traceEvents", [])
ticks = collections.defaultdict(list)  # thread -> [ts]
profs = {}
for i, e in enumerate(ev):
    name, a = e.get("name"), (e.get("args") or {}).get("data") or {}
    if name in ("Profile", "ProfileChunk"):
        k = (tid(e["pid"]), e.get("id"))
        p = profs.setdefault(k, {"thread": "pid %s tid %s" % (tid(e["pid"]), tid(e["tid"])), "t": float(e["ts"])})
        if name == "Profile" and "startTime" in a:
            p["t"] = float(a["startTime"])
        cp = a.get("cpuProfile") or {}
        deltas = a.get("timeDeltas") or cp.get("timeDeltas") or []
        for s, dt in zip(cp.get("samples") or [], deltas):
            p["t"] += dt
            ticks[p["thread"]].append(p["t"])
    elif name == "CpuProfile":
        cp = a["cpuProfile"]
        t = float(cp.get("startTime", e["ts"]))
        for s, dt in zip(cp["samples"], cp["timeDeltas"]):
            t += dt
            ticks["pid %s tid %s" % (tid(e["pid"]), tid(e["tid"]))].append(t)
if not ticks and isinstance(d, dict):
    for s in d.get("samples") or []:
        ticks["pid %s tid %s" % (tid(s["pid"]), tid(s["tid"]))].append(float(s["ts"]))
out = {}
if ticks:
    for th, ts in ticks.items():
        ts.sort()
        w = [ts[i + 1] - ts[i] for i in range(len(ts) - 1)]
        if w:
            w.append(w[-1])
        out[th] = sum(w)
else:
    spans = collections.defaultdict(list)
    open_ = collections.defaultdict(list)
    for e in sorted((e for e in ev if e.get("ph") in "XBE"), key=lambda e: float(e["ts"])):
        th = "pid %s tid %s" % (tid(e["pid"]), tid(e["tid"]))
        if e["ph"] == "X":
            spans[th].append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))))
        elif e["ph"] == "B":
            open_[th].append(float(e["ts"]))
        else:
            spans[th].append((open_[th].pop(), float(e["ts"])))
    for th, iv in spans.items():
        iv.sort()
        total, end = 0.0, None
        for s, e in iv:
            if end is None or s >= end:
                total += e - s
                end = e
            elif e > end:
                total += e - end
                end = e
        out[th] = total
for th in sorted(out):
    print("%s\t%d" % (th, round(out[th] * 1000)))
