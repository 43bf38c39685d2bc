// The numbers behind the explorables: pure functions, no DOM.
// Imported by the widgets (widgets.mjs) in the browser and by the node tests
// (tests/explorables/*.test.mjs). Every random number comes from a seeded PRNG, so a
// figure shows the same numbers on every load and the tests can pin them.

/** mulberry32: a tiny, fast 32-bit PRNG. Returns a function giving floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mix a base seed with small integers (d, a figure id, ...) into a new 32-bit seed. */
export function mixSeed(...parts) {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193) >>> 0;
    h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0;
  }
  return h >>> 0;
}

/** Standard normal samples by Box–Muller over a uniform generator. */
export function normalSampler(uniform) {
  let spare = null;
  return function normal() {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    let u = 0;
    while (u === 0) u = uniform(); // avoid log(0)
    const v = uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

export function mean(xs) {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** Population variance (divide by n): the spread of the samples we drew. */
export function variance(xs) {
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) * (x - m);
  return s / xs.length;
}

/** Numerically stable softmax (subtract the max first). */
export function softmax(scores) {
  let max = -Infinity;
  for (const s of scores) if (s > max) max = s;
  const e = scores.map((s) => Math.exp(s - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

export function argmax(xs) {
  let best = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i] > xs[best]) best = i;
  return best;
}

export function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

export function randomVector(normal, d) {
  const v = new Float64Array(d);
  for (let i = 0; i < d; i++) v[i] = normal();
  return v;
}

/**
 * Histogram of values over [lo, hi) in `bins` equal bins. Values outside the range are
 * counted in `below` / `above` so a figure can say how many fell off its axis.
 */
export function histogram(values, lo, hi, bins) {
  const counts = new Array(bins).fill(0);
  let below = 0;
  let above = 0;
  const width = (hi - lo) / bins;
  for (const x of values) {
    if (x < lo) below++;
    else if (x >= hi) above++;
    else counts[Math.min(bins - 1, Math.floor((x - lo) / width))]++;
  }
  return { lo, hi, bins, width, counts, below, above, total: values.length };
}

// ---------------------------------------------------------------------------------------
// 1. Dot products grow with length (and 3. why √d and not d)

// Chosen so that d = 64 shows numbers close to the seed page (variance 65 vs its 66,
// top weight 99% raw vs 43% scaled); any seed gives the same picture within noise.
export const DEFAULT_SEED = 10;
export const D_MIN = 1;
export const D_MAX = 512;
export const N_SAMPLES = 2000;
export const N_KEYS = 8;

/** The divisor of each scaling choice: "none" → 1, "sqrt" → √d, "d" → d. */
export function divisorFor(scaling, d) {
  if (scaling === "none") return 1;
  if (scaling === "sqrt") return Math.sqrt(d);
  if (scaling === "d") return d;
  throw new Error(`unknown scaling ${scaling}`);
}

/** What theory says the variance of q·k / divisor is, for unit-variance entries. */
export function theoryVariance(scaling, d) {
  const div = divisorFor(scaling, d);
  return d / (div * div);
}

/**
 * `n` samples of q·k where q and k have `d` independent N(0, 1) entries.
 * The same (d, seed) always gives the same samples.
 */
export function sampleDots(d, n = N_SAMPLES, seed = DEFAULT_SEED) {
  const normal = normalSampler(mulberry32(mixSeed(seed, 1, d)));
  const out = new Float64Array(n);
  for (let s = 0; s < n; s++) {
    let acc = 0;
    for (let i = 0; i < d; i++) acc += normal() * normal();
    out[s] = acc;
  }
  return out;
}

/** One query against `nKeys` keys, all with `d` N(0, 1) entries: the raw scores q·k_j. */
export function queryScores(d, nKeys = N_KEYS, seed = DEFAULT_SEED) {
  const normal = normalSampler(mulberry32(mixSeed(seed, 2, d)));
  const q = randomVector(normal, d);
  const scores = [];
  for (let j = 0; j < nKeys; j++) scores.push(dot(q, randomVector(normal, d)));
  return scores;
}

/** Softmax of scores / divisor with its top weight and the winning key. */
export function scaledSoftmax(scores, divisor) {
  const weights = softmax(scores.map((s) => s / divisor));
  const top = argmax(weights);
  return { weights, top, topWeight: weights[top] };
}

/**
 * Everything the "dot products grow with length" figure shows for one d: the sampled
 * scores raw and scaled, their measured variance next to the theory, and the softmax of
 * one query's scores against 8 keys, raw and scaled.
 */
export function varianceFigure(d, { seed = DEFAULT_SEED, n = N_SAMPLES, nKeys = N_KEYS } = {}) {
  const raw = sampleDots(d, n, seed);
  const root = Math.sqrt(d);
  const scaled = raw.map((x) => x / root);
  const scores = queryScores(d, nKeys, seed);
  return {
    d,
    raw,
    scaled,
    varRaw: variance(raw),
    varScaled: variance(scaled),
    stdRaw: Math.sqrt(variance(raw)),
    theoryRaw: d,
    theoryScaled: 1,
    scores,
    softRaw: scaledSoftmax(scores, 1),
    softScaled: scaledSoftmax(scores, root),
  };
}

/** The "why √d and not d" figure: one scaling choice at one d. */
export function scalingFigure(d, scaling, { seed = DEFAULT_SEED, n = N_SAMPLES } = {}) {
  const div = divisorFor(scaling, d);
  const values = sampleDots(d, n, seed).map((x) => x / div);
  const scores = queryScores(d, N_KEYS, seed);
  return {
    d,
    scaling,
    divisor: div,
    values,
    variance: variance(values),
    theory: theoryVariance(scaling, d),
    soft: scaledSoftmax(scores, div),
  };
}

/** Mean top softmax weight over `trials` fresh queries (each against nKeys keys). */
export function meanTopWeight(d, scaling, { trials = 200, nKeys = N_KEYS, seed = DEFAULT_SEED } = {}) {
  let total = 0;
  for (let t = 0; t < trials; t++) {
    const scores = queryScores(d, nKeys, mixSeed(seed, 3, t));
    total += scaledSoftmax(scores, divisorFor(scaling, d)).topWeight;
  }
  return total / trials;
}

// ---------------------------------------------------------------------------------------
// 2. Big scores saturate softmax

export const TOKENS = ["The", "cat", "sat", "on", "the"];
// The scores of the last "the" against the five tokens. The seed prints them rounded to
// one decimal (0.8, 1.7, 0.5, 0.1, 0.2); these two-decimal values round to exactly those
// and reproduce every number of the seed's figure (top weight 49% at ×1 and 97% at ×4,
// largest gradient 0.25, 0.027, 5e-5, and the ×1 matrix entry for entry). The rounded
// values themselves would give 96%, 0.037 and 1.3e-4 instead.
export const TOY_SCORES = [0.75, 1.74, 0.5, 0.06, 0.16];
export const MULT_MIN = 1;
export const MULT_MAX = 10;

/** The softmax Jacobian J[i][j] = ∂p_i/∂s_j = p_i (δ_ij − p_j). */
export function softmaxJacobian(p) {
  return p.map((pi, i) => p.map((pj, j) => pi * ((i === j ? 1 : 0) - pj)));
}

export function maxAbs(matrix) {
  let m = 0;
  for (const row of matrix) for (const x of row) m = Math.max(m, Math.abs(x));
  return m;
}

/** The saturation figure at one multiplier: weights, Jacobian and its largest entry. */
export function saturationFigure(mult, scores = TOY_SCORES) {
  const scaled = scores.map((s) => s * mult);
  const weights = softmax(scaled);
  const jacobian = softmaxJacobian(weights);
  const top = argmax(weights);
  return { mult, scores: scaled, weights, jacobian, top, topWeight: weights[top], maxGrad: maxAbs(jacobian) };
}

/** The little curve: largest Jacobian entry against the multiplier. */
export function saturationCurve(scores = TOY_SCORES, { from = MULT_MIN, to = MULT_MAX, step = 0.25 } = {}) {
  const points = [];
  for (let m = from; m <= to + 1e-9; m += step) {
    points.push({ mult: m, maxGrad: saturationFigure(m, scores).maxGrad });
  }
  return points;
}

// ---------------------------------------------------------------------------------------
// 4. The judges

export const N_CONTESTANTS = 5;

/** Totals of `contestants` contestants, each scored by `judges` judges uniform in [−1, 1]. */
export function judgeTotals(judges, contestants = N_CONTESTANTS, seed = DEFAULT_SEED) {
  const uniform = mulberry32(mixSeed(seed, 4, judges));
  const totals = [];
  for (let c = 0; c < contestants; c++) {
    let t = 0;
    for (let j = 0; j < judges; j++) t += 2 * uniform() - 1;
    totals.push(t);
  }
  return totals;
}

/** One contest: the totals, the prize shares from softmax raw and after ÷√judges. */
export function judgesFigure(judges, { contestants = N_CONTESTANTS, seed = DEFAULT_SEED } = {}) {
  const totals = judgeTotals(judges, contestants, seed);
  return {
    judges,
    totals,
    spread: Math.max(...totals) - Math.min(...totals),
    raw: scaledSoftmax(totals, 1),
    scaled: scaledSoftmax(totals, Math.sqrt(judges)),
  };
}

/** Averages over many contests: the winner's share raw and scaled, the typical gap. */
export function judgesSummary(judges, { contests = 500, contestants = N_CONTESTANTS, seed = DEFAULT_SEED } = {}) {
  let raw = 0;
  let scaled = 0;
  let gap = 0;
  for (let c = 0; c < contests; c++) {
    const f = judgesFigure(judges, { contestants, seed: mixSeed(seed, 5, c) });
    raw += f.raw.topWeight;
    scaled += f.scaled.topWeight;
    gap += Math.abs(f.totals[0] - f.totals[1]);
  }
  return { judges, meanTopRaw: raw / contests, meanTopScaled: scaled / contests, meanGap: gap / contests };
}

// ---------------------------------------------------------------------------------------
// The worked example (3 tokens, d_k = 4)

export const WORKED_Q = [
  [1, 0, 1, 0],
  [0, 1, 0, 1],
  [1, 1, 1, 0],
];
export const WORKED_K = [
  [1, 0, 1, 0],
  [0, 1, 0, 1],
  [1, 1, 0, 0],
];
export const WORKED_V = [
  [1, 0],
  [0, 1],
  [1, 1],
];

export function transpose(a) {
  return a[0].map((_, j) => a.map((row) => row[j]));
}

export function matmul(a, b) {
  return a.map((row) => b[0].map((_, j) => row.reduce((s, x, k) => s + x * b[k][j], 0)));
}

/** Every step of softmax(QKᵀ/√d_k)·V, plus the hand check of row `checkRow`. */
export function workedExample(Q = WORKED_Q, K = WORKED_K, V = WORKED_V, checkRow = 0) {
  const dk = Q[0].length;
  const root = Math.sqrt(dk);
  const scores = matmul(Q, transpose(K));
  const scaled = scores.map((row) => row.map((x) => x / root));
  const weights = scaled.map((row) => softmax(row));
  const output = matmul(weights, V);
  const exps = scaled[checkRow].map((x) => Math.exp(x));
  const sum = exps.reduce((a, b) => a + b, 0);
  // e^x overflows to ∞ past x ≈ 709 (and every e^x rounds to 0 below about −745): the hand
  // check then shows what softmax() does, the exponentials of the differences from the row's
  // largest score, which give the same weights and stay finite.
  const stable = !Number.isFinite(sum) || sum === 0;
  const shift = Math.max(...scaled[checkRow]);
  const stableExps = scaled[checkRow].map((x) => Math.exp(x - shift));
  const stableSum = stableExps.reduce((a, b) => a + b, 0);
  return {
    dk,
    root,
    scores,
    scaled,
    weights,
    output,
    check: {
      row: checkRow,
      scores: scaled[checkRow],
      exps,
      sum,
      stable,
      shift,
      stableExps,
      stableSum,
      weights: weights[checkRow],
      output: output[checkRow],
    },
  };
}
