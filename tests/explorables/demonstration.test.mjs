// Unit tests of the training demonstration (static/explorables/demonstration.mjs). The
// comparison with numpy is in test_demonstration.py; these check the maths on its own.
// Run: node --test tests/explorables/  (also run by test_compute_js.py).
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import * as D from "../../static/explorables/demonstration.mjs";

const close = (actual, expected, tol, what = "") =>
  assert.ok(Math.abs(actual - expected) <= tol, `${what} ${actual} is not within ${tol} of ${expected}`);

describe("exact building blocks", () => {
  test("the hand-written exp agrees with Math.exp to the last bit or so", () => {
    for (let x = -700; x <= 10; x += 0.731) close(D.exp(x) / Math.exp(x), 1, 4.5e-16, `exp(${x})`);
    assert.equal(D.exp(0), 1);
    assert.equal(D.exp(-800), 0);
  });

  test("Irwin–Hall normals have mean 0 and variance 1", () => {
    let u = 0.123;
    const uniform = () => (u = (u * 9301 + 49297) % 233280) / 233280; // any uniform will do
    const normal = D.irwinHallSampler(uniform);
    const xs = Array.from({ length: 20000 }, normal);
    const mean = xs.reduce((a, b) => a + b) / xs.length;
    const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
    close(mean, 0, 0.03, "mean");
    close(variance, 1, 0.05, "variance");
  });
});

describe("the set-up", () => {
  test("unscaled scores have variance ≈ d_k at initialisation, scaled ones ≈ 1", () => {
    for (const dk of [16, 256]) {
      const { E, WQ, WK } = D.initialWeights(dk, 0);
      const scores = [];
      for (let a = 0; a < D.N_SYMBOLS; a++) {
        for (let b = 0; b < D.N_SYMBOLS; b++) {
          let s = 0;
          for (let j = 0; j < dk; j++) {
            let q = 0;
            let k = 0;
            for (let i = 0; i < D.D_MODEL; i++) {
              q += E[a * D.D_MODEL + i] * WQ[i * dk + j];
              k += E[b * D.D_MODEL + i] * WK[i * dk + j];
            }
            s += q * k;
          }
          scores.push(s);
        }
      }
      const mean = scores.reduce((x, y) => x + y) / scores.length;
      const variance = scores.reduce((x, y) => x + (y - mean) ** 2, 0) / scores.length;
      close(variance / dk, 1, 0.35, `variance / d_k at d_k = ${dk}`);
    }
  });

  test("batches: distinct keys, the query is one of them, the answer is its value", () => {
    const next = D.dataStream(3, 64);
    const batch = next();
    for (let b = 0; b < 64; b++) {
      const keys = [...batch.keys.slice(b * D.N_KEYS, (b + 1) * D.N_KEYS)];
      assert.equal(new Set(keys).size, D.N_KEYS);
      const j = keys.indexOf(batch.queries[b]);
      assert.ok(j >= 0);
      assert.equal(batch.answers[b], batch.values[b * D.N_KEYS + j]);
    }
  });

  test("the hand-written gradient matches finite differences", () => {
    const dk = 16;
    const { E, WQ, WK } = D.initialWeights(dk, 1);
    const data = D.dataStream(1, 16)();
    for (const tau of [Math.sqrt(dk), 1]) {
      const { gWQ, gWK } = D.trainStep(E, WQ, WK, dk, tau, data);
      for (const [W, g] of [[WQ, gWQ], [WK, gWK]]) {
        for (const i of [0, 37, 200, 511]) {
          const h = 1e-6;
          const saved = W[i];
          W[i] = saved + h;
          const up = D.trainStep(E, WQ, WK, dk, tau, data).metrics.loss;
          W[i] = saved - h;
          const down = D.trainStep(E, WQ, WK, dk, tau, data).metrics.loss;
          W[i] = saved;
          close((up - down) / (2 * h), g[i], 1e-6 + 1e-4 * Math.abs(g[i]), `τ = ${tau}, entry ${i}`);
        }
      }
    }
  });
});

describe("the demonstration itself", () => {
  test("the same seed gives the same run; another seed another", () => {
    const a = D.trainDemo({ dk: 32, seed: 5, steps: 20 });
    const b = D.trainDemo({ dk: 32, seed: 5, steps: 20 });
    const c = D.trainDemo({ dk: 32, seed: 6, steps: 20 });
    assert.deepEqual(a, b);
    assert.notDeepEqual(a.unscaled.loss, c.unscaled.loss);
  });

  test("at d_k = 256 the scaled head learns and the unscaled one stalls", () => {
    const sum = D.summarise(D.trainDemo({ dk: 256, seed: 0 }));
    assert.ok(sum.scaled.loss < 0.02, `scaled loss ${sum.scaled.loss}`);
    assert.equal(sum.scaled.accuracy, 1);
    assert.ok(sum.unscaled.loss > 0.3, `unscaled loss ${sum.unscaled.loss}`);
    assert.ok(sum.unscaled.entropy < 0.05, `unscaled entropy ${sum.unscaled.entropy}`);
    assert.ok(sum.unscaled.gradQ < sum.scaled.gradQ / 3, "the stalled head gets less gradient");
    assert.equal(D.verdict(sum), "stalls");
  });

  test("at d_k = 16 (seed 0) the unscaled head still learns", () => {
    assert.equal(D.verdict(D.summarise(D.trainDemo({ dk: 16, seed: 0 }))), "learns");
  });
});

describe("the figure's words", async () => {
  const W = await import("../../static/explorables/demonstration-widget.mjs");

  test("sci writes small numbers with a superscript power, never a caret", () => {
    assert.equal(W.sci(0.00084), "8.4 × 10⁻⁴");
    assert.equal(W.sci(0.0075), "7.5 × 10⁻³");
    assert.equal(W.sci(0.024), "0.024");
    assert.equal(W.sci(4.83), "4.83");
    assert.equal(W.sci(1.2e-7), "1.2 × 10⁻⁷");
  });

  test("the summary says stalls at 256 and still learns at 16, with the run's numbers", () => {
    const stalls = W.summaryText(D.trainDemo({ dk: 256, seed: 0 }), 256, 0);
    assert.match(stalls, /^At dₖ = 256, with the scale the loss falls to 0\.006/);
    assert.match(stalls, /without it the loss stays at 0\.505/);
    const learns = W.summaryText(D.trainDemo({ dk: 16, seed: 0 }), 16, 0);
    assert.match(learns, /^At dₖ = 16 the model without the scale still learns/);
    assert.match(learns, /try a larger head size/);
  });
});
