// Pictures of a student's own function (templates/explorables/submission_plots.html).
// Reads the plots dict of grader.engine.plots from the section's json_script and draws the heatmaps
// (student vs reference), the saturation curve and the misconception's picture.
// A module: it runs once per page; mountAll() skips sections already drawn and runs again
// after htmx swaps in a new result.

import { chart, divergingColor, fmt, heatmap, lineChart, pct, put, s, sci, sequentialColor, ticks } from "./svg.mjs";

const STUDENT = "#c2410c";
const REFERENCE = "#0b5cad";

function weightsHeatmap(matrix, ex, who) {
  const finite = matrix.flat().filter((v) => v !== null && Number.isFinite(v));
  const max = Math.max(1, ...finite);
  const n = ex.cols.length;
  // A gradient has signs (each of its rows sums to 0): blue below zero, red above.
  const signed = [...finite, ...ex.reference.flat()].some((v) => v < 0);
  const range = Math.max(1e-12, ...[...finite, ...ex.reference.flat()].map(Math.abs));
  return heatmap(matrix, ex.rows, ex.cols, {
    colorFor: (v) => (signed ? divergingColor(v, range) : sequentialColor(Math.max(0, v), max)),
    darkAt: (v) => (signed ? Math.abs(v) / range > 0.6 : v / max > 0.55),
    format: (v) => fmt(v, 2),
    cell: n > 8 ? 34 : 46,
    labelWidth: Math.max(34, 8 * Math.max(...ex.rows.map((r) => r.length))),
    title: `${signed ? "Gradient" : "Attention weights"} of ${who}`,
    desc: matrix.map((row, i) => `${ex.rows[i]}: ${row.map((v) => (v === null ? "not a number" : fmt(v, 3))).join(", ")}`).join("; "),
    cellTitle: (i, j, v) => `${who}, ${ex.rows[i]} → ${ex.cols[j]}: ${v === null ? "not a number" : fmt(v, 4)}`,
  });
}

function drawPair(root, ex, studentSlot, referenceSlot) {
  const slotS = root.querySelector(`[data-chart="${studentSlot}"]`);
  const slotR = root.querySelector(`[data-chart="${referenceSlot}"]`);
  if (ex.student) put(slotS, weightsHeatmap(ex.student, ex, "your function"));
  else slotS.replaceChildren(Object.assign(document.createElement("p"), { className: "muted", textContent: "No picture: see the message below." }));
  put(slotR, weightsHeatmap(ex.reference, ex, "the reference"));
}

function saturationChart(sat) {
  const series = [
    { name: `uniform (${fmt(sat.uniform, 3)})`, color: "#8c959f", dash: "4 3", dotRadius: 0, points: sat.d_k.map((x) => ({ x, y: sat.uniform })) },
    { name: "reference", color: REFERENCE, points: sat.d_k.map((x, i) => ({ x, y: sat.reference[i] })) },
    { name: "your function", color: STUDENT, dash: "6 3", points: sat.d_k.map((x, i) => ({ x, y: sat.student[i] })) },
  ];
  const list = (ys) => sat.d_k.map((d, i) => `${d}: ${ys[i] === null ? "none" : pct(ys[i])}`).join(", ");
  return lineChart(series, {
    title: `Mean top weight as ${sat.label} grows, your function and the reference`,
    desc: `Your function: ${list(sat.student)}. Reference: ${list(sat.reference)}.`,
    xLabel: `${sat.label} (log scale)`,
    yLabel: "mean top weight",
    yMax: 1,
    logX: true,
    xTicks: sat.d_k,
    yFormat: (v) => fmt(v, 2),
    width: 560,
    height: 250,
  });
}

/** The largest gradient entry against the score scale, on log axes (y as a power of ten). */
function vanishingChart(van) {
  const log = (v) => (v === null || !(v > 0) ? null : Math.log10(v));
  const logs = [...van.reference, ...van.student].map(log).filter((v) => v !== null);
  const yMin = Math.floor(Math.min(-1, ...logs));
  const series = [
    { name: "reference", color: REFERENCE, points: van.scales.map((x, i) => ({ x, y: log(van.reference[i]) })) },
    { name: "your function", color: STUDENT, dash: "6 3", points: van.scales.map((x, i) => ({ x, y: log(van.student[i]) })) },
  ];
  const list = (ys) => van.scales.map((x, i) => `×${x}: ${ys[i] === null ? "none" : sci(ys[i])}`).join(", ");
  return lineChart(series, {
    title: "The largest gradient entry as the scores grow, your function and the reference",
    desc: `Your function: ${list(van.student)}. Reference: ${list(van.reference)}.`,
    xLabel: "scores × (log scale)",
    yLabel: "largest |gradient| (power of ten)",
    yMin,
    yMax: 0,
    logX: true,
    xTicks: van.scales,
    yFormat: (v) => `1e${Math.round(v)}`,
    width: 560,
    height: 250,
  });
}

/** Grouped bars: one query's weights, student vs reference, at the largest d_k. */
function rowChart(row, label) {
  const n = row.cols.length;
  const width = 560;
  const height = 200;
  const m = { l: 36, r: 8, t: 26, b: 24 };
  const w = width - m.l - m.r;
  const hgt = height - m.t - m.b;
  const stu = row.student ?? [];
  const max = Math.ceil(Math.max(0.2, ...row.reference, ...stu.filter((v) => v !== null)) * 10) / 10;
  const svg = chart(
    width,
    height,
    `One query's weights at ${label} = ${row.d_k}: your function and the reference`,
    `Your function: ${stu.map((v) => (v === null ? "–" : pct(v, 1))).join(", ") || "none"}. Reference: ${row.reference.map((v) => pct(v, 1)).join(", ")}.`,
  );
  const g = s("g", { transform: `translate(${m.l},${m.t})` });
  const bw = w / n;
  for (const t of ticks(0, max, 4)) {
    const y = hgt - (t / max) * hgt;
    g.append(s("line", { x1: 0, x2: w, y1: y, y2: y, class: "xp-grid" }), s("text", { x: -4, y: y + 4, class: "xp-tick", "text-anchor": "end" }, pct(t)));
  }
  row.reference.forEach((r, i) => {
    const v = stu[i];
    const hr = (r / max) * hgt;
    g.append(s("rect", { x: i * bw + bw * 0.1, y: hgt - hr, width: bw * 0.38, height: Math.max(hr, 0.5), fill: REFERENCE }, [s("title", {}, `reference, ${row.cols[i]}: ${pct(r, 1)}`)]));
    if (v !== undefined && v !== null) {
      const hs = (Math.max(0, v) / max) * hgt;
      g.append(s("rect", { x: i * bw + bw * 0.52, y: hgt - hs, width: bw * 0.38, height: Math.max(hs, 0.5), fill: STUDENT }, [s("title", {}, `your function, ${row.cols[i]}: ${pct(v, 1)}`)]));
    }
    g.append(s("text", { x: i * bw + bw / 2, y: hgt + 15, class: "xp-tick", "text-anchor": "middle" }, row.cols[i]));
  });
  g.append(s("line", { x1: 0, x2: w, y1: hgt, y2: hgt, class: "xp-axis" }));
  g.append(s("rect", { x: w - 190, y: -22, width: 10, height: 10, fill: STUDENT }), s("text", { x: w - 176, y: -13, class: "xp-tick" }, "your function"));
  g.append(s("rect", { x: w - 90, y: -22, width: 10, height: 10, fill: REFERENCE }), s("text", { x: w - 76, y: -13, class: "xp-tick" }, "reference"));
  svg.append(g);
  return svg;
}

function drawMisconception(root, plots) {
  const code = plots.misconception || (plots.diagnosis && plots.diagnosis[0]);
  const picture = code && plots.pictures ? plots.pictures[code] : null;
  const box = root.querySelector("[data-misconception]");
  if (!picture || !box) return;
  const heading = Object.assign(document.createElement("h4"), { className: "xp-subtitle" });
  // The page lists the diagnosis' names and explanation links: show the name, not the slug.
  const named = [...box.querySelectorAll("[data-misconception-title]")].find((el) => el.dataset.misconceptionTitle === code);
  const name = named && named.getAttribute("href")
    ? Object.assign(document.createElement("a"), { href: named.getAttribute("href"), textContent: named.textContent })
    : Object.assign(document.createElement("code"), { textContent: named ? named.textContent : code });
  heading.append("The picture of your misconception: ", name);
  const caption = Object.assign(document.createElement("p"), { textContent: picture.caption });
  box.replaceChildren(heading, caption);
  if (picture.picture === "row" && plots.saturation?.row) {
    const wrap = Object.assign(document.createElement("div"), { className: "sp-curve" });
    wrap.append(rowChart(plots.saturation.row, plots.saturation.label));
    box.append(wrap);
  } else {
    const section = root.querySelector(`[data-section="${picture.picture}"]`);
    if (section) {
      section.classList.add("sp-highlight");
      const cap = section.querySelector("[data-caption]");
      if (cap) {
        cap.textContent = `This picture shows your misconception (${code}).`;
        cap.hidden = false;
      }
      const title = section.querySelector("h4")?.textContent ?? "";
      box.append(Object.assign(document.createElement("p"), { className: "muted sp-note", textContent: `Shown in “${title}” below.` }));
    }
  }
  box.hidden = false;
}

function mount(root) {
  const data = root.querySelector('script[type="application/json"]');
  if (!data) return;
  const plots = JSON.parse(data.textContent);
  if (!plots || !(plots.example || plots.saturation)) return;
  if (plots.example) drawPair(root, plots.example, "student", "reference");
  if (plots.stability) drawPair(root, plots.stability, "stability-student", "stability-reference");
  if (plots.saturation) put(root.querySelector('[data-chart="saturation"]'), saturationChart(plots.saturation));
  if (plots.vanishing) put(root.querySelector('[data-chart="vanishing"]'), vanishingChart(plots.vanishing));
  drawMisconception(root, plots);
  // The pictures carry their numbers (titles, descriptions); the tables stay one click away.
  for (const d of root.querySelectorAll("details[data-fallback]")) d.open = false;
}

export function mountAll(root = document) {
  for (const el of root.querySelectorAll("[data-submission-plots]")) {
    if (el.dataset.mounted) continue;
    el.dataset.mounted = "true";
    try {
      mount(el);
    } catch (err) {
      console.error("submission plots failed", err);
    }
  }
}

mountAll();
// htmx fires htmx:load on content it swaps in (outerHTML swaps included).
document.addEventListener("htmx:load", () => mountAll(document));
