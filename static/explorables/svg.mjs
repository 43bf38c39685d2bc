// Small plain-SVG chart helpers shared by the explorables and the submission plots.
// Every chart is an <svg role="img"> with a <title> and a <desc> holding its numbers.

const SVG_NS = "http://www.w3.org/2000/svg";
let uid = 0;

/** Create an SVG element with attributes and children (strings become text nodes). */
export function s(tag, attrs = {}, children = []) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  for (const c of [].concat(children)) node.append(typeof c === "string" ? document.createTextNode(c) : c);
  return node;
}

/** Create an HTML element the same way. */
export function h(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of [].concat(children)) if (c !== null && c !== undefined) node.append(c);
  return node;
}

/** An accessible SVG root: role="img", labelled by its own <title> and <desc>. */
export function chart(width, height, title, desc, className = "xp-chart") {
  const id = `xp-svg-${++uid}`;
  const svg = s("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: "img",
    "aria-labelledby": `${id}-t ${id}-d`,
    class: className,
    preserveAspectRatio: "xMidYMid meet",
  });
  svg.append(s("title", { id: `${id}-t` }, title), s("desc", { id: `${id}-d` }, desc));
  return svg;
}

export function fmt(x, digits = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  return x.toFixed(digits).replace("-", "−");
}

export function pct(x, digits = 0) {
  return `${(x * 100).toFixed(digits)}%`;
}

/** Format a small positive number readably: 0.25, 0.027, 5.4e-5. */
export function small(x) {
  if (x === 0) return "0";
  if (Math.abs(x) >= 0.01) return x.toFixed(3);
  if (Math.abs(x) >= 0.001) return x.toFixed(4);
  return sci(x, 1);
}

const SUPERSCRIPT = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" };

/** x as "5.4×10⁻⁵": a superscript exponent, never a caret; non-finite values as "∞". */
export function sci(x, digits = 2) {
  if (Number.isNaN(x)) return "–";
  if (!Number.isFinite(x)) return x > 0 ? "∞" : "−∞";
  const [m, e] = x.toExponential(digits).split("e");
  const exponent = String(Number(e)).replace(/[-0-9]/g, (c) => SUPERSCRIPT[c]);
  return `${m.replace("-", "−")}×10${exponent}`;
}

/** "nice" tick values between lo and hi. */
export function ticks(lo, hi, count = 5) {
  const span = hi - lo;
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((st) => span / st <= count) ?? 10 * mag;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Math.abs(v) < 1e-12 ? 0 : v);
  return out;
}

/**
 * A histogram (from compute.histogram) with an x axis. opts: color, xLabel, title, desc,
 * overlay (optional {text}).
 */
export function histogramChart(hist, { color, xLabel, title, desc, width = 580, height = 160 }) {
  const m = { l: 12, r: 12, t: 10, b: 34 };
  const w = width - m.l - m.r;
  const hgt = height - m.t - m.b;
  const svg = chart(width, height, title, desc);
  const maxCount = Math.max(1, ...hist.counts);
  const bw = w / hist.bins;
  const g = s("g", { transform: `translate(${m.l},${m.t})` });
  hist.counts.forEach((c, i) => {
    const bh = (c / maxCount) * hgt;
    if (c > 0) g.append(s("rect", { x: i * bw + 0.5, y: hgt - bh, width: Math.max(0.5, bw - 1), height: bh, fill: color }));
  });
  g.append(s("line", { x1: 0, x2: w, y1: hgt, y2: hgt, class: "xp-axis" }));
  const x = (v) => ((v - hist.lo) / (hist.hi - hist.lo)) * w;
  for (const t of ticks(hist.lo, hist.hi, 8)) {
    g.append(s("line", { x1: x(t), x2: x(t), y1: hgt, y2: hgt + 4, class: "xp-axis" }));
    g.append(s("text", { x: x(t), y: hgt + 16, class: "xp-tick", "text-anchor": "middle" }, fmt(t, Number.isInteger(t) ? 0 : 1)));
  }
  g.append(s("text", { x: w, y: hgt + 30, class: "xp-axis-label", "text-anchor": "end" }, xLabel));
  svg.append(g);
  return svg;
}

/**
 * Vertical bars with a label under each and its value above. values in [0, max].
 * highlight: index drawn darker.
 */
export function barChart(values, labels, { color, max = 1, title, desc, format = pct, highlight = -1, width = 300, height = 160, guide = null }) {
  const m = { l: 6, r: 6, t: 18, b: 22 };
  const w = width - m.l - m.r;
  const hgt = height - m.t - m.b;
  const svg = chart(width, height, title, desc);
  const g = s("g", { transform: `translate(${m.l},${m.t})` });
  const bw = w / values.length;
  values.forEach((v, i) => {
    const bh = Math.max(0, Math.min(1, v / max)) * hgt;
    g.append(
      s("rect", {
        x: i * bw + bw * 0.15,
        y: hgt - bh,
        width: bw * 0.7,
        height: Math.max(bh, 0.5),
        fill: color,
        "fill-opacity": i === highlight ? 1 : 0.55,
      }),
    );
    g.append(s("text", { x: i * bw + bw / 2, y: hgt - bh - 4, class: "xp-value", "text-anchor": "middle" }, format(v)));
    g.append(s("text", { x: i * bw + bw / 2, y: hgt + 15, class: "xp-tick", "text-anchor": "middle" }, labels[i]));
  });
  if (guide !== null) {
    const gy = hgt - (guide.value / max) * hgt;
    g.append(s("line", { x1: 0, x2: w, y1: gy, y2: gy, class: "xp-guide" }, [s("title", {}, guide.label)]));
  }
  g.append(s("line", { x1: 0, x2: w, y1: hgt, y2: hgt, class: "xp-axis" }));
  svg.append(g);
  return svg;
}

/** Diverging colour for v in [−range, range]: blue (negative), white, orange-red (positive). */
export function divergingColor(v, range) {
  const t = Math.max(-1, Math.min(1, v / range));
  const neg = [33, 102, 172];
  const pos = [178, 24, 43];
  const c = t < 0 ? neg : pos;
  const a = Math.abs(t);
  const mix = (i) => Math.round(255 + (c[i] - 255) * a);
  return `rgb(${mix(0)},${mix(1)},${mix(2)})`;
}

/** Sequential colour for v in [0, max]: white to deep blue. */
export function sequentialColor(v, max = 1) {
  const t = Math.max(0, Math.min(1, v / max));
  const c = [8, 48, 107];
  const mix = (i) => Math.round(255 + (c[i] - 255) * t);
  return `rgb(${mix(0)},${mix(1)},${mix(2)})`;
}

/**
 * A labelled matrix of coloured cells with each value written in it and in a <title>.
 * colorFor(v) gives the fill; darkAt(v) says when the text should be white.
 */
export function heatmap(matrix, rowLabels, colLabels, { colorFor, darkAt, format = (v) => fmt(v, 2), title, desc, cell = 46, labelWidth = 44, cellTitle }) {
  const rows = matrix.length;
  const cols = matrix[0].length;
  const top = 22;
  const width = labelWidth + cols * cell + 4;
  const height = top + rows * cell + 4;
  const svg = chart(width, height, title, desc, "xp-chart xp-heatmap");
  colLabels.forEach((lab, j) => svg.append(s("text", { x: labelWidth + j * cell + cell / 2, y: 15, class: "xp-tick", "text-anchor": "middle" }, lab)));
  matrix.forEach((row, i) => {
    svg.append(s("text", { x: labelWidth - 6, y: top + i * cell + cell / 2 + 4, class: "xp-tick", "text-anchor": "end" }, rowLabels[i]));
    row.forEach((v, j) => {
      const x = labelWidth + j * cell;
      const y = top + i * cell;
      const ok = v !== null && v !== undefined && Number.isFinite(v);
      const g = s("g", { class: "xp-cell" });
      g.append(s("title", {}, cellTitle ? cellTitle(i, j, v) : `${rowLabels[i]}, ${colLabels[j]}: ${ok ? format(v) : "not a number"}`));
      g.append(s("rect", { x, y, width: cell - 2, height: cell - 2, rx: 3, fill: ok ? colorFor(v) : "#eee", stroke: "#d0d7de" }));
      g.append(
        s(
          "text",
          { x: x + (cell - 2) / 2, y: y + (cell - 2) / 2 + 4, "text-anchor": "middle", class: ok && darkAt(v) ? "xp-cell-text xp-on-dark" : "xp-cell-text" },
          ok ? format(v) : "–",
        ),
      );
      svg.append(g);
    });
  });
  return svg;
}

/**
 * A line chart of one or more series [{name, points: [{x, y}], color, dash}], with an
 * optional marker {x, y}. logX draws x on a log2 axis.
 */
export function lineChart(series, { title, desc, xLabel, yLabel, yMax, yMin = 0, logX = false, marker = null, xTicks = null, yFormat = (v) => fmt(v, 2), width = 300, height = 170, legend = true }) {
  const m = { l: 44, r: 12, t: legend || yLabel ? 24 : 10, b: 36 };
  const w = width - m.l - m.r;
  const hgt = height - m.t - m.b;
  const svg = chart(width, height, title, desc);
  const xs = series.flatMap((se) => se.points.map((p) => p.x));
  const tx = (v) => (logX ? Math.log2(v) : v);
  const x0 = tx(Math.min(...xs));
  const x1 = tx(Math.max(...xs));
  const X = (v) => ((tx(v) - x0) / (x1 - x0 || 1)) * w;
  const Y = (v) => hgt - ((Math.max(yMin, Math.min(yMax, v)) - yMin) / (yMax - yMin)) * hgt;
  const g = s("g", { transform: `translate(${m.l},${m.t})` });
  for (const t of ticks(yMin, yMax, 4)) {
    g.append(s("line", { x1: 0, x2: w, y1: Y(t), y2: Y(t), class: "xp-grid" }));
    g.append(s("text", { x: -6, y: Y(t) + 4, class: "xp-tick", "text-anchor": "end" }, yFormat(t)));
  }
  for (const t of xTicks ?? ticks(Math.min(...xs), Math.max(...xs), 6)) {
    g.append(s("line", { x1: X(t), x2: X(t), y1: hgt, y2: hgt + 4, class: "xp-axis" }));
    g.append(s("text", { x: X(t), y: hgt + 16, class: "xp-tick", "text-anchor": "middle" }, String(t)));
  }
  g.append(s("line", { x1: 0, x2: w, y1: hgt, y2: hgt, class: "xp-axis" }));
  g.append(s("line", { x1: 0, x2: 0, y1: 0, y2: hgt, class: "xp-axis" }));
  g.append(s("text", { x: w, y: hgt + 32, class: "xp-axis-label", "text-anchor": "end" }, xLabel));
  g.append(s("text", { x: -m.l + 2, y: -8, class: "xp-axis-label" }, yLabel));
  let lx = legend ? w : 0;
  for (const se of [...series].reverse()) {
    const pts = se.points.filter((p) => p.y !== null && Number.isFinite(p.y));
    if (pts.length) {
      g.append(
        s("polyline", {
          points: pts.map((p) => `${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join(" "),
          fill: "none",
          stroke: se.color,
          "stroke-width": 2.5,
          "stroke-dasharray": se.dash ?? null,
        }),
      );
      for (const p of pts) g.append(s("circle", { cx: X(p.x), cy: Y(p.y), r: se.dotRadius ?? 3, fill: se.color }, [s("title", {}, `${se.name}: ${xLabel} ${p.x}, ${yFormat(p.y)}`)]));
    }
    if (legend) {
      const text = s("text", { x: lx, y: -10, class: "xp-tick", "text-anchor": "end" }, se.name);
      g.append(text);
      const approx = se.name.length * 6.9;
      g.append(s("line", { x1: lx - approx - 22, x2: lx - approx - 6, y1: -14, y2: -14, stroke: se.color, "stroke-width": 3, "stroke-dasharray": se.dash ?? null }));
      lx -= approx + 34;
    }
  }
  if (marker) {
    g.append(s("circle", { cx: X(marker.x), cy: Y(marker.y), r: 6, class: "xp-marker" }));
  }
  svg.append(g);
  return svg;
}

/** Replace the children of a container with one node. */
export function put(container, node) {
  container.replaceChildren(node);
  return node;
}
