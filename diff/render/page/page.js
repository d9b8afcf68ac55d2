// profdiff's page script: sortable and filterable tables, and the
// differential flame graph. Written for profdiff (no third-party code);
// the flame graph's rules mirror diff/render/flame.go, whose numbers
// (clamp, palettes, bucket colours, units) come in each graph's JSON.
"use strict";
(function () {
  // ---- Tables: click a header to sort, type in the box to filter.

  function sortTable(table, col) {
    const head = table.tHead.rows[0].cells;
    const dir = head[col].dataset.sort === "asc" ? "desc" : "asc";
    for (const h of head) delete h.dataset.sort;
    head[col].dataset.sort = dir;
    const numeric = head[col].classList.contains("num");
    const key = (tr) => {
      const td = tr.cells[col];
      if (!numeric) return td.textContent;
      return td.dataset.v === undefined ? -Infinity : parseFloat(td.dataset.v);
    };
    const rows = Array.from(table.tBodies[0].rows);
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      const c = numeric ? (x < y ? -1 : x > y ? 1 : 0) : String(x).localeCompare(String(y));
      return dir === "asc" ? c : -c;
    });
    for (const r of rows) table.tBodies[0].appendChild(r);
  }

  function filterTable(table, text, count) {
    let re = null;
    try { re = new RegExp(text, "i"); } catch (e) { re = null; }
    const rows = table.tBodies[0].rows;
    let shown = 0;
    for (const r of rows) {
      const t = r.textContent;
      const ok = text === "" || (re ? re.test(t) : t.toLowerCase().includes(text.toLowerCase()));
      r.hidden = !ok;
      if (ok) shown++;
    }
    count.textContent = shown + " of " + rows.length + " rows";
  }

  for (const table of document.querySelectorAll("table.sortable")) {
    Array.from(table.tHead.rows[0].cells).forEach((th, i) => th.addEventListener("click", () => sortTable(table, i)));
    const box = table.parentElement.querySelector(".filter input");
    if (box) box.addEventListener("input", () => filterTable(table, box.value, table.parentElement.querySelector(".filter .count")));
  }

  // ---- Number formatting, as diff/render/units.go and cell.go write it.

  // fixed is Go's strconv.FormatFloat(v, 'f', d, 64): toFixed, except
  // that an exact tie rounds to even as Go does (1.125 → "1.12"), where
  // toFixed rounds away from zero.
  function fixed(v, d) {
    const s = v.toFixed(d), exact = Math.abs(v).toFixed(Math.min(100, d + 25));
    const dot = exact.indexOf("."), tie = exact.slice(dot + 1 + d).replace(/0+$/, "") === "5";
    if (!tie) return s;
    const down = d > 0 ? exact.slice(0, dot + 1 + d) : exact.slice(0, dot);
    if (+down[down.length - 1] % 2 === 1) return s;
    return (v < 0 ? "-" : "") + down;
  }
  function sig3(v) {
    const a = Math.abs(v);
    if (a === 0) return "0";
    const digits = a < 1000 ? Math.max(0, 2 - Math.floor(Math.log10(a))) : 0;
    let s = fixed(v, digits);
    if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, "");
    return s;
  }
  function amount(units, v, unit) {
    const sc = units[unit];
    if (sc && v === 0) return sc.zero;
    if (sc) {
      v *= sc.base;
      let st = sc.steps[0];
      for (const s of sc.steps) if (parseFloat(sig3(Math.abs(v) / s[0])) >= 1) st = s;
      return sig3(v / st[0]) + " " + st[1];
    }
    if (unit === "" || unit === "count") {
      return Number.isInteger(v) && Math.abs(v) < 1e15 ? fixed(v, 0) : sig3(v);
    }
    return sig3(v) + " " + unit;
  }
  const pct = (f) => fixed(f * 100, 2) + "%";
  function pp(d) {
    const s = fixed(d * 100, 2);
    if (s === "0.00" || s === "-0.00") return "0.00pp";
    return (s.startsWith("-") ? s : "+" + s) + "pp";
  }
  // units.RatioNote (package diff/units).
  function ratioNote(b, n) {
    if (b === 0 && n === 0) return "";
    if (b === 0) return "new";
    if (n === 0) return "gone";
    const r = n / b;
    if (r > 1000) return ">1000x";
    if (r < 1 / 1000) return "<1/1000";
    if (r >= 2.5) return Math.round(r) + "x";
    if (r >= 1.75) return "doubled";
    if (r <= 1 / 2.5) return "1/" + Math.round(1 / r);
    if (r <= 1 / 1.75) return "halved";
    return "";
  }
  const frac = (v, t) => (t === 0 ? 0 : v / t);
  const hexRGB = (s) => [1, 3, 5].map((i) => parseInt(s.slice(i, i + 2), 16));
  // flameColor: neutral mixed towards grew or shrank by |c|, rounded.
  function mix(p, c) {
    const a = hexRGB(p.neutral), b = hexRGB(c < 0 ? p.shrank : p.grew), t = Math.abs(c);
    return "#" + a.map((x, i) => Math.round(x + (b[i] - x) * t).toString(16).padStart(2, "0")).join("");
  }

  // ---- The flame graph.

  const ROW = 17, OTHER = "#b8b8b8";

  function Flame(section) {
    const d = JSON.parse(document.getElementById(section.dataset.flame).textContent);
    const N = d.nodes.length, two = d.sides > 1;
    // Decode the flat nodes; children follow their parent in preorder.
    const parent = new Int32Array(N), name = new Int32Array(N), bucket = new Uint8Array(N),
      depth = new Int32Array(N), other = new Int32Array(N), tot = new Float64Array(2 * N),
      self = new Float64Array(2 * N), split = [], kids = [];
    d.nodes.forEach((a, i) => {
      parent[i] = a[0]; name[i] = a[1]; bucket[i] = a[2];
      tot[2 * i] = a[3]; tot[2 * i + 1] = a[4]; self[2 * i] = a[5]; self[2 * i + 1] = a[6];
      other[i] = a[7] || 0; split[i] = a[8] || null; kids[i] = [];
      if (a[0] >= 0) { depth[i] = depth[a[0]] + 1; kids[a[0]].push(i); }
    });
    const rootTot = [tot[0], tot[1]];
    const st = { orient: "icicle", widthBy: "larger", hideRemoved: false, palette: 0, bucket: -1, root: 0, search: "" };
    const removed = (i) => two && tot[2 * i + 1] === 0 && tot[2 * i] > 0;
    const nm = (i) => d.names[name[i]];

    // A node's value on side s, in the bucket filter's bucket when set.
    function val(i, s) {
      if (st.bucket < 0) return tot[2 * i + s];
      const sp = split[i];
      if (!sp) return bucket[i] === st.bucket ? tot[2 * i + s] : 0;
      for (let k = 0; k < sp.length; k += 3) if (sp[k] === st.bucket) return sp[k + 1 + s];
      return 0;
    }
    // Widths (flameWidth): the larger (or the new) self share plus the
    // children's widths, bottom-up; in a bucket, self is what the
    // children do not hold of the node's value in it.
    let w = new Float64Array(N);
    function widths() {
      w = new Float64Array(N);
      const cs = new Float64Array(2 * N);
      for (let i = N - 1; i >= 0; i--) {
        const v0 = val(i, 0), v1 = val(i, 1);
        const s0 = st.bucket < 0 ? self[2 * i] : Math.max(0, v0 - cs[2 * i]);
        const s1 = st.bucket < 0 ? self[2 * i + 1] : Math.max(0, v1 - cs[2 * i + 1]);
        let x;
        if (!two) x = frac(s0, rootTot[0]);
        else if (st.widthBy === "new") x = frac(s1, rootTot[1]);
        else x = Math.max(frac(s0, rootTot[0]), frac(s1, rootTot[1]));
        if (st.hideRemoved && removed(i)) x = 0; else x += w[i];
        if (v0 === 0 && v1 === 0) x = 0;
        const p = parent[i];
        if (p >= 0) { w[p] += x; cs[2 * p] += v0; cs[2 * p + 1] += v1; }
        w[i] = x; // w[i] held the children's sum until now
      }
    }
    // flameSides and flameChange.
    function sides(i) {
      if (d.measure === "value") return [tot[2 * i], tot[2 * i + 1]];
      if (d.measure === "rate" && d.rateFactor[0] > 0 && d.rateFactor[1] > 0)
        return [tot[2 * i] * d.rateFactor[0], tot[2 * i + 1] * d.rateFactor[1]];
      return [frac(tot[2 * i], rootTot[0]), frac(tot[2 * i + 1], rootTot[1])];
    }
    function change(i) {
      const [b, n] = sides(i);
      if (!two || b === n) return 0;
      if (b === 0) return 1;
      if (n === 0) return -1;
      return Math.max(-1, Math.min(1, Math.log(n / b) / Math.log(d.clamp)));
    }
    const pal = () => d.palettes[st.palette];
    function color(i) {
      if (other[i] > 0) return OTHER;
      if (!two) return d.bucketColors[bucket[i]];
      return mix(pal(), change(i));
    }
    // flameTip's side: rate (or value) and share.
    function side(v, s) {
      const share = pct(frac(v, rootTot[s]));
      if (d.rateFactor[s] > 0 && d.rateUnit !== "") return amount(d.units, v * d.rateFactor[s], d.rateUnit) + " (" + share + ")";
      return amount(d.units, v, d.unit) + " (" + share + ")";
    }
    function tip(i) {
      let t;
      if (!two) t = side(tot[2 * i], 0);
      else {
        t = "base " + side(tot[2 * i], 0) + " → new " + side(tot[2 * i + 1], 1) + " · " +
          pp(frac(tot[2 * i + 1], rootTot[1]) - frac(tot[2 * i], rootTot[0]));
        const [b, n] = sides(i), note = ratioNote(b, n);
        if (note) t += " · " + note;
      }
      if (other[i] > 0) t = other[i] + " frames too narrow to draw, merged: " + t;
      return nm(i) + "\n" + t;
    }

    // ---- Layout and painting on a canvas.
    const graph = section.querySelector(".graph"), canvas = graph.querySelector("canvas");
    const tipBox = graph.querySelector(".tip"), status = section.querySelector(".status");
    const ctx = canvas.getContext("2d");
    let drawn = [], maxDep = 0, searchRe = null;

    function layout() {
      const W = graph.clientWidth || 1200, scale = W / (w[st.root] || 1);
      drawn = []; maxDep = 0;
      const stack = [[st.root, 0]];
      while (stack.length) {
        const [i, x] = stack.pop();
        const px = w[i] * scale;
        if (px < 0.5) continue;
        const dep = depth[i] - depth[st.root];
        if (dep > d.maxDepth) continue; // too deep for a canvas: the page's note says so
        drawn.push({ i, x, px, dep });
        maxDep = Math.max(maxDep, dep);
        let cx = x;
        for (const c of kids[i]) { stack.push([c, cx]); cx += w[c] * scale; }
      }
      return W;
    }
    function hatch(p) {
      const c = document.createElement("canvas");
      c.width = c.height = 6;
      const g = c.getContext("2d");
      g.fillStyle = "#ffffff"; g.fillRect(0, 0, 6, 6);
      g.strokeStyle = p.shrank; g.lineWidth = 1.2;
      g.beginPath(); g.moveTo(0, 6); g.lineTo(6, 0); g.stroke();
      return ctx.createPattern(c, "repeat");
    }
    function paint() {
      const W = layout(), H = (maxDep + 1) * ROW, dpr = window.devicePixelRatio || 1;
      // Backing pixels at the screen's density, drawn in CSS pixels.
      canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
      canvas.style.width = W + "px"; canvas.style.height = H + "px";
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.font = "11px ui-monospace, monospace"; ctx.textBaseline = "middle";
      const pattern = two ? hatch(pal()) : null;
      for (const f of drawn) {
        const i = f.i, y = rowY(f.dep), hit = !searchRe || searchRe.test(nm(i));
        ctx.globalAlpha = hit ? 1 : 0.35;
        const rm = removed(i);
        ctx.fillStyle = rm ? pattern : color(i);
        ctx.fillRect(f.x, y, f.px - 0.5, ROW - 1);
        if (rm) { ctx.strokeStyle = pal().shrank; ctx.lineWidth = 1; ctx.strokeRect(f.x + 0.5, y + 0.5, f.px - 1.5, ROW - 2); }
        // The bucket band, along the side towards the root.
        ctx.fillStyle = d.bucketColors[bucket[i]];
        ctx.fillRect(f.x, st.orient === "icicle" ? y : y + ROW - 4, f.px - 0.5, 3);
        if (searchRe && hit) { ctx.strokeStyle = "#ff00ff"; ctx.lineWidth = 2; ctx.strokeRect(f.x + 1, y + 1, f.px - 2.5, ROW - 3); }
        if (f.px > 30) {
          ctx.fillStyle = "#000";
          const n = Math.floor((f.px - 6) / 6.7), s = nm(i);
          ctx.fillText(s.length > n ? s.slice(0, Math.max(0, n - 1)) + "…" : s, f.x + 3, y + ROW / 2 + 1);
        }
      }
      ctx.globalAlpha = 1;
    }
    const rowY = (dep) => (st.orient === "icicle" ? dep : maxDep - dep) * ROW;

    // ---- Operations (the controls and the test API both call these).
    function redraw() {
      widths();
      if (w[st.root] === 0) st.root = 0;
      paint();
      if (st.search) search(st.search);
      else status.textContent = w[0] === 0 ? "no samples to draw" + (st.bucket >= 0 ? " in " + d.buckets[st.bucket] : "") : "";
    }
    function set(key, value) { st[key] = value; if (key === "palette") paint(); else redraw(); }
    // findNode is the first node named n in preorder, preferring one
    // with a width in the current view.
    function findNode(n) {
      let first = -1;
      for (let i = 0; i < N; i++) {
        if (nm(i) !== n) continue;
        if (w[i] > 0) return i;
        if (first < 0) first = i;
      }
      return first;
    }
    function zoomTo(i) { if (i >= 0 && w[i] > 0) { st.root = i; paint(); if (st.search) search(st.search); } return nm(st.root); }
    // search highlights the frames whose names match re and totals them,
    // each sample once: a match inside a match is not added again.
    function search(re) {
      st.search = re;
      if (!re) { searchRe = null; status.textContent = ""; paint(); return ""; }
      try { searchRe = new RegExp(re); } catch (e) { searchRe = null; status.textContent = "invalid regexp: " + e.message; paint(); return status.textContent; }
      let count = 0;
      const sum = [0, 0], stack = [[st.root, false]];
      while (stack.length) {
        const [i, inside] = stack.pop();
        if (w[i] === 0) continue;
        const m = searchRe.test(nm(i));
        if (m) { count++; if (!inside) { sum[0] += val(i, 0); sum[1] += val(i, 1); } }
        for (const c of kids[i]) stack.push([c, inside || m]);
      }
      let t = count === 1 ? "1 frame matches" : count + " frames match";
      if (count > 0) t += two ? " · base " + side(sum[0], 0) + " → new " + side(sum[1], 1) : " · " + side(sum[0], 0);
      if (st.root !== 0) t += " (within " + nm(st.root) + ")";
      status.textContent = t;
      paint();
      return t;
    }
    function frameAt(ev) {
      const r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      for (const f of drawn) {
        const fy = rowY(f.dep);
        if (x >= f.x && x < f.x + f.px && y >= fy && y < fy + ROW) return f;
      }
      return null;
    }
    canvas.addEventListener("mousemove", (ev) => {
      const f = frameAt(ev);
      tipBox.hidden = !f;
      if (!f) return;
      tipBox.textContent = tip(f.i);
      const r = graph.getBoundingClientRect();
      tipBox.style.left = Math.min(ev.clientX - r.left + 12, r.width - 360) + "px";
      tipBox.style.top = ev.clientY - r.top + 14 + "px";
    });
    canvas.addEventListener("mouseleave", () => { tipBox.hidden = true; });
    canvas.addEventListener("click", (ev) => { const f = frameAt(ev); if (f) zoomTo(f.i); });

    // ---- Controls and legend.
    const controls = section.querySelector(".controls");
    function control(label, el) { const l = document.createElement("label"); l.append(label, " ", el); controls.append(l); return el; }
    function select(label, options, on) {
      const s = document.createElement("select");
      options.forEach(([v, t]) => s.add(new Option(t, v)));
      s.addEventListener("change", () => on(s.value));
      return control(label, s);
    }
    const searchBox = control("search", Object.assign(document.createElement("input"), { type: "search", placeholder: "regexp" }));
    searchBox.addEventListener("input", () => search(searchBox.value));
    const reset = Object.assign(document.createElement("button"), { textContent: "reset zoom" });
    reset.addEventListener("click", () => zoomTo(0));
    controls.append(reset);
    select("orientation", [["icicle", "icicle (root on top)"], ["flame", "flame (root at bottom)"]], (v) => set("orient", v));
    select("bucket", [["-1", "all"]].concat(d.buckets.map((b, k) => [String(k), b])), (v) => set("bucket", +v));
    if (two) {
      const wsel = select("width", [["larger", "larger side"], ["new", "new side"]], (v) => {
        set("widthBy", v);
        section.querySelector(".width-rule").textContent = v === "new" ? "new side" : "larger side";
      });
      wsel.classList.add("width");
      select("palette", d.palettes.map((p, k) => [String(k), p.name]), (v) => { set("palette", +v); legend(); });
      const hide = control("hide removed", Object.assign(document.createElement("input"), { type: "checkbox" }));
      hide.addEventListener("change", () => set("hideRemoved", hide.checked));
    }
    function legend() {
      const box = section.querySelector(".legend");
      box.textContent = "";
      const sw = (bg, text, extra) => {
        const s = document.createElement("span");
        const c = document.createElement("span");
        c.className = "sw"; c.style.background = bg; if (extra) c.style.cssText += extra;
        s.append(c, text); box.append(s);
      };
      if (two) {
        const p = pal(), k = d.clamp;
        [[-1, "≤¼x"], [-0.5, "½x"], [0, "1x"], [0.5, "2x"], [1, "≥" + k + "x / new"]].forEach(([c, t]) => sw(mix(p, c), t));
        sw("repeating-linear-gradient(-45deg, #fff 0 3px, " + p.shrank + " 3px 4px)", "removed", "border-color:" + p.shrank);
      }
      sw(OTHER, "other (merged)");
      d.buckets.forEach((b, k) => sw(d.bucketColors[k], b + (two ? " (band)" : "")));
    }
    legend();
    window.addEventListener("resize", paint);
    widths();
    paint();

    return {
      search, reset: () => zoomTo(0), zoom: (n) => zoomTo(findNode(n)), set,
      tooltip: (n) => { const i = findNode(n); return i < 0 ? null : tip(i); },
      frames: () => drawn.map((f) => ({ name: nm(f.i), color: removed(f.i) ? pal().shrank : color(f.i), removed: removed(f.i),
        other: other[f.i], bucket: d.buckets[bucket[f.i]], x: f.x, y: rowY(f.dep), width: f.px, depth: f.dep })),
      root: () => nm(st.root), state: () => Object.assign({}, st),
      // The number formatting, in this graph's units (for tests).
      amount: (v, unit) => amount(d.units, v, unit), pct, pp,
    };
  }

  // window.profdiff: the first flame graph's operations, for tests and the
  // console (flames: every graph's); paintMs: when the first paint ended.
  const flames = Array.from(document.querySelectorAll("section.flame")).map(Flame);
  window.profdiff = Object.assign({ flames }, flames[0] || {}, { paintMs: performance.now() });
  performance.mark("profdiff-painted");
})();
