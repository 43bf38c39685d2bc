// The explorables of the "Why divide by √d" page. Each include of templates/explorables/
// renders a <figure data-xp="..."> and loads this module; a module runs once per
// page however many includes load it, and mountAll() skips figures already mounted, so
// including several figures (or swapping one in with htmx) is safe.

import * as C from "./compute.mjs";
import { barChart, chart, fmt, heatmap, histogramChart, lineChart, pct, put, small, s, divergingColor } from "./svg.mjs";
import { mountWorkedExample } from "./worked.mjs";

export const D_STEPS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512];
const RAW = "#c2410c"; // red-orange: raw scores
const SCALED = "#0b5cad"; // blue: scaled scores
const KEY_LABELS = ["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"];
const RAW_RANGE = 72; // fixed axis for raw scores, so the histogram visibly widens with d
const SCALED_RANGE = 4.5;

function out(root, name, text) {
  for (const el of root.querySelectorAll(`[data-out="${name}"]`)) el.textContent = text;
}

function chartSlot(root, name) {
  return root.querySelector(`[data-chart="${name}"]`);
}

/** Run fn at most once per animation frame while a slider is dragged. */
function throttled(fn) {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      fn();
    });
  };
}

function histDesc(name, hist) {
  const off = hist.below + hist.above;
  return `${name}: ${hist.total} samples in ${hist.bins} bins from ${fmt(hist.lo, 1)} to ${fmt(hist.hi, 1)}${off ? `; ${off} fell outside the axis` : ""}.`;
}

function weightsDesc(weights, labels) {
  return weights.map((w, i) => `${labels[i]} ${pct(w, 1)}`).join(", ");
}

// ---------------------------------------------------------------------------------------
// 1. Dot products grow with length

// One draw of 8 keys is noisy (its top weight is not even monotone in d), so the figure also
// shows the mean over 200 queries; cached, since each costs up to ~0.1 s at d = 512.
const meanTops = new Map();
export function varianceMeanTops(d) {
  if (!meanTops.has(d)) meanTops.set(d, { raw: C.meanTopWeight(d, "none"), scaled: C.meanTopWeight(d, "sqrt") });
  return meanTops.get(d);
}

function mountVariance(root) {
  const slider = root.querySelector('[data-role="d"]');
  const render = () => {
    const d = D_STEPS[Number(slider.value)];
    const f = C.varianceFigure(d);
    const means = varianceMeanTops(d);
    slider.setAttribute("aria-valuetext", `d = ${d}`);
    out(root, "d", String(d));
    const hRaw = C.histogram(f.raw, -RAW_RANGE, RAW_RANGE, 48);
    const hScaled = C.histogram(f.scaled, -SCALED_RANGE, SCALED_RANGE, 36);
    put(chartSlot(root, "raw"), histogramChart(hRaw, { color: RAW, xLabel: "q·k", title: `Histogram of raw scores q·k at d = ${d}`, desc: `${histDesc("Raw scores", hRaw)} Measured variance ${fmt(f.varRaw, 1)}, theory ${d}.` }));
    put(chartSlot(root, "scaled"), histogramChart(hScaled, { color: SCALED, xLabel: "q·k ÷ √d", title: `Histogram of scaled scores at d = ${d}`, desc: `${histDesc("Scaled scores", hScaled)} Measured variance ${fmt(f.varScaled, 2)}, theory 1.` }));
    out(root, "varRaw", fmt(f.varRaw, 1));
    out(root, "theoryRaw", String(d));
    out(root, "stdRaw", fmt(f.stdRaw, 1));
    out(root, "varScaled", fmt(f.varScaled, 2));
    out(root, "topRaw", pct(f.softRaw.topWeight));
    out(root, "topScaled", pct(f.softScaled.topWeight));
    out(root, "meanTopRaw", pct(means.raw));
    out(root, "meanTopScaled", pct(means.scaled));
    put(chartSlot(root, "softRaw"), barChart(f.softRaw.weights, KEY_LABELS, { color: RAW, width: 380, highlight: f.softRaw.top, title: `Softmax of raw scores at d = ${d}`, desc: weightsDesc(f.softRaw.weights, KEY_LABELS) }));
    put(chartSlot(root, "softScaled"), barChart(f.softScaled.weights, KEY_LABELS, { color: SCALED, width: 380, highlight: f.softScaled.top, title: `Softmax of scaled scores at d = ${d}`, desc: weightsDesc(f.softScaled.weights, KEY_LABELS) }));
    out(
      root,
      "summary",
      `With d = ${d}, raw scores typically land around ±${fmt(f.stdRaw, 1)} (variance ${fmt(f.varRaw, 1)}, theory ${d}), ` +
        `and softmax puts ${pct(means.raw)} on the top key on average over 200 queries (${pct(f.softRaw.topWeight)} in the draw below). ` +
        `Divided by √${d} = ${fmt(Math.sqrt(d), 1)}, the variance is back to about 1 (${fmt(f.varScaled, 2)}) and the mean top weight is ` +
        `${pct(means.scaled)} (${pct(f.softScaled.topWeight)} in the draw below).`,
    );
  };
  slider.addEventListener("input", throttled(render));
  render();
}

// ---------------------------------------------------------------------------------------
// 2. Big scores saturate softmax

function mountSaturation(root) {
  const slider = root.querySelector('[data-role="mult"]');
  const curve = C.saturationCurve();
  const render = () => {
    const mult = Number(slider.value);
    const f = C.saturationFigure(mult);
    const topToken = C.TOKENS[f.top];
    slider.setAttribute("aria-valuetext", `scores ×${mult}`);
    out(root, "mult", `×${mult.toFixed(1)}`);
    const base = C.TOY_SCORES.map((x) => fmt(x, 2)).join(", ");
    out(root, "scores", mult === 1 ? base : `${f.scores.map((x) => fmt(x, 2)).join(", ")} (×${mult} of ${base})`);
    put(chartSlot(root, "weights"), barChart(f.weights, C.TOKENS, { color: SCALED, highlight: f.top, width: 280, title: `Softmax weights at ×${mult}`, desc: weightsDesc(f.weights, C.TOKENS) }));
    const jac = f.jacobian.map((row) => row.map((v) => (Math.abs(v) < 0.005 ? 0 : v)));
    put(
      chartSlot(root, "jacobian"),
      heatmap(jac, C.TOKENS, C.TOKENS, {
        colorFor: (v) => divergingColor(v, 0.3),
        darkAt: (v) => Math.abs(v) > 0.17,
        format: (v) => fmt(v, 2),
        cell: 50,
        labelWidth: 40,
        title: `Softmax Jacobian at ×${mult}`,
        desc: `Rows: weights; columns: scores. ${f.jacobian.map((row, i) => `${C.TOKENS[i]}: ${row.map((v) => fmt(v, 3)).join(", ")}`).join("; ")}.`,
        cellTitle: (i, j) => `∂p(${C.TOKENS[i]}) / ∂s(${C.TOKENS[j]}) = ${small(f.jacobian[i][j])}`,
      }),
    );
    put(
      chartSlot(root, "curve"),
      lineChart([{ name: "largest entry", color: "#6e40c9", points: curve.map((p) => ({ x: p.mult, y: p.maxGrad })), dotRadius: 0 }], {
        title: "Largest gradient entry against the score multiplier",
        desc: `From 0.250 at ×1 to ${small(curve.at(-1).maxGrad)} at ×10; now ${small(f.maxGrad)} at ×${mult}.`,
        xLabel: "score size ×",
        yLabel: "largest entry",
        yMax: 0.26,
        xTicks: [1, 2, 4, 6, 8, 10],
        marker: { x: mult, y: f.maxGrad },
        legend: false,
      }),
    );
    out(root, "top", `${pct(f.topWeight, f.topWeight > 0.995 ? 2 : 0)} (“${topToken}”)`);
    out(root, "maxGrad", small(f.maxGrad));
    let text;
    if (f.maxGrad >= 0.1) {
      text = `The weights are spread and the gradient entries are sizeable (largest ${small(f.maxGrad)}). Nudging a score changes the weights, so training can learn which token to look at.`;
    } else if (f.maxGrad >= 0.005) {
      text = `“${topToken}” takes ${pct(f.topWeight)} and the largest gradient entry has fallen to ${small(f.maxGrad)}: the other weights barely move when their scores change.`;
    } else {
      text = `“${topToken}” takes ${pct(f.topWeight, 2)} and the largest gradient entry is ${small(f.maxGrad)}. Almost no error gets back through the softmax to the query and key matrices: the gradient has vanished.`;
    }
    out(root, "summary", text);
  };
  slider.addEventListener("input", throttled(render));
  render();
}

// ---------------------------------------------------------------------------------------
// 3. Why √d and not d

const DIV_LABEL = { none: "q·k (not divided)", sqrt: "q·k ÷ √d", d: "q·k ÷ d" };

function mountSqrtVsD(root) {
  const slider = root.querySelector('[data-role="d"]');
  const radios = [...root.querySelectorAll('[data-role="scaling"]')];
  const render = () => {
    const d = D_STEPS[Number(slider.value)];
    const scaling = radios.find((r) => r.checked)?.value ?? "sqrt";
    const f = C.scalingFigure(d, scaling);
    slider.setAttribute("aria-valuetext", `d = ${d}`);
    out(root, "d", String(d));
    out(root, "divLabel", DIV_LABEL[scaling]);
    const range = scaling === "none" ? RAW_RANGE : SCALED_RANGE;
    const hist = C.histogram(f.values, -range, range, scaling === "none" ? 48 : 40);
    const color = scaling === "none" ? RAW : scaling === "sqrt" ? SCALED : "#1a7f37";
    put(chartSlot(root, "hist"), histogramChart(hist, { color, xLabel: DIV_LABEL[scaling], title: `Histogram of ${DIV_LABEL[scaling]} at d = ${d}`, desc: `${histDesc("Scores", hist)} Measured variance ${fmt(f.variance, 3)}, theory ${fmt(f.theory, 3)}.` }));
    const theoryText = scaling === "none" ? `d = ${d}` : scaling === "sqrt" ? "1" : `1/d = ${fmt(f.theory, 4)}`;
    const digits = f.variance < 0.1 ? 4 : f.variance < 10 ? 2 : 1;
    out(root, "variance", fmt(f.variance, digits));
    out(root, "theory", theoryText);
    out(root, "std", fmt(Math.sqrt(f.variance), digits));
    out(root, "top", pct(f.soft.topWeight));
    put(
      chartSlot(root, "soft"),
      barChart(f.soft.weights, KEY_LABELS, { color, highlight: f.soft.top, width: 380, guide: { value: 1 / 8, label: "uniform" }, title: `Softmax of 8 scores divided by ${scaling === "none" ? "nothing" : scaling === "sqrt" ? "√d" : "d"} at d = ${d}`, desc: weightsDesc(f.soft.weights, KEY_LABELS) }),
    );
    const text = {
      none: `Not divided, the scores have variance about d (${fmt(f.variance, 1)} vs ${d}) and softmax puts ${pct(f.soft.topWeight)} on one key.`,
      sqrt: `Divided by √${d}, the variance is about 1 (${fmt(f.variance, 2)}) whatever d is, and softmax stays soft: the top weight is ${pct(f.soft.topWeight)}.`,
      d: `Divided by d, the variance is about 1/d (${fmt(f.variance, 4)} vs ${fmt(1 / d, 4)}): the scores huddle near 0 and softmax is nearly uniform (top weight ${pct(f.soft.topWeight)}, uniform is 12.5%).`,
    }[scaling];
    out(root, "summary", text);
  };
  slider.addEventListener("input", throttled(render));
  for (const r of radios) r.addEventListener("change", render);
  render();
}

// ---------------------------------------------------------------------------------------
// 4. The judges

const CONTESTANTS = ["A", "B", "C", "D", "E"];
const TOTAL_RANGE = 32;

function signedBars(values, labels, { color, range, title, desc, width = 300, height = 130 }) {
  const svg = chart(width, height, title, desc);
  const m = { l: 6, r: 6, t: 14, b: 20 };
  const w = width - m.l - m.r;
  const hgt = height - m.t - m.b;
  const mid = hgt / 2;
  const g = s("g", { transform: `translate(${m.l},${m.t})` });
  const bw = w / values.length;
  values.forEach((v, i) => {
    const len = (Math.max(-range, Math.min(range, v)) / range) * mid;
    const y = len >= 0 ? mid - len : mid;
    g.append(s("rect", { x: i * bw + bw * 0.2, y, width: bw * 0.6, height: Math.max(Math.abs(len), 0.8), fill: color, "fill-opacity": 0.75 }));
    const ty = len >= 0 ? mid - len - 4 : mid - len + 12;
    g.append(s("text", { x: i * bw + bw / 2, y: Math.max(10, Math.min(hgt - 2, ty)), class: "xp-value", "text-anchor": "middle" }, fmt(v, 1)));
    g.append(s("text", { x: i * bw + bw / 2, y: hgt + 15, class: "xp-tick", "text-anchor": "middle" }, labels[i]));
  });
  g.append(s("line", { x1: 0, x2: w, y1: mid, y2: mid, class: "xp-axis" }));
  svg.append(g);
  return svg;
}

function mountJudges(root) {
  let contest = 1;
  const button = root.querySelector('[data-role="reroll"]');
  const s4 = C.judgesSummary(4);
  const s256 = C.judgesSummary(256);
  const render = () => {
    const seed = contest === 1 ? C.DEFAULT_SEED : C.mixSeed(C.DEFAULT_SEED, 6, contest);
    out(root, "contest", String(contest));
    for (const col of root.querySelectorAll("[data-judges]")) {
      const n = Number(col.dataset.judges);
      const f = C.judgesFigure(n, { seed });
      put(chartSlot(col, "totals"), signedBars(f.totals, CONTESTANTS, { color: "#57606a", range: TOTAL_RANGE, title: `Totals of 5 contestants with ${n} judges`, desc: f.totals.map((t, i) => `${CONTESTANTS[i]} ${fmt(t, 1)}`).join(", ") }));
      put(chartSlot(col, "raw"), barChart(f.raw.weights, CONTESTANTS, { color: RAW, highlight: f.raw.top, width: 300, height: 120, title: `Prize shares from softmax of the totals, ${n} judges`, desc: weightsDesc(f.raw.weights, CONTESTANTS) }));
      put(chartSlot(col, "scaled"), barChart(f.scaled.weights, CONTESTANTS, { color: SCALED, highlight: f.scaled.top, width: 300, height: 120, title: `Prize shares after dividing by √${n}, ${n} judges`, desc: weightsDesc(f.scaled.weights, CONTESTANTS) }));
      out(col, "topRaw", pct(f.raw.topWeight));
      out(col, "topScaled", pct(f.scaled.topWeight));
    }
    out(
      root,
      "summary",
      `Over 500 contests, two contestants’ totals differ by ${fmt(s4.meanGap, 1)} points on average with 4 judges and by ${fmt(s256.meanGap, 1)} with 256. ` +
        `Softmax of the totals gives the winner ${pct(s4.meanTopRaw)} of the prize on average with 4 judges but ${pct(s256.meanTopRaw)} with 256; ` +
        `divided by √(judges) first, ${pct(s4.meanTopScaled)} and ${pct(s256.meanTopScaled)}: the contests are comparable again.`,
    );
  };
  button.addEventListener("click", () => {
    contest += 1;
    render();
  });
  render();
}

// ---------------------------------------------------------------------------------------

const MOUNTS = {
  variance: mountVariance,
  saturation: mountSaturation,
  "sqrt-vs-d": mountSqrtVsD,
  judges: mountJudges,
  "worked-example": mountWorkedExample,
};

/** Mount every explorable under root that is not mounted yet. Safe to call repeatedly. */
export function mountAll(root = document) {
  for (const el of root.querySelectorAll("[data-xp]")) {
    if (el.dataset.mounted) continue;
    const mount = MOUNTS[el.dataset.xp];
    if (!mount) continue;
    el.dataset.mounted = "true";
    for (const n of el.querySelectorAll(".xp-nojs")) n.hidden = true;
    for (const n of el.querySelectorAll(".xp-body, .xp-js-only")) n.hidden = false;
    try {
      mount(el);
    } catch (err) {
      console.error(`explorable ${el.dataset.xp} failed`, err);
    }
  }
}

mountAll();
// htmx fires htmx:load on content it swaps in (outerHTML swaps included).
document.addEventListener("htmx:load", () => mountAll(document));
