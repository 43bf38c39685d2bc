# ruff: noqa: RUF001, RUF002, RUF003 - the maths and the table print ×, −, γ and dashes on purpose
"""The ten-minute demonstration: train a tiny attention model with and without the 1/√d_k.

Run it:  python -m explorables.train_demo --d-k 64 --seed 0

The task is key-value retrieval. Each example shows T = 8 keys, each carrying a value (one of
C = 8 classes), and a query equal to one of the keys; the answer is that key's value. The only
way to get it right is for attention to look at the key that matches the query, so the model
is one attention head and nothing else can learn:

    q = e(query) W_Q,   k_j = e(key_j) W_K,   s_j = q·k_j / τ,   p = softmax(s)
    o = Σ_j p_j onehot(value_j),   loss = cross-entropy(softmax(γ·o), answer)

with τ = √d_k (scaled) or τ = 1 (unscaled). The symbol embeddings e are fixed random vectors
with unit-variance entries and W_Q, W_K start with variance 1/d_model, so q and k have
unit-variance entries and the unscaled scores have variance ≈ d_k at initialisation, as in the
variance argument. Both runs start from the same weights and see the same batches; only τ
differs. The gradients are written by hand, the same formulas as the browser's
static/explorables/demonstration.mjs, and tests/explorables/test_demonstration.py checks that
both give the same numbers.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from dataclasses import dataclass, field

import numpy as np

from explorables.prng import mix_seed, mulberry32_block

N_SYMBOLS = 16  # the key vocabulary
D_MODEL = 32  # the length of a symbol's embedding
N_KEYS = 8  # keys per example (T)
N_CLASSES = 8  # value classes (C)
READOUT = 8.0  # γ: the fixed readout scale turning the retrieved value into logits
BATCH = 128
STEPS = 300
LEARNING_RATE = 0.1
HEAD_SIZES = (16, 32, 64, 128, 256)
# The table's rows; its last row is the run's end, as the summary figures give it (below).
REPORT_STEPS = (0, 25, 50, 100, 200)
# The summary figures average the last LAST steps: one batch's loss is noisy (a query stuck
# on a wrong key costs about READOUT nats, 1/BATCH of which lands in the batch's mean).
LAST = 20
# The unscaled run "learns" when its final loss is within this many nats of the scaled one's.
LEARNS_WITHIN = 0.05


@dataclass(frozen=True)
class Config:
    d_k: int = 64
    seed: int = 0
    steps: int = STEPS
    lr: float = LEARNING_RATE
    batch: int = BATCH


@dataclass
class History:
    """One run's curves, one entry per step (measured on that step's batch, before the update)."""

    scaled: bool
    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    entropy: list[float] = field(default_factory=list)
    top_weight: list[float] = field(default_factory=list)
    grad_q: list[float] = field(default_factory=list)
    grad_k: list[float] = field(default_factory=list)


def _normals(seed: int, count: int) -> np.ndarray:
    """Irwin–Hall normals: each is 12 consecutive uniforms minus 6, as the JS draws them.

    12 multiples of 2⁻³² below 1 add up exactly in a double, in any order, so numpy's sum
    gives the same bits as the JS loop.
    """
    return mulberry32_block(seed, 12 * count).reshape(count, 12).sum(axis=1) - 6


def initial_weights(config: Config) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """E (N_SYMBOLS × D_MODEL), W_Q and W_K (D_MODEL × d_k), drawn row by row like the JS."""
    # The embeddings depend on the seed only, so every head size sees the same symbols.
    E = _normals(mix_seed(config.seed, 1), N_SYMBOLS * D_MODEL).reshape(N_SYMBOLS, D_MODEL)
    size = D_MODEL * config.d_k
    w = _normals(mix_seed(config.seed, 2, config.d_k), 2 * size) * (1 / math.sqrt(D_MODEL))
    return E, w[:size].reshape(D_MODEL, config.d_k), w[size:].reshape(D_MODEL, config.d_k)


@dataclass(frozen=True)
class Data:
    """Every step's batch, (steps, batch, ...) arrays: the same for every head size."""

    queries: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    answers: np.ndarray


_DRAWS = 2 * N_KEYS + 1  # uniforms per example: the key shuffle, the values, the query


@functools.lru_cache(maxsize=16)
def make_data(seed: int, steps: int, batch: int) -> Data:
    """The seed's data stream: per example N_KEYS shuffle draws, N_KEYS values, one query."""
    n = steps * batch
    u = mulberry32_block(mix_seed(seed, 3), n * _DRAWS).reshape(n, _DRAWS)
    rows = np.arange(n)
    symbols = np.tile(np.arange(N_SYMBOLS), (n, 1))
    for j in range(N_KEYS):  # a partial Fisher–Yates shuffle: N_KEYS distinct keys
        r = j + np.floor(u[:, j] * (N_SYMBOLS - j)).astype(np.int64)
        picked = symbols[rows, r]
        symbols[rows, r] = symbols[:, j]
        symbols[:, j] = picked
    keys = symbols[:, :N_KEYS]
    values = np.floor(u[:, N_KEYS : 2 * N_KEYS] * N_CLASSES).astype(np.int64)
    target = np.floor(u[:, 2 * N_KEYS] * N_KEYS).astype(np.int64)
    data = Data(
        queries=keys[rows, target].reshape(steps, batch),
        keys=keys.reshape(steps, batch, N_KEYS),
        values=values.reshape(steps, batch, N_KEYS),
        answers=values[rows, target].reshape(steps, batch),
    )
    for array in (data.queries, data.keys, data.values, data.answers):
        array.setflags(write=False)  # cached and shared between runs
    return data


# exp as 2^k · e^r, r = x − k·ln 2 (Cody–Waite with fdlibm's halves of ln 2) and a degree-13
# Taylor polynomial: the twin of demonstration.mjs's exp, operation for operation.
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-1
_LN2_LO = 1.90821492927058770002e-10
_EXP_MIN = -700.0  # below this exp is under 1e-304: treated as 0
_EXP_MAX = 700.0
_INV_FACT = [1 / math.factorial(n) for n in range(14)]


def _exp(x: np.ndarray) -> np.ndarray:
    x = np.minimum(x, _EXP_MAX)
    k = np.floor(x * _LOG2E + 0.5)
    r = x - k * _LN2_HI - k * _LN2_LO
    poly = np.full_like(x, _INV_FACT[13])
    for n in range(12, -1, -1):
        poly = poly * r + _INV_FACT[n]
    out = poly * np.ldexp(1.0, np.maximum(k, -1022).astype(np.int64))
    return np.where(x < _EXP_MIN, 0.0, out)


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for stacks (M, n, m) and (M, m, p), summed over m in order as the JS loops do.

    BLAS (and np.sum) add in another order, which the chaotic unscaled run would amplify.
    """
    if a.shape[2] > 32:
        # A running sum adds left to right and is faster here than a Python loop.
        return np.add.accumulate(a[:, :, :, None] * b[:, None, :, :], axis=2)[:, :, -1, :]
    out = np.zeros((a.shape[0], a.shape[1], b.shape[2]))
    for k in range(a.shape[2]):
        out += a[:, :, k : k + 1] * b[:, k : k + 1, :]
    return out


def _softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, subtracting the max and summing left to right."""
    e = _exp(x - x.max(axis=-1, keepdims=True))
    total = np.zeros(x.shape[:-1])
    for j in range(x.shape[-1]):
        total += e[..., j]
    return e / total[..., None]


@dataclass(frozen=True)
class Batch:
    """One step's examples for a stack of M models: (M, n) and (M, n, N_KEYS) arrays."""

    queries: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    answers: np.ndarray


def step(
    E: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, tau: np.ndarray, batch: Batch
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Forward and backward for a stack of M models at once: E (M, N_SYMBOLS, D_MODEL),
    W_Q and W_K (M, D_MODEL, d_k), tau (M,). Returns each model's measurements (arrays of
    length M, measured before the update) and the gradients of each model's mean loss.
    """
    M, n = batch.queries.shape
    m = np.arange(M)[:, None]
    b = np.arange(n)[None, :]
    Qv = _matmul(E, W_Q)  # every symbol's query vector
    Kv = _matmul(E, W_K)  # every symbol's key vector
    S = _matmul(Qv, Kv.transpose(0, 2, 1)) / tau[:, None, None]  # every (query, key) pair
    p = _softmax(S[m[..., None], batch.queries[..., None], batch.keys])  # (M, n, T)
    o = np.zeros((M, n, N_CLASSES))  # the retrieved value: a mixture of one-hot values
    for j in range(N_KEYS):
        o[m, b, batch.values[:, :, j]] += p[:, :, j]
    pi = _softmax(READOUT * o)
    loss = -np.log(pi[m, b, batch.answers]).mean(axis=1)
    retrieved = (np.argmax(o, axis=2) == batch.answers).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(p > 0, p * np.log(p), 0.0)
    entropy = -plogp.sum(axis=2).mean(axis=1)

    # dL/do = γ (pi − onehot(answer)) / n; dL/dp_j = dL/do[value_j]; then the softmax
    # Jacobian, ds_j = p_j (dp_j − Σ_k p_k dp_k).
    pi_v = np.take_along_axis(pi, batch.values, axis=2)
    dp = (READOUT * (pi_v - (batch.values == batch.answers[..., None]))) / n
    pdp = np.zeros((M, n))
    for j in range(N_KEYS):
        pdp += p[:, :, j] * dp[:, :, j]
    ds = p * (dp - pdp[..., None])
    dS = np.zeros_like(S)
    where = (
        np.repeat(np.arange(M), n * N_KEYS),
        np.repeat(batch.queries, N_KEYS, axis=1).ravel(),
        batch.keys.ravel(),
    )
    np.add.at(dS, where, ds.ravel())  # in (model, example, key) order, as the JS loop adds
    dS /= tau[:, None, None]
    E_T = E.transpose(0, 2, 1)
    dW_Q = _matmul(E_T, _matmul(dS, Kv))
    dW_K = _matmul(E_T, _matmul(dS.transpose(0, 2, 1), Qv))
    metrics = {
        "loss": loss,
        "accuracy": retrieved,
        "entropy": entropy,
        "top_weight": p.max(axis=2).mean(axis=1),
        "grad_q": np.sqrt((dW_Q**2).sum(axis=(1, 2))),
        "grad_k": np.sqrt((dW_K**2).sum(axis=(1, 2))),
    }
    return metrics, dW_Q, dW_K


def train_many(
    configs: list[Config],
    weights: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
) -> list[dict[str, History]]:
    """Both runs of every config, trained side by side as one stack of models.

    The configs must share d_k, steps, batch and lr (the seeds may differ); each run is the
    same, bit for bit, as if trained alone. weights replaces the seeds' initial weights.
    """
    first = configs[0]
    assert all(
        (c.d_k, c.steps, c.batch, c.lr) == (first.d_k, first.steps, first.batch, first.lr)
        for c in configs
    )
    starts = weights if weights is not None else [initial_weights(c) for c in configs]
    data = [make_data(c.seed, c.steps, c.batch) for c in configs]
    # Model 2i is config i with the scale, model 2i + 1 the same without it.
    E = np.stack([w[0] for w in starts for _ in range(2)])
    W_Q = np.stack([w[1] for w in starts for _ in range(2)])
    W_K = np.stack([w[2] for w in starts for _ in range(2)])
    tau = np.array([math.sqrt(first.d_k), 1.0] * len(configs))
    histories = [
        {"scaled": History(scaled=True), "unscaled": History(scaled=False)} for _ in configs
    ]
    for t in range(first.steps):
        batch = Batch(
            *(
                np.stack([getattr(d, name)[t] for d in data for _ in range(2)])
                for name in ("queries", "keys", "values", "answers")
            )
        )
        metrics, dW_Q, dW_K = step(E, W_Q, W_K, tau, batch)
        for i, history in enumerate(histories):
            for model, name in ((2 * i, "scaled"), (2 * i + 1, "unscaled")):
                for key, value in metrics.items():
                    getattr(history[name], key).append(float(value[model]))
        W_Q -= first.lr * dW_Q
        W_K -= first.lr * dW_K
    return histories


def train(
    config: Config, weights: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
) -> dict[str, History]:
    """Both runs, scaled and unscaled, from the same weights on the same batches (plain SGD).

    weights (E, W_Q, W_K) replaces the seed's initial weights, e.g. to nudge one entry.
    """
    return train_many([config], None if weights is None else [weights])[0]


@dataclass(frozen=True)
class Summary:
    """The end of one run: each measurement averaged over the last LAST steps."""

    loss: float
    accuracy: float
    entropy: float
    top_weight: float
    grad_q: float
    grad_k: float


def summarise(history: History, last: int = LAST) -> Summary:
    def tail(xs: list[float]) -> float:
        return float(np.mean(xs[-last:]))

    return Summary(
        loss=tail(history.loss),
        accuracy=tail(history.accuracy),
        entropy=tail(history.entropy),
        top_weight=tail(history.top_weight),
        grad_q=tail(history.grad_q),
        grad_k=tail(history.grad_k),
    )


def verdict(scaled: Summary, unscaled: Summary) -> str:
    """ "learns" when the unscaled run ends within LEARNS_WITHIN nats of the scaled one."""
    return "learns" if unscaled.loss - scaled.loss <= LEARNS_WITHIN else "stalls"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def format_sci(x: float) -> str:
    """0.00084 → "8.4 × 10⁻⁴", as demonstration-widget.mjs's sci() writes it on the page."""
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _run_table(config: Config, history: dict[str, History]) -> list[str]:
    s, u = history["scaled"], history["unscaled"]
    lines = [
        f"Key-value retrieval, d_k = {config.d_k}, seed {config.seed}: {config.steps} SGD steps "
        f"(learning rate {config.lr}, batch {config.batch}); both runs start from the same "
        "weights and see the same batches.",
        "",
        f"{'':>5} {'loss':>15} {'retrieved':>15} {'entropy (nats)':>15} {'top weight':>15}"
        f" {'|grad W_Q|':>19} {'|grad W_K|':>19}",
        f"{'step':>5}" + f" {'÷√d_k':>7} {'none':>7}" * 4 + f" {'÷√d_k':>9} {'none':>9}" * 2,
    ]
    for t in REPORT_STEPS:
        if t >= config.steps:
            continue
        lines.append(
            f"{t:>5}"
            f" {s.loss[t]:>7.3f} {u.loss[t]:>7.3f}"
            f" {s.accuracy[t]:>7.0%} {u.accuracy[t]:>7.0%}"
            f" {s.entropy[t]:>7.3f} {u.entropy[t]:>7.3f}"
            f" {s.top_weight[t]:>7.3f} {u.top_weight[t]:>7.3f}"
            f" {s.grad_q[t]:>9.1e} {u.grad_q[t]:>9.1e}"
            f" {s.grad_k[t]:>9.1e} {u.grad_k[t]:>9.1e}"
        )
    ss, su = summarise(s), summarise(u)
    # The end of the run as one set of numbers: the same means the sentence below quotes.
    lines.append(
        f"{'last ' + str(LAST):>5}"
        f" {ss.loss:>7.3f} {su.loss:>7.3f}"
        f" {ss.accuracy:>7.0%} {su.accuracy:>7.0%}"
        f" {ss.entropy:>7.3f} {su.entropy:>7.3f}"
        f" {ss.top_weight:>7.3f} {su.top_weight:>7.3f}"
        f" {ss.grad_q:>9.1e} {su.grad_q:>9.1e}"
        f" {ss.grad_k:>9.1e} {su.grad_k:>9.1e}"
    )
    lines += [
        "",
        f"Mean of the last {LAST} steps: loss {ss.loss:.3f} (÷√d_k) vs {su.loss:.3f} (none); "
        f"retrieved {ss.accuracy:.0%} vs {su.accuracy:.0%}; attention entropy {ss.entropy:.3f} "
        f"vs {su.entropy:.3f} nats (uniform over {N_KEYS} keys: {math.log(N_KEYS):.3f}).",
        f"Without the scale the model {verdict(ss, su)} at d_k = {config.d_k}.",
    ]
    return lines


@dataclass(frozen=True)
class SweepRow:
    """One head size over several seeds: the final summaries of both runs, seed by seed."""

    d_k: int
    scaled: tuple[Summary, ...]
    unscaled: tuple[Summary, ...]

    @property
    def stalls(self) -> int:
        return sum(
            verdict(s, u) == "stalls" for s, u in zip(self.scaled, self.unscaled, strict=True)
        )

    def unscaled_losses(self) -> list[float]:
        return [r.loss for r in self.unscaled]

    def unscaled_accuracies(self) -> list[float]:
        return [r.accuracy for r in self.unscaled]


def sweep(seeds: list[int], steps: int = STEPS) -> list[SweepRow]:
    """Both runs at every head size in HEAD_SIZES for every seed."""
    rows = []
    for d_k in HEAD_SIZES:
        runs = train_many([Config(d_k=d_k, seed=seed, steps=steps) for seed in seeds])
        rows.append(
            SweepRow(
                d_k=d_k,
                scaled=tuple(summarise(r["scaled"]) for r in runs),
                unscaled=tuple(summarise(r["unscaled"]) for r in runs),
            )
        )
    return rows


def _sweep_table(seeds: list[int], steps: int) -> list[str]:
    lines = [
        f"Final loss (mean of the last {LAST} of {steps} steps) and queries retrieved, "
        f"seeds {seeds[0]}–{seeds[-1]}:",
        "",
        f"{'d_k':>5} {'÷√d_k loss':>12} {'none: loss':>22} {'retrieved':>16} {'stalls':>8}",
    ]
    for row in sweep(seeds, steps):
        s_loss = [r.loss for r in row.scaled]
        u_loss = row.unscaled_losses()
        u_acc = row.unscaled_accuracies()
        lines.append(
            f"{row.d_k:>5} {max(s_loss):>12.3f}"
            f" {np.median(u_loss):>7.2f} ({min(u_loss):.2f}–{max(u_loss):.2f})"
            f" {np.median(u_acc):>6.0%} ({min(u_acc):.0%}–{max(u_acc):.0%})"
            f" {row.stalls:>5}/{len(seeds)}"
        )
    lines.append("")
    lines.append(
        "÷√d_k loss: the worst seed. none: the median over seeds (the range in brackets). "
        f"stalls: seeds whose unscaled loss ends more than {LEARNS_WITHIN} above the scaled one."
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m explorables.train_demo",
        description="Train a tiny attention head with and without the 1/√d_k, side by side.",
    )
    parser.add_argument("--d-k", type=int, default=64, help="head size (default 64)")
    parser.add_argument("--seed", type=int, default=0, help="seed of weights and data")
    parser.add_argument("--steps", type=int, default=STEPS, help=f"SGD steps ({STEPS})")
    parser.add_argument("--lr", type=float, default=LEARNING_RATE, help="learning rate")
    parser.add_argument(
        "--sweep",
        type=int,
        metavar="SEEDS",
        help=f"instead: the final losses at d_k = {', '.join(map(str, HEAD_SIZES))} "
        "for seeds 0 … SEEDS−1",
    )
    args = parser.parse_args(argv)
    if args.sweep:
        lines = _sweep_table(list(range(args.sweep)), args.steps)
    else:
        if args.d_k < 1 or args.steps < 1:
            parser.error("--d-k and --steps must be positive")
        config = Config(d_k=args.d_k, seed=args.seed, steps=args.steps, lr=args.lr)
        lines = _run_table(config, train(config))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
