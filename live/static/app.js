// hlm live view: renders the events of /events (package live).
"use strict";

const fates = {
  skip: "skipped (committed on the device, not verified)",
  accepted: "accepted draft",
  resampled: "resampled by the server after a rejection",
  bonus: "bonus token (after a fully accepted block)",
  llm: "sampled by the LLM (no draft)",
};

const runs = new Map(); // run id → state
let current = null;     // the run the totals and the chart show
const $ = (id) => document.getElementById(id);

function setStatus(state, text) {
  const s = $("status");
  s.dataset.state = state;
  s.textContent = text;
}

function fmt(x, digits) {
  return Number.isFinite(x) ? x.toFixed(digits) : "–";
}

function startRun(ev) {
  const art = document.createElement("article");
  art.className = "run";
  art.id = "run-" + ev.run;
  const h = document.createElement("h2");
  h.textContent = ev.title || "generation";
  const meta = document.createElement("span");
  meta.className = "meta";
  let m = " · " + ev.method + " · seed " + ev.seed;
  if (ev.total > 1) m += " · prompt " + (ev.index + 1) + "/" + ev.total;
  if (ev.pace > 0) m += " · paced at " + ev.pace + "× the virtual clock";
  meta.textContent = m;
  h.appendChild(meta);
  const p = document.createElement("p");
  p.className = "text";
  const pr = document.createElement("span");
  pr.className = "prompt";
  pr.textContent = ev.prompt;
  p.appendChild(pr);
  art.append(h, p);
  $("runs").appendChild(art);
  const run = { id: ev.run, el: art, text: p, tokens: [], byPos: new Map(), rounds: new Set(), uploads: new Set(), bits: 0 };
  runs.set(ev.run, run);
  current = run;
  setStatus("running", "generating (" + ev.method + ")…");
  update();
}

function addToken(ev) {
  const run = runs.get(ev.run);
  if (!run) return;
  const span = document.createElement("span");
  span.className = "tok fate-" + ev.kind;
  span.dataset.kind = ev.kind;
  span.dataset.pos = ev.pos;
  span.dataset.token = ev.token;
  span.dataset.round = ev.round;
  span.textContent = ev.text === undefined || ev.text === "" ? "·" : ev.text;
  run.text.appendChild(span);
  run.tokens.push(ev);
  run.byPos.set(ev.pos, { ev, span });
  run.rounds.add(ev.round);
  if (ev.kind !== "skip" && !run.uploads.has(ev.round)) {
    run.uploads.add(ev.round);
    run.bits += ev.up_bits || 0;
  }
  if (run === current) update();
}

function addCheck(ev) {
  const run = runs.get(ev.run);
  const t = run && run.byPos.get(ev.pos);
  if (!t) return;
  t.ev.accept = ev.accept;
  t.span.dataset.accept = ev.accept;
}

function endRun(ev) {
  const run = runs.get(ev.run);
  if (!run) return;
  const s = ev.summary;
  const p = document.createElement("p");
  p.className = "summary";
  if (ev.error) {
    p.classList.add("error");
    p.textContent = "error: " + ev.error;
  } else {
    p.textContent = s.stop_reason + " · " + s.rounds + " rounds, " + s.uploads + " uploads (TR " + fmt(s.transmission_rate, 3) +
      ") · " + fmt(s.uplink_bits_per_token, 1) + " bits/token · " + fmt(s.throughput_tps, 2) + " tokens/s virtual, " +
      fmt(s.wall_throughput_tps, 1) + " tokens/s wall";
  }
  run.el.appendChild(p);
  run.el.dataset.done = "1";
  run.summary = s;
  if (run === current) update();
  const pending = [...runs.values()].some((r) => !r.el.dataset.done);
  if (ev.error) setStatus("error", "run " + ev.run + " failed");
  else if (!pending) setStatus("done", "finished");
}

// update refreshes the totals and the chart for the current run.
function update() {
  const r = current;
  if (!r) return;
  const n = r.tokens.length;
  const last = n ? r.tokens[n - 1] : null;
  const vt = last ? last.t : 0, wt = last ? last.wall : 0;
  $("t-tokens").textContent = n;
  $("t-rounds").textContent = r.rounds.size;
  $("t-uploads").textContent = r.uploads.size;
  $("t-tr").textContent = r.rounds.size ? fmt(r.uploads.size / r.rounds.size, 3) : "–";
  $("t-bits").textContent = r.bits;
  $("t-bpt").textContent = n ? fmt(r.bits / n, 1) : "–";
  $("t-vtps").textContent = vt > 0 ? fmt(n / vt, 2) : "–";
  $("t-wtps").textContent = wt > 0 ? fmt(n / wt, 1) : "–";
  $("t-time").textContent = fmt(vt, 2) + " s / " + fmt(wt, 2) + " s";
  drawChart(r);
}

// drawChart plots tokens/s over the last W tokens, on the virtual and on
// the wall clock, against the token index.
function drawChart(r) {
  const c = $("chart"), g = c.getContext("2d");
  const W = 16, pad = { l: 44, r: 8, t: 8, b: 20 };
  g.clearRect(0, 0, c.width, c.height);
  const rate = (key) => r.tokens.map((e, i) => {
    if (i < 1) return NaN;
    const j = Math.max(0, i - W), dt = e[key] - r.tokens[j][key];
    return dt > 0 ? (i - j) / dt : NaN;
  });
  const v = rate("t"), w = rate("wall");
  const ymax = Math.max(1, ...v.filter(Number.isFinite), ...w.filter(Number.isFinite));
  const n = Math.max(r.tokens.length, 2);
  const X = (i) => pad.l + (c.width - pad.l - pad.r) * i / (n - 1);
  const Y = (y) => c.height - pad.b - (c.height - pad.t - pad.b) * Math.min(y, ymax) / ymax;
  g.strokeStyle = "#d1d5db";
  g.fillStyle = "#6b7280";
  g.font = "11px system-ui, sans-serif";
  g.beginPath();
  g.moveTo(pad.l, pad.t);
  g.lineTo(pad.l, c.height - pad.b);
  g.lineTo(c.width - pad.r, c.height - pad.b);
  g.stroke();
  g.fillText(ymax >= 100 ? ymax.toFixed(0) : ymax.toPrecision(2), 2, pad.t + 8);
  g.fillText("0", 2, c.height - pad.b);
  g.fillText("token " + r.tokens.length, c.width - pad.r - 60, c.height - 4);
  for (const [ys, color] of [[w, "#9ca3af"], [v, "#2563eb"]]) {
    g.strokeStyle = color;
    g.lineWidth = 1.5;
    g.beginPath();
    let pen = false;
    ys.forEach((y, i) => {
      if (!Number.isFinite(y)) { pen = false; return; }
      if (pen) g.lineTo(X(i), Y(y)); else g.moveTo(X(i), Y(y));
      pen = true;
    });
    g.stroke();
  }
}

// The hover card.
function showTip(span, x, y) {
  const run = runs.get(Number(span.closest(".run").id.slice(4)));
  const t = run && run.byPos.get(Number(span.dataset.pos));
  if (!t) return;
  const e = t.ev;
  const rows = [
    ["fate", fates[e.kind] || e.kind],
    ["token", "#" + e.token + " " + JSON.stringify(e.text || "")],
    ["position", e.pos + " (round " + e.round + ")"],
    ["uncertainty u", e.u !== undefined ? fmt(e.u, 3) : "not measured by this method"],
    ["importance", e.imp !== undefined ? e.imp + " attention weights above θ_imp" : "not measured by this method"],
  ];
  if (e.kind === "skip") {
    rows.push(["bits", "none now: its id goes with the next upload"]);
  } else {
    let b = (e.up_bits || 0) + " bits for the round's upload";
    if (e.bits) b += "; this draft's distribution " + e.bits + " bits" + (e.support ? " (" + e.support + " entries)" : "");
    rows.push(["bits", b]);
  }
  let acc;
  if (e.accept !== undefined) {
    acc = fmt(e.accept, 4);
    if (e.kind === "resampled") acc += " (the rejected draft's)";
  } else if (e.kind === "skip") {
    acc = "known once the next upload's verdict is back";
  } else if (e.kind === "bonus" || e.kind === "llm") {
    acc = "— (the server's own token)";
  } else {
    acc = "not known on the device (the simulator shows it)";
  }
  rows.push(["acceptance prob.", acc]);
  rows.push(["committed at", fmt(e.t, 3) + " s virtual, " + fmt(e.wall, 3) + " s wall"]);
  const tip = $("tip");
  const table = document.createElement("table");
  for (const [k, val] of rows) {
    const tr = table.insertRow();
    const th = document.createElement("th");
    th.textContent = k;
    tr.appendChild(th);
    tr.insertCell().textContent = val;
  }
  tip.replaceChildren(table);
  tip.hidden = false;
  const bx = Math.min(x + 14, window.innerWidth - tip.offsetWidth - 8);
  const by = y + 18 + tip.offsetHeight > window.innerHeight ? y - tip.offsetHeight - 10 : y + 18;
  tip.style.left = bx + "px";
  tip.style.top = by + "px";
}

document.addEventListener("mouseover", (e) => {
  const span = e.target.closest && e.target.closest(".text .tok");
  if (span) showTip(span, e.clientX, e.clientY);
  else $("tip").hidden = true;
});

const source = new EventSource("events");
source.onopen = () => { if ($("status").dataset.state === "connecting") setStatus("waiting", "connected, waiting for a generation…"); };
source.onerror = () => {
  if ($("status").dataset.state !== "done") setStatus("error", "disconnected (the command ended?)");
  source.close();
};
source.onmessage = (m) => {
  const ev = JSON.parse(m.data);
  switch (ev.type) {
    case "run": startRun(ev); break;
    case "token": addToken(ev); break;
    case "check": addCheck(ev); break;
    case "end": endRun(ev); break;
  }
};
