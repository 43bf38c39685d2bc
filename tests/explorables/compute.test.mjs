// Unit tests of the numbers behind the explorables (static/explorables/compute.mjs), with
// fixed seeds. Run: node --test tests/explorables/  (also run by test_compute_js.py).
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import * as C from "../../static/explorables/compute.mjs";

const close = (actual, expected, tol, what = "") =>
  assert.ok(Math.abs(actual - expected) <= tol, `${what} ${actual} is not within ${tol} of ${expected}`);

describe("seeded randomness", () => {
  test("mulberry32 is deterministic and uniform on [0, 1)", () => {
    const a = C.mulberry32(42);
    const b = C.mulberry32(42);
    const xs = Array.from({ length: 10000 }, () => a());
    assert.deepEqual(xs.slice(0, 5), Array.from({ length: 5 }, () => b()));
    assert.ok(xs.every((x) => x >= 0 && x < 1));
    close(C.mean(xs), 0.5, 0.01, "mean");
  });

  test("Box–Muller gives mean 0, variance 1", () => {
    const normal = C.normalSampler(C.mulberry32(7));
    const xs = Array.from({ length: 20000 }, () => normal());
    close(C.mean(xs), 0, 0.03, "mean");
    close(C.variance(xs), 1, 0.04, "variance");
  });

  test("the same d and seed give the same samples", () => {
    assert.deepEqual([...C.sampleDots(16, 50)], [...C.sampleDots(16, 50)]);
    assert.notDeepEqual([...C.sampleDots(16, 50, 1)], [...C.sampleDots(16, 50, 2)]);
  });
});

describe("1. dot products grow with length", () => {
  test("at d = 64: raw variance ≈ 64 (±15%), scaled ≈ 1, std ≈ 8", () => {
    const f = C.varianceFigure(64);
    close(f.varRaw, 64, 64 * 0.15, "raw variance");
    close(f.varScaled, 1, 0.15, "scaled variance");
    close(f.stdRaw, 8, 0.6, "std");
    assert.equal(f.theoryRaw, 64);
  });

  test("variance follows d from 1 to 512 while the scaled one stays at 1", () => {
    for (const d of [1, 4, 16, 128, 512]) {
      const f = C.varianceFigure(d);
      close(f.varRaw / d, 1, 0.15, `raw variance / d at d = ${d}`);
      close(f.varScaled, 1, 0.15, `scaled variance at d = ${d}`);
    }
  });

  test("the default figure at d = 64 shows the seed's 99% raw vs about 43% scaled", () => {
    const f = C.varianceFigure(64);
    assert.ok(f.softRaw.topWeight > 0.98, `raw top ${f.softRaw.topWeight}`);
    assert.ok(f.softScaled.topWeight > 0.38 && f.softScaled.topWeight < 0.48, `scaled top ${f.softScaled.topWeight}`);
    assert.equal(f.softRaw.weights.length, 8);
    close(f.softScaled.weights.reduce((a, b) => a + b), 1, 1e-12, "weights sum");
  });

  test("averaged over queries at d = 64: raw top weight is high, scaled 0.3–0.6", () => {
    // The exact expectation for 8 keys is 0.876 raw (median 0.965) and 0.361 scaled.
    const raw = C.meanTopWeight(64, "none", { trials: 400 });
    const scaled = C.meanTopWeight(64, "sqrt", { trials: 400 });
    assert.ok(raw > 0.84, `mean raw top ${raw}`);
    assert.ok(scaled > 0.3 && scaled < 0.6, `mean scaled top ${scaled}`);
    const tops = Array.from({ length: 400 }, (_, t) => C.scaledSoftmax(C.queryScores(64, 8, C.mixSeed(C.DEFAULT_SEED, 3, t)), 1).topWeight).sort((a, b) => a - b);
    assert.ok(tops[200] > 0.9, `median raw top ${tops[200]}`);
  });

  test("histogram counts every sample once", () => {
    const h = C.histogram([-5, -1, 0, 0.5, 1, 9], -2, 2, 4);
    assert.deepEqual(h.counts, [0, 1, 2, 1]);
    assert.equal(h.below, 1);
    assert.equal(h.above, 1);
  });
});

describe("2. big scores saturate softmax", () => {
  test("the toy scores round to the seed's 0.8, 1.7, 0.5, 0.1, 0.2", () => {
    assert.deepEqual(C.TOY_SCORES.map((s) => s.toFixed(1)), ["0.8", "1.7", "0.5", "0.1", "0.2"]);
  });

  test("×1: top weight 49% on 'cat', largest gradient 0.25", () => {
    const f = C.saturationFigure(1);
    assert.equal(C.TOKENS[f.top], "cat");
    assert.equal(Math.round(f.topWeight * 100), 49);
    close(f.maxGrad, 0.25, 0.001, "max gradient");
  });

  test("×1 Jacobian matches the seed's matrix entry for entry", () => {
    const seed = [
      [0.15, -0.09, -0.03, -0.02, -0.02],
      [-0.09, 0.25, -0.07, -0.04, -0.05],
      [-0.03, -0.07, 0.12, -0.01, -0.01],
      [-0.02, -0.04, -0.01, 0.08, -0.01],
      [-0.02, -0.05, -0.01, -0.01, 0.09],
    ];
    const J = C.saturationFigure(1).jacobian;
    J.forEach((row, i) => row.forEach((v, j) => close(v, seed[i][j], 0.005 + 1e-9, `J[${i}][${j}]`)));
  });

  test("×4: 'cat' takes 97%, largest gradient ≈ 0.027", () => {
    const f = C.saturationFigure(4);
    assert.equal(Math.round(f.topWeight * 100), 97);
    close(f.maxGrad, 0.027, 0.001, "max gradient");
  });

  test("×10: largest gradient ≈ 5e-5", () => {
    const f = C.saturationFigure(10);
    assert.ok(f.maxGrad > 4e-5 && f.maxGrad < 6e-5, `max gradient ${f.maxGrad}`);
  });

  test("the Jacobian's rows sum to 0 and its largest entry never exceeds 1/4", () => {
    for (const m of [1, 2.5, 7]) {
      const { jacobian } = C.saturationFigure(m);
      for (const row of jacobian) close(row.reduce((a, b) => a + b), 0, 1e-12, "row sum");
      assert.ok(C.maxAbs(jacobian) <= 0.25 + 1e-12);
    }
  });

  test("the curve falls from 0.25 as the multiplier grows", () => {
    const curve = C.saturationCurve();
    assert.equal(curve[0].mult, 1);
    assert.equal(curve.at(-1).mult, 10);
    for (let i = 1; i < curve.length; i++) assert.ok(curve[i].maxGrad <= curve[i - 1].maxGrad + 1e-12);
  });
});

describe("3. why √d and not d", () => {
  test("variances d, 1, 1/d at d = 64", () => {
    close(C.scalingFigure(64, "none").variance, 64, 64 * 0.15, "none");
    close(C.scalingFigure(64, "sqrt").variance, 1, 0.15, "sqrt");
    close(C.scalingFigure(64, "d").variance, 1 / 64, 0.15 / 64, "d");
    assert.equal(C.theoryVariance("d", 64), 1 / 64);
  });

  test("dividing by d makes the softmax nearly uniform", () => {
    const mean = C.meanTopWeight(64, "d", { trials: 200 });
    assert.ok(mean < 0.2, `mean top ${mean} (uniform is 0.125)`);
    const top = C.scalingFigure(256, "d").soft.topWeight;
    assert.ok(top < 0.16, `top ${top}`);
  });
});

describe("4. the judges", () => {
  test("totals of uniform [−1, 1] judges have variance judges/3", () => {
    const totals = [];
    for (let s = 0; s < 400; s++) totals.push(...C.judgeTotals(256, 5, s));
    close(C.variance(totals), 256 / 3, (256 / 3) * 0.15, "variance of totals");
  });

  test("4 judges differ by a point or two, 256 by about 10", () => {
    const s4 = C.judgesSummary(4);
    const s256 = C.judgesSummary(256);
    close(s4.meanGap, 1.3, 0.3, "gap with 4 judges"); // E|X − Y| = 2·sqrt(2n/3)/sqrt(2π)
    close(s256.meanGap, 10.4, 1.5, "gap with 256 judges");
  });

  test("softmax gives the winner nearly everything with 256 judges, unless divided by √n", () => {
    const s4 = C.judgesSummary(4);
    const s256 = C.judgesSummary(256);
    assert.ok(s256.meanTopRaw > 0.85, `raw 256: ${s256.meanTopRaw}`);
    assert.ok(s4.meanTopRaw < 0.6, `raw 4: ${s4.meanTopRaw}`);
    close(s4.meanTopScaled, s256.meanTopScaled, 0.05, "scaled contests comparable");
  });
});

describe("the worked example (3 tokens, d_k = 4)", () => {
  const r = C.workedExample();
  const matClose = (a, b, tol = 1e-3) => a.forEach((row, i) => row.forEach((v, j) => close(v, b[i][j], tol, `[${i}][${j}]`)));

  test("every step matches the seed to 1e-3", () => {
    assert.deepEqual(r.scores, [[2, 0, 1], [0, 2, 1], [2, 1, 2]]);
    assert.deepEqual(r.scaled, [[1, 0, 0.5], [0, 1, 0.5], [1, 0.5, 1]]);
    matClose(r.weights, [[0.506, 0.186, 0.307], [0.186, 0.506, 0.307], [0.384, 0.233, 0.384]]);
    matClose(r.output, [[0.814, 0.494], [0.494, 0.814], [0.767, 0.616]]);
  });

  test("the hand check of row 1: e^1 = 2.718, e^0 = 1, e^0.5 = 1.649, sum 5.367", () => {
    close(r.check.exps[0], 2.718, 1e-3);
    close(r.check.exps[1], 1, 1e-12);
    close(r.check.exps[2], 1.649, 1e-3);
    close(r.check.sum, 5.367, 1e-3);
  });

  test("changing one number of Q changes every step after it", () => {
    const Q = C.WORKED_Q.map((row) => row.slice());
    Q[0][0] = 3;
    const s = C.workedExample(Q);
    assert.deepEqual(s.scores[0], [4, 0, 3]);
    assert.deepEqual(s.scores.slice(1), r.scores.slice(1));
    assert.notDeepEqual(s.output[0], r.output[0]);
  });

  test("huge scores: e^x overflows, the check takes the differences as softmax does", () => {
    assert.equal(r.check.stable, false);
    const Q = C.WORKED_Q.map((row) => row.slice());
    Q[0][0] = 2000; // score 2000 against key 1, 1000 after ÷ √4
    const s = C.workedExample(Q);
    assert.equal(s.check.sum, Infinity);
    assert.equal(s.check.stable, true);
    assert.equal(s.check.shift, Math.max(...s.check.scores));
    assert.ok(s.check.stableExps.includes(1)); // e^0 for the largest
    close(s.check.stableSum, s.check.stableExps.reduce((a, b) => a + b, 0), 1e-12);
    s.check.stableExps.forEach((e, j) => close(e / s.check.stableSum, s.check.weights[j], 1e-12));
    Q[0] = [-2000, -2000, -2000, -2000]; // every e^x is 0 then: 0 / 0
    const t = C.workedExample(Q);
    assert.equal(t.check.stable, true);
    close(t.check.weights.reduce((a, b) => a + b, 0), 1, 1e-12);
  });
});
