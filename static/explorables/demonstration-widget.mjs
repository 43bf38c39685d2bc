// The live "ten-minute demonstration" figure (templates/explorables/demonstration.html):
// trains both models a few steps per animation frame so the reader watches the curves grow,
// with every plotted number also written out as text. The maths is in demonstration.mjs.
// It mounts its own figures, so it needs nothing from widgets.mjs (which skips
// data-xp="demonstration" because it has no mount for it).

import * as D from "./demonstration.mjs";
import { fmt, h, lineChart, pct, put } from "./svg.mjs";

const SCALED = "#0b5cad"; // blue, as the other figures' scaled scores
const RAW = "#c2410c"; // red-orange, as their raw scores
const STEPS_PER_FRAME = 3; // 300 steps in about 100 frames: under two seconds, watchable
const PLOT_EVERY = 3; // points drawn every few steps keep the SVG small
const GRAD_LOG_MIN = -6; // the gradient chart's floor, 10⁻⁶ (smaller values sit on it)
const GRAD_LOG_MAX = 2;
const UNIFORM_ENTROPY = Math.log(D.N_KEYS);

const SUPERSCRIPT = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" };

/** 0.00084 → "8.4 × 10⁻⁴"; numbers from 0.01 to 100 stay plain. */
export function sci(x) {
  if (x === 0) return "0";
  if (Math.abs(x) >= 0.01 && Math.abs(x) < 100) return fmt(x, Math.abs(x) >= 1 ? 2 : 3);
  const [m, e] = x.toExponential(1).split("e");
  const exp = String(Number(e)).replace(/[-0-9]/g, (c) => SUPERSCRIPT[c]);
  return `${m} × 10${exp}`;
}

/** A log10 tick (−4 → "10⁻⁴"); a point between ticks gets its value written out. */
function powerLabel(v) {
  if (!Number.isInteger(v)) return sci(10 ** v);
  return v === 0 ? "1" : `10${String(v).replace(/[-0-9]/g, (c) => SUPERSCRIPT[c])}`;
}

function out(root, name, text) {
  for (const el of root.querySelectorAll(`[data-out="${name}"]`)) el.textContent = text;
}

/** Every PLOT_EVERY-th step and the last one, as {x, y} points. */
function points(series, transform = (v) => v) {
  const pts = [];
  for (let t = 0; t < series.length; t++) {
    if (t % PLOT_EVERY === 0 || t === series.length - 1) pts.push({ x: t, y: transform(series[t]) });
  }
  return pts;
}

// An invisible series spanning every step, so the x axis stays put while the curves grow.
const AXIS = { name: "steps", color: "none", points: [{ x: 0, y: null }, { x: D.STEPS, y: null }] };
const X_TICKS = [0, 100, 200, 300];

function lossChart(hist, dk) {
  const yMax = Math.max(1, Math.ceil(Math.max(hist.scaled.loss[0], hist.unscaled.loss[0])));
  return lineChart(
    [AXIS, { name: "÷√dₖ", color: SCALED, points: points(hist.scaled.loss), dotRadius: 0 }, { name: "not divided", color: RAW, points: points(hist.unscaled.loss), dotRadius: 0 }],
    {
      title: `Training loss over steps at dₖ = ${dk}`,
      desc: `Loss at step ${hist.scaled.loss.length - 1}: ${fmt(hist.scaled.loss.at(-1), 3)} with the scale, ${fmt(hist.unscaled.loss.at(-1), 3)} without.`,
      xLabel: "step",
      yLabel: "loss (nats)",
      yMax,
      xTicks: X_TICKS,
      legend: false,
      width: 340,
    },
  );
}

function entropyChart(hist, dk) {
  return lineChart(
    [AXIS, { name: "÷√dₖ", color: SCALED, points: points(hist.scaled.entropy), dotRadius: 0 }, { name: "not divided", color: RAW, points: points(hist.unscaled.entropy), dotRadius: 0 }],
    {
      title: `Attention entropy over steps at dₖ = ${dk}`,
      desc: `Mean entropy of the attention weights at step ${hist.scaled.entropy.length - 1}: ${fmt(hist.scaled.entropy.at(-1), 3)} nats with the scale, ${fmt(hist.unscaled.entropy.at(-1), 3)} without (uniform over ${D.N_KEYS} keys: ${fmt(UNIFORM_ENTROPY, 2)}; one key takes all: 0).`,
      xLabel: "step",
      yLabel: "entropy (nats)",
      yMax: 2.1,
      xTicks: X_TICKS,
      legend: false,
      width: 340,
    },
  );
}

function gradChart(hist, dk) {
  const log = (v) => (v > 0 ? Math.log10(v) : GRAD_LOG_MIN);
  return lineChart(
    [
      AXIS,
      { name: "W_Q ÷√dₖ", color: SCALED, points: points(hist.scaled.gradQ, log), dotRadius: 0 },
      { name: "W_K ÷√dₖ", color: SCALED, dash: "5 4", points: points(hist.scaled.gradK, log), dotRadius: 0 },
      { name: "W_Q not divided", color: RAW, points: points(hist.unscaled.gradQ, log), dotRadius: 0 },
      { name: "W_K not divided", color: RAW, dash: "5 4", points: points(hist.unscaled.gradK, log), dotRadius: 0 },
    ],
    {
      title: `Gradient norm reaching W_Q and W_K at dₖ = ${dk} (log scale)`,
      desc: `At step ${hist.scaled.gradQ.length - 1}: W_Q ${sci(hist.scaled.gradQ.at(-1))} and W_K ${sci(hist.scaled.gradK.at(-1))} with the scale; W_Q ${sci(hist.unscaled.gradQ.at(-1))} and W_K ${sci(hist.unscaled.gradK.at(-1))} without.`,
      xLabel: "step",
      yLabel: "‖gradient‖",
      yMin: GRAD_LOG_MIN,
      yMax: GRAD_LOG_MAX,
      yFormat: powerLabel,
      xTicks: X_TICKS,
      legend: false,
      width: 340,
    },
  );
}

/** One step's numbers of both runs: {scaled, unscaled}, each metric a number. */
function atStep(hist, t) {
  const pick = (run) => Object.fromEntries(D.METRICS.map((m) => [m, run[m][t]]));
  return { scaled: pick(hist.scaled), unscaled: pick(hist.unscaled) };
}

function tableRow(label, numbers) {
  const s = numbers.scaled;
  const u = numbers.unscaled;
  const cells = [
    label,
    fmt(s.loss, 3),
    fmt(u.loss, 3),
    pct(s.accuracy),
    pct(u.accuracy),
    fmt(s.entropy, 3),
    fmt(u.entropy, 3),
    sci(s.gradQ),
    sci(u.gradQ),
    sci(s.gradK),
    sci(u.gradK),
  ];
  return h("tr", {}, cells.map((c, i) => h(i === 0 ? "th" : "td", i === 0 ? { scope: "row" } : {}, c)));
}

/** The sentence under the figure, from the run's own numbers; honest about small heads. */
export function summaryText(history, dk, seed) {
  const sum = D.summarise(history);
  const s = sum.scaled;
  const u = sum.unscaled;
  const u0 = history.unscaled.entropy[0];
  const end = `(means of the last ${D.LAST} of ${history.scaled.loss.length} steps, seed ${seed})`;
  if (D.verdict(sum) === "learns") {
    return (
      `At dₖ = ${dk} the model without the scale still learns: its loss ends at ${fmt(u.loss, 3)} against ${fmt(s.loss, 3)} with it, ` +
      `and it retrieves ${pct(u.accuracy)} of the values ${end}. Its raw scores spread only about ±√${dk} = ${fmt(Math.sqrt(dk), 1)}, ` +
      `so at the start its attention is sharp (entropy ${fmt(u0, 2)} nats, uniform is ${fmt(UNIFORM_ENTROPY, 2)}) but not saturated for every query, ` +
      `and enough gradient gets through. The larger dₖ, the sharper the start and the more queries get stuck: ${dk < 256 ? "try a larger head size" : "at this size most seeds are not so lucky"}.`
    );
  }
  return (
    `At dₖ = ${dk}, with the scale the loss falls to ${fmt(s.loss, 3)} and the model retrieves ${pct(s.accuracy)} of the values; ` +
    `without it the loss stays at ${fmt(u.loss, 3)} and it retrieves ${pct(u.accuracy)} ${end}. ` +
    `Its attention starts almost one-hot (entropy ${fmt(u0, 2)} nats at step 0, against ${fmt(history.scaled.entropy[0], 2)} with the scale) and ends at ${fmt(u.entropy, 3)}: ` +
    `each query puts nearly all its weight on one key, right or wrong, and the queries stuck on a wrong key send back almost no gradient ` +
    `(${sci(u.gradQ)} reaches W_Q, against ${sci(s.gradQ)} with the scale), so they stay wrong.`
  );
}

function mountDemonstration(root) {
  const slider = root.querySelector('[data-role="dk"]');
  const seedInput = root.querySelector('[data-role="seed"]');
  const button = root.querySelector('[data-role="train"]');
  const tbody = root.querySelector("[data-table] tbody");
  let run = 0; // a new run makes the frames of the previous one stop

  const start = () => {
    run += 1;
    const mine = run;
    const dk = D.HEAD_SIZES[Number(slider.value)];
    const seed = Math.max(0, Math.min(9999, Math.trunc(Number(seedInput.value) || 0)));
    slider.setAttribute("aria-valuetext", `dₖ = ${dk}`);
    out(root, "dk", String(dk));
    out(root, "sqrtDk", fmt(Math.sqrt(dk), 1));
    out(root, "seed", String(seed));
    out(root, "summary", "");
    root.dataset.state = "training";
    tbody.replaceChildren();
    const trainer = D.createTrainer({ dk, seed });
    const started = performance.now();
    const frame = () => {
      if (mine !== run) return;
      for (let i = 0; i < STEPS_PER_FRAME && !trainer.done; i++) {
        const t = trainer.stepsDone;
        trainer.step();
        if (D.REPORT_STEPS.includes(t)) tbody.append(tableRow(String(t), atStep(trainer.history, t)));
      }
      render(trainer.history, dk);
      if (trainer.done) {
        // The end of the run is one set of numbers everywhere (beside the plots, the table's
        // last row, the sentence): the means of the last LAST steps, less noisy than one batch.
        const end = D.summarise(trainer.history);
        tbody.append(tableRow(`last ${D.LAST}`, end));
        show(end, `means of the last ${D.LAST} steps`);
        const seconds = (performance.now() - started) / 1000;
        out(root, "status", `Done: ${D.STEPS} steps of both models in ${fmt(seconds, 1)} s.`);
        out(root, "summary", summaryText(trainer.history, dk, seed));
        root.dataset.state = "done";
        root.dataset.dk = String(dk);
        root.dataset.seed = String(seed);
      } else {
        out(root, "status", `Training… step ${trainer.stepsDone} of ${D.STEPS}.`);
        requestAnimationFrame(frame);
      }
    };
    requestAnimationFrame(frame);
  };

  const render = (hist, dk) => {
    const t = hist.scaled.loss.length - 1;
    put(root.querySelector('[data-chart="loss"]'), lossChart(hist, dk));
    put(root.querySelector('[data-chart="entropy"]'), entropyChart(hist, dk));
    put(root.querySelector('[data-chart="grad"]'), gradChart(hist, dk));
    show(atStep(hist, t), `at step ${t}`);
  };

  const show = (numbers, when) => {
    const s = numbers.scaled;
    const u = numbers.unscaled;
    out(root, "numbersAt", when);
    out(root, "lossScaled", fmt(s.loss, 3));
    out(root, "lossUnscaled", fmt(u.loss, 3));
    out(root, "accScaled", pct(s.accuracy));
    out(root, "accUnscaled", pct(u.accuracy));
    out(root, "entScaled", fmt(s.entropy, 3));
    out(root, "entUnscaled", fmt(u.entropy, 3));
    out(root, "topScaled", pct(s.topWeight, 1));
    out(root, "topUnscaled", pct(u.topWeight, 1));
    out(root, "gradQScaled", sci(s.gradQ));
    out(root, "gradQUnscaled", sci(u.gradQ));
    out(root, "gradKScaled", sci(s.gradK));
    out(root, "gradKUnscaled", sci(u.gradK));
  };

  slider.addEventListener("input", start);
  seedInput.addEventListener("change", start);
  button.addEventListener("click", start);
  start();
}

/** Mount every demonstration figure under root not mounted yet. Safe to call repeatedly. */
export function mountDemonstrations(root = document) {
  for (const el of root.querySelectorAll('[data-xp="demonstration"]')) {
    if (el.dataset.mounted) continue;
    el.dataset.mounted = "true";
    for (const n of el.querySelectorAll(".xp-nojs")) n.hidden = true;
    for (const n of el.querySelectorAll(".xp-body")) n.hidden = false;
    try {
      mountDemonstration(el);
    } catch (err) {
      console.error("explorable demonstration failed", err);
    }
  }
}

// Guarded so that node can import sci() and summaryText() for the tests.
if (typeof document !== "undefined") {
  mountDemonstrations();
  document.addEventListener("htmx:load", () => mountDemonstrations(document));
}
