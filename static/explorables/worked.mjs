// The worked example (3 tokens, d_k = 4): the page ships the default example rendered on
// the server; this recomputes every step when the candidate changes a number of Q.

import { WORKED_K, WORKED_Q, WORKED_V, workedExample } from "./compute.mjs";
import { sci } from "./svg.mjs";

// Beyond this a number is shown as 1.23×10⁹: toFixed would print up to 21 digits, or, past
// 1e21, JavaScript's own "1.9424263952412558e+130".
const LARGE = 1e6;

/** Up to 3 decimals, trailing zeros dropped: 2, 0.5, 1.333. minDecimals keeps "1.0". */
export function trim(x, minDecimals = 0) {
  if (!Number.isFinite(x) || Math.abs(x) >= LARGE) return sci(x);
  let t = (Math.round(x * 1000) / 1000).toFixed(3).replace(/0+$/, "").replace(/\.$/, "");
  if (t === "-0") t = "0";
  if (minDecimals > 0 && !t.includes(".")) t += `.${"0".repeat(minDecimals)}`;
  return t.replace("-", "−");
}

export const fixed3 = (x) => (!Number.isFinite(x) || Math.abs(x) >= LARGE ? sci(x) : x.toFixed(3).replace("-", "−"));

const FORMATS = {
  scores: (x) => trim(x),
  scaled: (x) => trim(x, 1),
  weights: fixed3,
  output: fixed3,
};

function fillMatrix(table, matrix, format) {
  const tbody = table.tBodies[0];
  const rows = matrix.map((row) => {
    const tr = document.createElement("tr");
    for (const v of row) {
      const td = document.createElement("td");
      td.textContent = Number.isFinite(v) ? format(v) : "–";
      tr.append(td);
    }
    return tr;
  });
  tbody.replaceChildren(...rows);
}

const vec = (xs, format) => `[${xs.map(format).join(", ")}]`;

/** The two paragraphs of the hand check, as DOM nodes (same wording as the template). */
function checkParagraphs(r) {
  const c = r.check;
  const p1 = c.stable ? stableParagraph(c) : document.createElement("p");
  const p2 = document.createElement("p");
  const terms = c.weights.map((w, j) => `${fixed3(w)}·${vec(WORKED_V[j], (x) => trim(x))}`);
  p2.textContent = `Output row ${c.row + 1} is ${terms.join(" + ")} = ${vec(c.output, fixed3)}.`;
  if (c.stable) return [p1, p2];
  p1.append(`Row ${c.row + 1} scores ${vec(c.scores, (x) => trim(x, 1))} give `);
  c.scores.forEach((x, j) => {
    const sup = document.createElement("sup");
    sup.textContent = trim(x, 1);
    p1.append("e", sup, ` = ${fixed3(c.exps[j])}${j < c.scores.length - 1 ? ", " : "; "}`);
  });
  const parts = c.exps.map((e, j) => `${fixed3(e)} / ${fixed3(c.sum)} = ${fixed3(c.weights[j])}`);
  p1.append(`the sum is ${fixed3(c.sum)}, so the weights are ${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}.`);
  return [p1, p2];
}

/** The hand check when e^score overflows (or every e^score is 0): ∞ / ∞ is no number, so the
 * weights come from the differences to the largest score, as the stable softmax computes them. */
function stableParagraph(c) {
  const p = document.createElement("p");
  const top = trim(c.shift, 1);
  const overflow = !Number.isFinite(c.sum);
  p.append(
    `Row ${c.row + 1} scores ${vec(c.scores, (x) => trim(x, 1))} are too ${overflow ? "large" : "small"} to exponentiate: ` +
      `e^x is ${overflow ? "∞" : "0"} in floating point, and ${overflow ? "∞ / ∞" : "0 / 0"} is not a number. ` +
      `Softmax does not change when every score moves by the same amount, so the weights come from the differences ` +
      `to the largest score, ${top}, as the stable softmax computes them: `,
  );
  c.scores.forEach((x, j) => {
    const sup = document.createElement("sup");
    sup.textContent = `${trim(x, 1)} − ${top}`;
    p.append("e", sup, ` = ${fixed3(c.stableExps[j])}${j < c.scores.length - 1 ? ", " : "; "}`);
  });
  const parts = c.stableExps.map((e, j) => `${fixed3(e)} / ${fixed3(c.stableSum)} = ${fixed3(c.weights[j])}`);
  p.append(`the sum is ${fixed3(c.stableSum)}, so the weights are ${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}.`);
  p.dataset.stable = "";
  return p;
}

export function mountWorkedExample(root) {
  const inputs = [...root.querySelectorAll("input[data-q]")];
  const check = root.querySelector('[data-out="check"]');
  const heading = check.querySelector("h3");
  const readQ = () => {
    const Q = WORKED_Q.map((row) => row.slice());
    for (const input of inputs) {
      const [i, j] = input.dataset.q.split(",").map(Number);
      const v = input.valueAsNumber;
      const ok = Number.isFinite(v);
      input.setAttribute("aria-invalid", ok ? "false" : "true");
      Q[i][j] = ok ? v : 0;
    }
    return Q;
  };
  const render = () => {
    const r = workedExample(readQ(), WORKED_K, WORKED_V);
    for (const [name, format] of Object.entries(FORMATS)) {
      fillMatrix(root.querySelector(`[data-out-matrix="${name}"]`), r[name], format);
    }
    check.replaceChildren(heading, ...checkParagraphs(r));
  };
  for (const input of inputs) input.addEventListener("input", render);
  root.querySelector('[data-role="reset"]')?.addEventListener("click", () => {
    for (const input of inputs) {
      const [i, j] = input.dataset.q.split(",").map(Number);
      input.value = String(WORKED_Q[i][j]);
    }
    render();
  });
  render();
}
