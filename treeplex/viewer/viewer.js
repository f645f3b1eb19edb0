"use strict";
// treeplex view: a saved solution (a poker betting tree with 13x13 grids, or a table of
// infosets for other games), optionally compared with a second solution of the same game.
// The data is inlined in the page (#treeplex-data); the page fetches nothing.

const DATA = JSON.parse(document.getElementById("treeplex-data").textContent);
const FILES = DATA.files;
const RANKS = "AKQJT98765432";
const PALETTE = ["#3fa34d", "#d9534f", "#4a7fd4", "#e0a030", "#8e5ad6", "#2aa6a6", "#c05a9a", "#7a7a7a"];
const ROW_LIMIT = 500; // rows of the infoset table drawn at once

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null) continue;
    if (k === "class") e.className = v;
    else if (k === "style") e.style.cssText = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const kid of kids.flat()) if (kid != null) e.append(kid);
  return e;
}
const pct = (q) => (q == null || Number.isNaN(q) ? "–" : (100 * q).toFixed(1) + "%");
const fixed = (v, d = 2) => (v == null ? "–" : Number(v).toFixed(d));
const sig = (v) => (v == null ? "–" : Number(v).toPrecision(4));
const tv = (p, q) => 0.5 * p.reduce((s, v, i) => s + Math.abs(v - q[i]), 0); // total variation distance

// ------------------------------------------------------------------ header: files and exploitability

function fileHeader() {
  const box = document.getElementById("files");
  box.append(el("span", {class: "brand"}, "treeplex view"));
  FILES.forEach((f, i) => {
    const d = f.data;
    let expl = "exploitability not recorded";
    if (d.exploitability != null) {
      expl = `exploitability ${sig(d.exploitability)} ${d.payoff_unit || ""}`;
      if (d.pot) expl += ` (${(100 * d.exploitability / d.pot).toFixed(3)}% of the pot)`;
    }
    const run = d.algorithm ? `${d.algorithm}${d.iterations != null ? `, ${d.iterations} it.` : ""}` : null;
    box.append(el("div", {class: "file", dataset: {file: i}},
      el("b", {}, (FILES.length > 1 ? "AB"[i] + ": " : "") + f.name), " ",
      [d.game, run].filter(Boolean).join(" · "), " · ",
      el("span", {class: "expl", dataset: {value: d.exploitability ?? ""}}, expl)));
  });
}

// What changed and what it costs: each player's EV gain (rows computed in viewer/__init__.py).
function whatIf() {
  if (!DATA.whatif || !DATA.whatif.length) return;
  const unit = FILES[0].data.payoff_unit || "";
  const cell = (r, q) => {
    let t = `${r.chips[q] >= 0 ? "+" : ""}${sig(r.chips[q])} ${unit}`;
    if (r.mbb) t += ` = ${r.mbb[q] >= 0 ? "+" : ""}${sig(r.mbb[q])} mbb/g`;
    if (r.pct_pot) t += ` = ${r.pct_pot[q] >= 0 ? "+" : ""}${r.pct_pot[q].toFixed(2)}% of the pot`;
    return t;
  };
  const locks = (FILES[0].data.locks || []).map((l) =>
    `player ${l.player} at ${l.node || "root"}${l.hands ? ` (${l.hands})` : ""}: ` +
    `${l.kind === "frequency" ? "range-wide " : ""}${Object.entries(l.strategy).map(([a, p]) => `${a} ${pct(p)}`).join(", ")}`);
  document.getElementById("files").append(el("div", {id: "whatif"},
    el("b", {}, "EV gained"), locks.length ? el("span", {class: "locks"}, " · locks: " + locks.join("; ")) : null,
    el("table", {},
      el("tr", {}, el("th", {}, ""), el("th", {}, "player 0 (OOP)"), el("th", {}, "player 1 (IP)"), el("th", {}, "within")),
      DATA.whatif.map((r) => el("tr", {dataset: {chips: r.chips[0]}}, el("td", {}, r.what), el("td", {}, cell(r, 0)),
        el("td", {}, cell(r, 1)), el("td", {}, r.bound == null ? "–" : `${sig(r.bound)} ${unit}`))))));
}

// ------------------------------------------------------------------ poker: tree

function indexNodes(data) {
  const nodes = new Map(), chance = new Map(); // history -> node; chance history -> cards dealt there
  for (const nd of data.nodes) {
    nodes.set(nd.history, nd);
    if (!Array.isArray(nd.frequencies)) { // a minimal node: the range's frequencies from its hands
      const sum = nd.actions.map(() => 0);
      let total = 0;
      for (const [h, probs] of Object.entries(nd.hands)) {
        const w = nd.weight ? Number(nd.weight[h]) || 0 : 1;
        total += w;
        probs.forEach((q, a) => (sum[a] += w * q));
      }
      nd.frequencies = total > 0 ? sum.map((v) => v / total) : nd.actions.map(() => null);
    }
    const m = nd.history.match(/^(.*)\/([2-9TJQKA][cdhs])\/$/); // first node of a street
    if (m) (chance.get(m[1]) || chance.set(m[1], []).get(m[1])).push(m[2]);
  }
  const rank = (c) => RANKS.indexOf(c[0]) * 4 + "shdc".indexOf(c[1]);
  for (const cards of chance.values()) cards.sort((a, b) => rank(a) - rank(b));
  return {data, nodes, chance};
}

const childHistory = (h, a) => (h === "" || h.endsWith("/") ? h + a : h + "-" + a);

// Steps from the root to history `at`: actions {kind, from, action, hist} and dealt cards {kind, prefix, card, hist}.
function steps(at) {
  const out = [];
  let h = "";
  at.split("/").forEach((seg, i) => {
    if (i % 2 === 1) {
      const prefix = h;
      h = `${h}/${seg}/`;
      out.push({kind: "card", prefix, card: seg, hist: h});
      return;
    }
    for (const a of seg.split("-").filter(Boolean)) {
      const from = h;
      h = childHistory(h, a);
      out.push({kind: "action", from, action: a, hist: h});
    }
  });
  return out;
}

function actionName(a, actions) {
  if (a === "x") return "check";
  if (a === "c") return "call";
  if (a === "f") return "fold";
  const m = a.match(/^b(\d+(?:\.\d+)?)$/);
  if (m) return (actions.includes("c") ? "raise to " : "bet ") + m[1];
  return a;
}

function actionColors(actions) {
  const bets = actions.filter((a) => /^b\d/.test(a)).sort((p, q) => parseFloat(p.slice(1)) - parseFloat(q.slice(1)));
  return actions.map((a, i) => {
    if (a === "f") return "#4a7fd4";
    if (a === "x" || a === "c") return "#3fa34d";
    if (bets.includes(a)) return `hsl(2, 72%, ${64 - 34 * (bets.length > 1 ? bets.indexOf(a) / (bets.length - 1) : 0.5)}%)`;
    return PALETTE[i % PALETTE.length];
  });
}

// ------------------------------------------------------------------ poker: 13x13 grid

function handClass(h) { // "AsKd" -> "AKo"; pairs on the diagonal, suited above, offsuit below
  const r1 = RANKS.indexOf(h[0]), r2 = RANKS.indexOf(h[2]);
  const hi = Math.min(r1, r2), lo = Math.max(r1, r2);
  if (hi === lo) return RANKS[hi] + RANKS[hi];
  return RANKS[hi] + RANKS[lo] + (h[1] === h[3] ? "s" : "o");
}
const cellClass = (i, j) => (i === j ? RANKS[i] + RANKS[j] : i < j ? RANKS[i] + RANKS[j] + "s" : RANKS[j] + RANKS[i] + "o");
const CLASS_COMBOS = (c) => (c.length === 2 ? 6 : c[2] === "s" ? 4 : 12);

// Per hand class: its combos, their weight (range weight x own reach) and the weighted frequencies.
function classStats(nd) {
  const out = {};
  if (!nd) return out;
  for (const [h, probs] of Object.entries(nd.hands)) {
    const w = nd.weight ? nd.weight[h] ?? 0 : 1;
    const s = (out[handClass(h)] ||= {combos: [], weight: 0, sum: probs.map(() => 0)});
    s.combos.push(h);
    s.weight += w;
    probs.forEach((q, a) => (s.sum[a] += w * q));
  }
  for (const s of Object.values(out)) s.freq = s.weight > 0 ? s.sum.map((v) => v / s.weight) : null;
  return out;
}

// How two nodes differ: the largest change of an aggregate frequency and the weighted mean
// total variation distance of the combos' strategies (weights of A).
function nodeDiff(na, nb) {
  if (!na || !nb || na.actions.join() !== nb.actions.join()) return null;
  const freq = Math.max(...na.frequencies.map((f, i) => Math.abs((f ?? 0) - (nb.frequencies[i] ?? 0))));
  let num = 0, den = 0;
  for (const [h, p] of Object.entries(na.hands)) {
    const q = nb.hands[h], w = na.weight ? na.weight[h] ?? 0 : 1;
    if (!q || !(w > 0)) continue;
    num += w * tv(p, q);
    den += w;
  }
  return {freq, combo: den > 0 ? num / den : 0};
}

// ------------------------------------------------------------------ poker: page

function pokerViewer() {
  const A = indexNodes(FILES[0].data), B = FILES[1] ? indexNodes(FILES[1].data) : null;
  const postflop = "saved_streets" in A.data || "board" in A.data.nodes[0];
  const who = (p) => (postflop ? ["OOP", "IP"][p] : `player ${p}`);
  let at = "", grid = "a", hovered = null, note = "";

  const exists = (h) => A.nodes.has(h) || A.chance.has(h);
  function nearest(h) { // the deepest existing node on the way to h
    const st = steps(h);
    while (st.length && !exists(st[st.length - 1].hist)) st.pop();
    return st.length ? st[st.length - 1].hist : "";
  }
  function go(h) {
    at = h;
    note = "";
    hovered = null;
    render();
  }
  function follow(a) {
    const c = childHistory(at, a);
    if (exists(c)) return go(c);
    note = a === "f" ? "fold: the hand ends there." :
      "No decision below this action in the file: a showdown, an all-in runout, or a street not saved " +
      "(solve with --out-streets N to save more streets).";
    render();
  }

  function breadcrumbs() {
    const bar = el("nav", {id: "crumbs"}, el("a", {href: "#", dataset: {hist: ""}, onclick: (e) => { e.preventDefault(); go(""); }}, "root"));
    for (const s of steps(at)) {
      bar.append(el("span", {class: "sep"}, "›"));
      if (s.kind === "action") {
        const nd = A.nodes.get(s.from);
        const label = `${nd ? who(nd.player) + " " : ""}${actionName(s.action, nd ? nd.actions : [])}`;
        bar.append(el("a", {href: "#", dataset: {hist: s.hist}, onclick: (e) => { e.preventDefault(); go(s.hist); }}, label));
      } else {
        const sel = el("select", {class: "card", dataset: {prefix: s.prefix}, title: "the card dealt here",
          onchange: () => go(nearest(`${s.prefix}/${sel.value}/${at.slice(s.hist.length)}`))},
          A.chance.get(s.prefix).map((c) => el("option", {value: c}, c)));
        sel.value = s.card;
        bar.append(sel);
      }
    }
    return bar;
  }

  function cardPicker() {
    const cards = A.chance.get(at);
    return el("section", {id: "chance"}, el("h2", {}, "Chance: pick the card dealt"),
      el("div", {class: "cards"}, cards.map((c) => el("button", {class: `cardbtn suit-${c[1]}`, dataset: {card: c},
        onclick: () => go(`${at}/${c}/`)}, c))));
  }

  function actionsBar(nd, nb, colors) {
    return el("div", {id: "actions"}, nd.actions.map((a, i) => {
      const c = childHistory(at, a);
      return el("button", {class: "action", dataset: {action: a}, title: exists(c) ? "go to this line" : "no decision below in this file",
        onclick: () => follow(a)},
        el("i", {class: "swatch", style: `background:${colors[i]}`}), ` ${actionName(a, nd.actions)} `,
        el("span", {class: "freq"}, pct(nd.frequencies[i]) + (nb ? ` / ${pct(nb.frequencies[i])}` : "")),
        exists(c) ? "" : el("span", {class: "end"}, " ■"));
    }));
  }

  function aggregates(nd, nb) {
    const cols = nb ? ["", "A", "B", "A − B"] : ["", "range"];
    const row = (name, key, a, b, fmt, cls) => el("tr", {dataset: {row: key}, class: cls},
      el("th", {}, name), el("td", {}, fmt(a)), nb ? [el("td", {}, fmt(b)), el("td", {class: "delta"},
        a == null || b == null ? "–" : fmt(a - b))] : []);
    const combos = (n) => (n.weight ? Object.values(n.weight).reduce((s, w) => s + w, 0) : Object.keys(n.hands).length);
    const d = nb ? nodeDiff(nd, nb) : null;
    return el("table", {id: "aggregates", class: "data"},
      el("thead", {}, el("tr", {}, cols.map((c) => el("th", {}, c)))),
      el("tbody", {},
        nd.actions.map((a, i) => row(actionName(a, nd.actions), a, nd.frequencies[i], nb && nb.frequencies[i], pct, "freq")),
        row("reach", "reach", nd.reach, nb && nb.reach, pct),
        row("combos", "combos", combos(nd), nb && combos(nb), (v) => fixed(v, 1)),
        "range_ev" in nd ? row("range EV (chips)", "range_ev", nd.range_ev, nb && nb.range_ev, (v) => fixed(v, 3)) : null,
        "range_equity" in nd ? row("range equity", "range_equity", nd.range_equity, nb && nb.range_equity, pct) : null,
        d ? el("tr", {dataset: {row: "combo_tv"}, title: "mean total variation distance of the combos' strategies"},
          el("th", {}, "combo difference"), el("td", {colspan: 3, class: "delta"}, pct(d.combo))) : null));
  }

  function gridTable(nd, nb, colors) {
    const sa = classStats(nd), sb = classStats(nb);
    const table = el("div", {id: "grid", class: `mode-${grid}`});
    for (let i = 0; i < 13; i++) for (let j = 0; j < 13; j++) {
      const name = cellClass(i, j), s = (grid === "b" ? sb : sa)[name];
      const cell = el("div", {class: "cell" + (hovered === name ? " hovered" : ""), dataset: {class: name},
        onmouseenter: () => {
          table.querySelector(".hovered")?.classList.remove("hovered");
          cell.classList.add("hovered");
          hovered = name;
          detail.replaceWith(detail = detailPanel(nd, nb));
        }});
      if (grid === "diff") {
        const a = sa[name], b = sb[name];
        if (a && b && a.freq && b.freq) {
          const d = tv(a.freq, b.freq);
          cell.dataset.tv = d;
          cell.style.background = `rgba(214, 60, 40, ${Math.min(1, 0.08 + 2 * d)})`;
          cell.append(el("span", {class: "tv"}, (100 * d).toFixed(0)));
        } else cell.classList.add("empty");
      } else if (s && s.freq) {
        const bar = el("div", {class: "bar", style: `height:${Math.min(100, 100 * s.weight / CLASS_COMBOS(name))}%`});
        s.freq.forEach((f, a) => bar.append(el("div", {class: "seg", dataset: {action: nd.actions[a]},
          style: `width:${(100 * f).toFixed(4)}%;background:${colors[a]}`})));
        cell.append(bar);
      } else cell.classList.add("empty");
      cell.append(el("span", {class: "label"}, name));
      table.append(cell);
    }
    let detail = detailPanel(nd, nb);
    const tabs = nb ? el("div", {class: "tabs"}, [["a", "A"], ["b", "B"], ["diff", "A vs B (difference)"]].map(([m, label]) =>
      el("button", {class: grid === m ? "on" : "", dataset: {grid: m}, onclick: () => { grid = m; render(); }}, label))) : null;
    const legend = el("div", {class: "legend"}, nd.actions.map((a, i) =>
      el("span", {}, el("i", {class: "swatch", style: `background:${colors[i]}`}), " " + actionName(a, nd.actions))));
    return el("section", {id: "gridbox"}, el("div", {}, tabs, table, legend), detail);
  }

  function detailPanel(nd, nb) {
    const box = el("aside", {id: "detail"});
    if (!hovered) {
      box.append(el("p", {class: "hint"}, "Hover a cell for its combos: strategy, EV, equity, weight."));
      return box;
    }
    const s = classStats(nd)[hovered];
    box.append(el("h3", {}, hovered));
    if (!s) {
      box.append(el("p", {}, `${who(nd.player)} holds no ${hovered} here.`));
      return box;
    }
    const has = (k) => nd[k] && Object.keys(nd[k]).length;
    box.append(el("table", {class: "data"},
      el("thead", {}, el("tr", {}, el("th", {}, "combo"), nd.actions.map((a) => el("th", {}, actionName(a, nd.actions))),
        has("ev") ? el("th", {}, "EV") : null, has("equity") ? el("th", {}, "equity") : null, el("th", {}, "weight"))),
      el("tbody", {}, s.combos.map((h) => el("tr", {dataset: {combo: h}}, el("th", {}, h),
        nd.hands[h].map((q, a) => el("td", {dataset: {action: nd.actions[a]}},
          nb && nb.hands[h] ? [el("div", {}, pct(q)), el("div", {class: "b"}, pct(nb.hands[h][a]))] : pct(q))),
        has("ev") ? el("td", {class: "ev"}, fixed(nd.ev[h], 3)) : null,
        has("equity") ? el("td", {class: "equity"}, pct(nd.equity[h])) : null,
        el("td", {class: "weight"}, nd.weight ? fixed(nd.weight[h], 3) : "1"))),
      el("tr", {class: "total", dataset: {combo: "all"}}, el("th", {}, "class"),
        (s.freq || nd.actions.map(() => null)).map((f) => el("td", {}, pct(f))),
        has("ev") ? el("td") : null, has("equity") ? el("td") : null, el("td", {}, fixed(s.weight, 3))))));
    if (nb) box.append(el("p", {class: "hint"}, "Strategies: A above, B below."));
    return box;
  }

  let diffs = null; // per node in both files, computed once
  function differences() {
    diffs ||= [...A.nodes.keys()].map((h) => ({h, d: nodeDiff(A.nodes.get(h), B.nodes.get(h)), reach: A.nodes.get(h).reach}))
      .filter((r) => r.d);
    const top = [...diffs].sort((p, q) => q.d.combo * q.reach - p.d.combo * p.reach).slice(0, 15);
    const head = ["node", "player", "reach", "max frequency Δ", "combo Δ"];
    return el("section", {id: "differences"},
      el("h2", {}, `Largest differences, by combo Δ × reach (${diffs.length} nodes in both files)`),
      el("table", {class: "data"}, el("thead", {}, el("tr", {}, head.map((c) => el("th", {}, c)))),
        el("tbody", {}, top.map(({h, d, reach}) => el("tr", {class: h === at ? "current" : "", dataset: {hist: h}, onclick: () => go(h)},
          el("td", {class: "key"}, el("a", {href: "#", onclick: (e) => e.preventDefault()}, h || "root")),
          el("td", {}, who(A.nodes.get(h).player)), el("td", {}, pct(reach)), el("td", {}, pct(d.freq)), el("td", {}, pct(d.combo)))))));
  }

  function render() {
    const app = document.getElementById("app");
    app.replaceChildren(breadcrumbs());
    if (A.chance.has(at)) return app.append(cardPicker());
    const nd = A.nodes.get(at), other = B && B.nodes.get(at);
    const nb = other && other.actions.join() === nd.actions.join() ? other : null; // compared only when alike
    const colors = actionColors(nd.actions);
    app.append(...[el("h2", {id: "node", dataset: {hist: at}},
      `${who(nd.player)} to act · board ${nd.board || A.data.board || "?"} · pot ${fixed(nd.pot, 0)} · `,
      nd.reach > 0 ? `${pct(nd.reach)} of the range reaches this node` : "never reached"),
      actionsBar(nd, nb, colors), note ? el("p", {class: "note"}, note) : null,
      B && !nb ? el("p", {class: "note"}, other ? `B's node here has other actions (${other.actions.join(", ")}): not compared.`
        : "B has no node with this history.") : null,
      el("div", {class: "columns"}, aggregates(nd, nb), gridTable(nd, nb, colors)),
      B ? differences() : null].filter(Boolean));
  }
  render();
}

// ------------------------------------------------------------------ other games: infoset table

function profileViewer() {
  const [A, B] = FILES.map((f) => f.data.strategies);
  const rows = [];
  for (const player of ["player0", "player1"]) {
    const keys = new Set(Object.keys(A[player]));
    if (B) Object.keys(B[player]).forEach((k) => keys.add(k));
    for (const key of keys) {
      const a = A[player][key], b = B ? B[player][key] : undefined;
      const labels = Object.keys(a || b);
      const d = a && b ? Math.max(...labels.map((l) => Math.abs((a[l] ?? 0) - (b[l] ?? 0)))) : null;
      rows.push({player, key, a, b, d, text: `${player} ${key} ${labels.join(" ")}`.toLowerCase()});
    }
  }
  const strat = (probs) => probs ? el("div", {class: "strat"},
    el("div", {class: "bar"}, Object.values(probs).map((q, i) => el("div", {class: "seg", style: `width:${100 * q}%;background:${PALETTE[i % PALETTE.length]}`}))),
    Object.entries(probs).map(([l, q]) => el("span", {class: "prob", dataset: {action: l}}, `${l} ${q.toFixed(4)}`))) : el("span", {class: "missing"}, "absent");
  const search = el("input", {id: "search", type: "search", placeholder: "search infosets and actions", oninput: draw});
  const order = B ? el("select", {id: "order", onchange: draw}, el("option", {value: "tree"}, "tree order"),
    el("option", {value: "diff"}, "largest difference first")) : null;
  const count = el("span", {id: "count"});
  const tbody = el("tbody");
  const head = ["player", "infoset", B ? "A" : "strategy", B ? "B" : null, B ? "max |A − B|" : null].filter(Boolean);
  document.getElementById("app").append(el("div", {class: "toolbar"}, search, order, count),
    el("table", {id: "infosets", class: "data"}, el("thead", {}, el("tr", {}, head.map((c) => el("th", {}, c)))), tbody));
  function draw() {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = rows.filter((r) => words.every((w) => r.text.includes(w)));
    if (order && order.value === "diff") shown = [...shown].sort((p, q) => (q.d ?? 2) - (p.d ?? 2));
    count.textContent = `${shown.length} of ${rows.length} infosets` + (shown.length > ROW_LIMIT ? ` (first ${ROW_LIMIT} shown)` : "");
    tbody.replaceChildren(...shown.slice(0, ROW_LIMIT).map((r) => el("tr", {dataset: {key: r.key, player: r.player}},
      el("td", {}, r.player), el("td", {class: "key"}, r.key), el("td", {}, strat(r.a)),
      B ? el("td", {}, strat(r.b)) : null, B ? el("td", {class: "delta"}, r.d == null ? "–" : r.d.toFixed(4)) : null)));
  }
  draw();
}

fileHeader();
whatIf();
if ("nodes" in FILES[0].data) pokerViewer();
else profileViewer();
document.body.dataset.ready = "1"; // for tests: the page has drawn itself
