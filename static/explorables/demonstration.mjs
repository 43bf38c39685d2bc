// The ten-minute demonstration: a tiny attention model trained with and without the 1/√d_k.
// Pure functions, no DOM: imported by demonstration-widget.mjs in the browser, by the node
// tests, and run by tests/explorables/test_demonstration.py against its numpy twin
// (explorables/train_demo.py), which must give the same numbers for the same seed.
//
// The task is key-value retrieval: each example shows N_KEYS keys, each carrying a value (one
// of N_CLASSES), and a query equal to one of the keys; the answer is that key's value. Only
// attention can find it, so the model is one head and nothing else learns:
//
//   q = e(query) W_Q,  k_j = e(key_j) W_K,  s_j = q·k_j / τ,  p = softmax(s)
//   o = Σ_j p_j onehot(value_j),  loss = cross-entropy(softmax(γ·o), answer)
//
// with τ = √d_k (scaled) or 1 (unscaled). The embeddings e are fixed with unit-variance
// entries and W_Q, W_K start with variance 1/D_MODEL, so q and k have unit-variance entries
// and the unscaled scores have variance ≈ d_k at initialisation. Plain SGD, same learning
// rate, same initial weights and same batches for both runs: only τ differs.
//
// Bit for bit, not just close: the unscaled run is chaotic (a difference in the last bit of
// one weight grows about thirtyfold per step, and after 300 steps the two copies end at
// different losses), so "the same numbers to a tolerance" needs the same arithmetic. Every
// number on the training path therefore comes from +, −, ×, ÷, √ and floor, which IEEE 754
// rounds identically in JavaScript and numpy, summed in the same order: the normals are
// Irwin–Hall (12 uniforms, an exact sum) instead of Box–Muller's log/cos/sin, exp is
// written out below, and explorables/train_demo.py loops in the same order as these loops.
// Math.log is only used for the reported loss and entropy, never fed back into training.

import { mixSeed, mulberry32 } from "./compute.mjs";

export const N_SYMBOLS = 16;
export const D_MODEL = 32;
export const N_KEYS = 8;
export const N_CLASSES = 8;
export const READOUT = 8.0;
export const BATCH = 128;
export const STEPS = 300;
export const LEARNING_RATE = 0.1;
export const HEAD_SIZES = [16, 32, 64, 128, 256];
// The table's rows; its last row is the run's end, as summarise() gives it.
export const REPORT_STEPS = [0, 25, 50, 100, 200];
// The summary figures average the last LAST steps: one batch's loss is noisy (a query stuck
// on a wrong key costs about READOUT nats, 1/BATCH of which lands in the batch's mean).
export const LAST = 20;
export const METRICS = ["loss", "accuracy", "entropy", "topWeight", "gradQ", "gradK"];

/**
 * A standard normal sampler by Irwin–Hall: the sum of 12 uniforms minus 6 has mean 0 and
 * variance exactly 1, and the sum of 12 multiples of 2^−32 below 12 is exact in a double.
 */
export function irwinHallSampler(uniform) {
  return function normal() {
    let acc = 0;
    for (let i = 0; i < 12; i++) acc += uniform();
    return acc - 6;
  };
}

// exp(x) as 2^k · e^r with r = x − k·ln 2 (Cody–Waite, the two halves of ln 2 from fdlibm)
// and a degree-13 Taylor polynomial for e^r (|r| ≤ 0.35, truncation below 1e−17).
const LOG2E = 1.4426950408889634;
const LN2_HI = 6.93147180369123816490e-1;
const LN2_LO = 1.90821492927058770002e-10;
const EXP_MIN = -700; // below this exp is under 1e−304: treated as 0
const EXP_MAX = 700;
const INV_FACT = [];
for (let n = 0, f = 1; n <= 13; n++, f *= n) INV_FACT.push(1 / f);
const POW2 = new Map();

function pow2(k) {
  // 2^k built by exact doublings or halvings, cached: no reliance on Math.pow's rounding.
  let v = POW2.get(k);
  if (v === undefined) {
    v = 1;
    for (let i = 0; i < Math.abs(k); i++) v = k > 0 ? v * 2 : v * 0.5;
    POW2.set(k, v);
  }
  return v;
}

/** exp with only IEEE-exact operations, the twin of train_demo._exp. */
export function exp(x) {
  if (x < EXP_MIN) return 0;
  if (x > EXP_MAX) x = EXP_MAX;
  const k = Math.floor(x * LOG2E + 0.5);
  const r = x - k * LN2_HI - k * LN2_LO;
  let p = INV_FACT[13];
  for (let n = 12; n >= 0; n--) p = p * r + INV_FACT[n];
  return p * pow2(k);
}

/** E (N_SYMBOLS × D_MODEL), W_Q and W_K (D_MODEL × d_k), row-major, drawn like the numpy. */
export function initialWeights(dk, seed) {
  // The embeddings depend on the seed only, so every head size sees the same symbols.
  const embed = irwinHallSampler(mulberry32(mixSeed(seed, 1)));
  const E = new Float64Array(N_SYMBOLS * D_MODEL);
  for (let i = 0; i < E.length; i++) E[i] = embed();
  const normal = irwinHallSampler(mulberry32(mixSeed(seed, 2, dk)));
  const std = 1 / Math.sqrt(D_MODEL);
  const WQ = new Float64Array(D_MODEL * dk);
  const WK = new Float64Array(D_MODEL * dk);
  for (let i = 0; i < WQ.length; i++) WQ[i] = normal() * std;
  for (let i = 0; i < WK.length; i++) WK[i] = normal() * std;
  return { E, WQ, WK };
}

/** A generator of batches from the seed's data stream: {queries, keys, values, answers}. */
export function dataStream(seed, batch = BATCH) {
  const uniform = mulberry32(mixSeed(seed, 3));
  return function nextBatch() {
    const keys = new Int32Array(batch * N_KEYS);
    const values = new Int32Array(batch * N_KEYS);
    const queries = new Int32Array(batch);
    const answers = new Int32Array(batch);
    const symbols = new Int32Array(N_SYMBOLS);
    for (let b = 0; b < batch; b++) {
      for (let i = 0; i < N_SYMBOLS; i++) symbols[i] = i;
      for (let j = 0; j < N_KEYS; j++) {
        // A partial Fisher–Yates shuffle: N_KEYS distinct keys.
        const r = j + Math.floor(uniform() * (N_SYMBOLS - j));
        const tmp = symbols[j];
        symbols[j] = symbols[r];
        symbols[r] = tmp;
        keys[b * N_KEYS + j] = symbols[j];
      }
      for (let j = 0; j < N_KEYS; j++) values[b * N_KEYS + j] = Math.floor(uniform() * N_CLASSES);
      const target = Math.floor(uniform() * N_KEYS);
      queries[b] = keys[b * N_KEYS + target];
      answers[b] = values[b * N_KEYS + target];
    }
    return { batch, queries, keys, values, answers };
  };
}

/** a (n × m) · b (m × p), row-major. */
function matmul(a, b, n, m, p) {
  const out = new Float64Array(n * p);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < m; k++) {
      const x = a[i * m + k];
      if (x === 0) continue;
      const row = k * p;
      const o = i * p;
      for (let j = 0; j < p; j++) out[o + j] += x * b[row + j];
    }
  }
  return out;
}

/** aᵀ (n × m becomes m × n) · b (n × p), row-major. */
function matmulTA(a, b, n, m, p) {
  const out = new Float64Array(m * p);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < m; k++) {
      const x = a[i * m + k];
      if (x === 0) continue;
      const o = k * p;
      const row = i * p;
      for (let j = 0; j < p; j++) out[o + j] += x * b[row + j];
    }
  }
  return out;
}

/** a (n × m) · bᵀ (b is p × m), row-major. */
function matmulTB(a, b, n, m, p) {
  const out = new Float64Array(n * p);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < p; j++) {
      let acc = 0;
      for (let k = 0; k < m; k++) acc += a[i * m + k] * b[j * m + k];
      out[i * p + j] = acc;
    }
  }
  return out;
}

function norm(xs) {
  let acc = 0;
  for (const x of xs) acc += x * x;
  return Math.sqrt(acc);
}

/**
 * Forward and backward on one batch: the step's measurements (before the update) and the
 * gradients of the mean loss with respect to W_Q and W_K.
 */
export function trainStep(E, WQ, WK, dk, tau, data) {
  const { batch: n, queries, keys, values, answers } = data;
  const Qv = matmul(E, WQ, N_SYMBOLS, D_MODEL, dk); // every symbol's query vector
  const Kv = matmul(E, WK, N_SYMBOLS, D_MODEL, dk); // every symbol's key vector
  const S = matmulTB(Qv, Kv, N_SYMBOLS, dk, N_SYMBOLS); // every (query, key) symbol pair
  for (let i = 0; i < S.length; i++) S[i] /= tau;
  const dS = new Float64Array(N_SYMBOLS * N_SYMBOLS);
  const p = new Float64Array(N_KEYS);
  const o = new Float64Array(N_CLASSES);
  const pi = new Float64Array(N_CLASSES);
  const dp = new Float64Array(N_KEYS);
  let loss = 0;
  let hits = 0;
  let entropy = 0;
  let top = 0;
  for (let b = 0; b < n; b++) {
    const row = queries[b] * N_SYMBOLS;
    const base = b * N_KEYS;
    // p = softmax(s), subtracting the max first.
    let max = -Infinity;
    for (let j = 0; j < N_KEYS; j++) {
      p[j] = S[row + keys[base + j]];
      if (p[j] > max) max = p[j];
    }
    let sum = 0;
    for (let j = 0; j < N_KEYS; j++) {
      p[j] = exp(p[j] - max);
      sum += p[j];
    }
    let pTop = 0;
    for (let j = 0; j < N_KEYS; j++) {
      p[j] /= sum;
      if (p[j] > 0) entropy -= p[j] * Math.log(p[j]);
      if (p[j] > pTop) pTop = p[j];
    }
    top += pTop;
    // o: the retrieved value, a mixture of the keys' one-hot values.
    o.fill(0);
    for (let j = 0; j < N_KEYS; j++) o[values[base + j]] += p[j];
    let best = 0;
    for (let c = 1; c < N_CLASSES; c++) if (o[c] > o[best]) best = c;
    if (best === answers[b]) hits += 1;
    // pi = softmax(γ·o) and the cross-entropy of the answer.
    let zMax = -Infinity;
    for (let c = 0; c < N_CLASSES; c++) if (READOUT * o[c] > zMax) zMax = READOUT * o[c];
    let zSum = 0;
    for (let c = 0; c < N_CLASSES; c++) {
      pi[c] = exp(READOUT * o[c] - zMax);
      zSum += pi[c];
    }
    for (let c = 0; c < N_CLASSES; c++) pi[c] /= zSum;
    loss -= Math.log(pi[answers[b]]);
    // Backward: dL/do = γ (pi − onehot(answer)) / n, dL/dp_j = dL/do[value_j], then the
    // softmax Jacobian: ds_j = p_j (dp_j − Σ_k p_k dp_k).
    let pdp = 0;
    for (let j = 0; j < N_KEYS; j++) {
      const c = values[base + j];
      dp[j] = (READOUT * (pi[c] - (c === answers[b] ? 1 : 0))) / n;
      pdp += p[j] * dp[j];
    }
    for (let j = 0; j < N_KEYS; j++) dS[row + keys[base + j]] += p[j] * (dp[j] - pdp);
  }
  for (let i = 0; i < dS.length; i++) dS[i] /= tau;
  const dQv = matmul(dS, Kv, N_SYMBOLS, N_SYMBOLS, dk);
  const dKv = matmulTA(dS, Qv, N_SYMBOLS, N_SYMBOLS, dk);
  const gWQ = matmulTA(E, dQv, N_SYMBOLS, D_MODEL, dk);
  const gWK = matmulTA(E, dKv, N_SYMBOLS, D_MODEL, dk);
  const metrics = {
    loss: loss / n,
    accuracy: hits / n,
    entropy: entropy / n,
    topWeight: top / n,
    gradQ: norm(gWQ),
    gradK: norm(gWK),
  };
  return { metrics, gWQ, gWK };
}

function emptyHistory(scaled) {
  const h = { scaled };
  for (const m of METRICS) h[m] = [];
  return h;
}

/**
 * Both runs, stepped together: trainer.step() advances each by one SGD step and returns
 * the step's index; trainer.history holds every measurement so far.
 */
export function createTrainer({ dk = 64, seed = 0, steps = STEPS, lr = LEARNING_RATE, batch = BATCH } = {}) {
  if (!HEAD_SIZES.includes(dk) && !(Number.isInteger(dk) && dk > 0)) throw new Error(`bad d_k ${dk}`);
  const { E, WQ, WK } = initialWeights(dk, seed);
  const runs = {
    scaled: { tau: Math.sqrt(dk), WQ: WQ.slice(), WK: WK.slice() },
    unscaled: { tau: 1, WQ: WQ.slice(), WK: WK.slice() },
  };
  const history = { scaled: emptyHistory(true), unscaled: emptyHistory(false) };
  const nextBatch = dataStream(seed, batch);
  let t = 0;
  return {
    config: { dk, seed, steps, lr, batch },
    history,
    get done() {
      return t >= steps;
    },
    get stepsDone() {
      return t;
    },
    step() {
      if (t >= steps) return t;
      const data = nextBatch();
      for (const name of ["scaled", "unscaled"]) {
        const run = runs[name];
        const { metrics, gWQ, gWK } = trainStep(E, run.WQ, run.WK, dk, run.tau, data);
        for (const m of METRICS) history[name][m].push(metrics[m]);
        for (let i = 0; i < gWQ.length; i++) run.WQ[i] -= lr * gWQ[i];
        for (let i = 0; i < gWK.length; i++) run.WK[i] -= lr * gWK[i];
      }
      t += 1;
      return t;
    },
  };
}

/** The whole training run at once: {scaled, unscaled} histories. */
export function trainDemo(config = {}) {
  const trainer = createTrainer(config);
  while (!trainer.done) trainer.step();
  return trainer.history;
}

function meanLast(xs, last = LAST) {
  const tail = xs.slice(-last);
  return tail.reduce((a, b) => a + b, 0) / tail.length;
}

/** The end of a run: each metric averaged over its last LAST steps. */
export function summarise(history, last = LAST) {
  const out = {};
  for (const name of ["scaled", "unscaled"]) {
    out[name] = {};
    for (const m of METRICS) out[name][m] = meanLast(history[name][m], last);
  }
  return out;
}

// The verdict on one run pair, used by the page's summary sentence. The unscaled model
// "learns" when its final loss is within LEARNS_WITHIN of the scaled one's (both near 0).
export const LEARNS_WITHIN = 0.05;

export function verdict(summary) {
  const gap = summary.unscaled.loss - summary.scaled.loss;
  return gap <= LEARNS_WITHIN ? "learns" : "stalls";
}
