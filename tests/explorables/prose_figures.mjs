// Prints, as JSON, every number of the explorables that prose quotes (the explainer page and the
// figures' no-JavaScript text), computed by the same code the page runs. Read by
// tests/explorables/test_prose_figures.py. Run: node tests/explorables/prose_figures.mjs
import * as C from "../../static/explorables/compute.mjs";
import { fmt, pct, small } from "../../static/explorables/svg.mjs";
import { readFileSync } from "node:fs";
import { fixed3, trim } from "../../static/explorables/worked.mjs";

// widgets.mjs mounts figures on import (it needs a DOM), so its slider steps are read as text.
const widgets = readFileSync(new URL("../../static/explorables/widgets.mjs", import.meta.url), "utf8");
const D_STEPS = JSON.parse(widgets.match(/export const D_STEPS = (\[[^\]]*\])/)[1]);
const v64 = C.varianceFigure(64);
const sat = (m) => C.saturationFigure(m);
const large = C.workedExample([[1000, 0, 1, 0], [0, 1, 0, 1], [300, 1, 1, 0]]);
const shown = [];
for (const name of ["scores", "scaled"]) for (const row of large[name]) shown.push(...row.map((x) => trim(x, 1)));
for (const name of ["weights", "output"]) for (const row of large[name]) shown.push(...row.map(fixed3));
shown.push(...large.check.exps.map(fixed3), fixed3(large.check.sum));

console.log(
  JSON.stringify({
    variance64: {
      varRaw: fmt(v64.varRaw, 1),
      stdRaw: fmt(v64.stdRaw, 1),
      varScaled: fmt(v64.varScaled, 2),
      oneDrawTopRaw: pct(v64.softRaw.topWeight),
      oneDrawTopScaled: pct(v64.softScaled.topWeight),
      meanTopRaw: pct(C.meanTopWeight(64, "none")),
      meanTopScaled: pct(C.meanTopWeight(64, "sqrt")),
    },
    meanTopRawByD: D_STEPS.map((d) => C.meanTopWeight(d, "none")),
    oneDrawTopRawByD: D_STEPS.map((d) => C.varianceFigure(d).softRaw.topWeight),
    dSteps: D_STEPS,
    toyScores: C.TOY_SCORES.map((x) => x.toFixed(2)),
    saturation: Object.fromEntries([1, 4, 10].map((m) => [m, { top: pct(sat(m).topWeight), maxGrad: sat(m).maxGrad, topToken: C.TOKENS[sat(m).top] }])),
    jacobian1: sat(1).jacobian.map((row) => row.map((x) => fmt(x, 2))),
    judges: { 4: C.judgesSummary(4), 256: C.judgesSummary(256) },
    small: [5.4475e-5, 1.3e-4, 0.00084, 0.5].map(small),
    workedLarge: shown,
  }),
);
