"""The ten-minute demonstration: the browser's training run against its numpy twin, and every
figure the explainer page and the figure's no-JavaScript text quote, recomputed.

The JS (static/explorables/demonstration.mjs) and numpy (explorables/train_demo.py) must agree
to the last bits: the unscaled run is chaotic, so anything less would not stay close for 300
steps. Each number in the page's demonstration section has a test below, and a last test
fails if the section grows a number nobody checks.
"""

# ruff: noqa: RUF001 - the page and the table print signs and dashes on purpose

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from explorables import train_demo as T

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "questions/content/pages/why-divide-by-sqrt-d.md"
RUNNER = "tests/explorables/demonstration_run.mjs"
SECTION_START = "## 4. Watch it stall: the ten-minute demonstration"
SECTION_END = "## Why √d and not d"
PY_TO_JS = {
    "loss": "loss",
    "accuracy": "accuracy",
    "entropy": "entropy",
    "top_weight": "topWeight",
    "grad_q": "gradQ",
    "grad_k": "gradK",
}


def _node() -> str:
    node = shutil.which("node") or "/usr/bin/node"
    if not Path(node).exists():
        pytest.skip("node is not installed")
    return node


def _js_run(d_k: int, seed: int) -> dict:
    run = subprocess.run(
        [_node(), RUNNER, str(d_k), str(seed)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(run.stdout)


@pytest.mark.parametrize(("d_k", "seed"), [(16, 0), (64, 0), (128, 3), (256, 1)])
def test_browser_and_numpy_train_the_same_run(d_k: int, seed: int) -> None:
    js = _js_run(d_k, seed)
    py = T.train(T.Config(d_k=d_k, seed=seed))
    for run in ("scaled", "unscaled"):
        for py_name, js_name in PY_TO_JS.items():
            ours = np.array(getattr(py[run], py_name))
            theirs = np.array(js[run][js_name])
            assert ours.shape == (T.STEPS,)
            # Only Math.log against np.log (the reported loss and entropy) may differ, in the
            # last bit; everything on the training path is computed identically.
            np.testing.assert_allclose(
                theirs, ours, rtol=1e-12, atol=1e-300, err_msg=f"{run} {py_name}"
            )


def test_the_unscaled_scores_start_with_variance_d_k() -> None:
    for d_k in T.HEAD_SIZES:
        E, W_Q, W_K = T.initial_weights(T.Config(d_k=d_k, seed=0))
        q, k = E @ W_Q, E @ W_K
        assert abs(np.var(q) - 1) < 0.15 and abs(np.var(k) - 1) < 0.15
        assert abs(np.var(q @ k.T) / d_k - 1) < 0.35, d_k


# ---------------------------------------------------------------------------------------
# The figures, computed once per module


@cache
def run(d_k: int, seed: int = 0) -> dict[str, T.History]:
    return T.train(T.Config(d_k=d_k, seed=seed))


@cache
def summary(d_k: int, seed: int = 0) -> tuple[T.Summary, T.Summary]:
    history = run(d_k, seed)
    return T.summarise(history["scaled"]), T.summarise(history["unscaled"])


@cache
def sweep10() -> dict[int, T.SweepRow]:
    return {row.d_k: row for row in T.sweep(list(range(10)))}


@cache
def nudged_losses() -> tuple[float, float]:
    """Final losses (scaled, unscaled) at d_k = 64, seed 0 after nudging W_Q[0, 0] by one ulp."""
    config = T.Config(d_k=64, seed=0)
    E, W_Q, W_K = T.initial_weights(config)
    W_Q = W_Q.copy()
    W_Q[0, 0] = np.nextafter(W_Q[0, 0], np.inf)
    history = T.train(config, (E, W_Q, W_K))
    return T.summarise(history["scaled"]).loss, T.summarise(history["unscaled"]).loss


def f2(x: float) -> str:
    return f"{x:.2f}"


def f3(x: float) -> str:
    return f"{x:.3f}"


def pc(x: float) -> str:
    return f"{x:.0%}"


def sweep_row(d_k: int) -> str:
    row = sweep10()[d_k]
    losses = row.unscaled_losses()
    return (
        f"| {d_k} | {f3(max(r.loss for r in row.scaled))} "
        f"| {f2(np.median(losses))} ({f2(min(losses))}–{f2(max(losses))}) "
        f"| {pc(np.median(row.unscaled_accuracies()))} | {row.stalls} of 10 |"
    )


def median_loss(d_k: int) -> str:
    return f2(np.median(sweep10()[d_k].unscaled_losses()))


def median_retrieved(d_k: int) -> str:
    return pc(np.median(sweep10()[d_k].unscaled_accuracies()))


def at(d_k: int, name: str, metric: str, step: int) -> float:
    return getattr(run(d_k)[name], metric)[step]


def _scaled_always_learns() -> str:
    rows = sweep10().values()
    assert all(r.accuracy == 1 for row in rows for r in row.scaled)  # "every value retrieved"
    return f"at\n  most {f3(max(r.loss for row in rows for r in row.scaled))} and every value"


def _small_heads_learn() -> str:
    learners = len(sweep10()[16].unscaled) - sweep10()[16].stalls
    return f"{learners} of 10 seeds end as well as the scaled head"


def _nudge_same() -> str:
    scaled, _ = nudged_losses()
    assert scaled == summary(64)[0].loss  # "exactly the same loss"
    return "scaled head ends at exactly the same loss"


# (id, the text the page must contain): the figure, in the words and format the page uses.
PAGE_FIGURES: list[tuple[str, Callable[[], str]]] = [
    *[(f"sweep-row-{d}", lambda d=d: sweep_row(d)) for d in T.HEAD_SIZES],
    ("scaled-worst-loss-and-all-retrieved", _scaled_always_learns),
    ("d16-spread", lambda: f"spread only about ±{np.sqrt(16):.0f}"),
    (
        "d16-entropy-at-start",
        lambda: f"entropy {f2(at(16, 'unscaled', 'entropy', 0))} nats against "
        f"{f2(at(16, 'scaled', 'entropy', 0))} with the division",
    ),
    ("uniform-entropy", lambda: f"uniform over 8 keys is {f2(np.log(T.N_KEYS))}"),
    ("d16-learners", _small_heads_learn),
    (
        "d16-seed0-lower",
        lambda: f"({f3(summary(16)[1].loss)} against {f3(summary(16)[0].loss)} for\n  seed 0)",
    ),
    (
        "median-losses",
        lambda: f"loss is {median_loss(64)} at 64, {median_loss(128)} at 128 and "
        f"{median_loss(256)} at 256",
    ),
    (
        "median-retrieved",
        lambda: f"({median_retrieved(64)}, {median_retrieved(128)}, {median_retrieved(256)})",
    ),
    (
        "d64-step0-gradient",
        lambda: f"{at(64, 'unscaled', 'grad_q', 0):.1f} against "
        f"{at(64, 'scaled', 'grad_q', 0):.1f}",
    ),
    (
        "d64-step100-gradient",
        lambda: f"({at(64, 'unscaled', 'grad_q', 100):.4f} against "
        f"{at(64, 'scaled', 'grad_q', 100):.3f})",
    ),
    (
        "d64-step100-loss",
        lambda: f"({f2(at(64, 'unscaled', 'loss', 100))} against "
        f"{f3(at(64, 'scaled', 'loss', 100))})",
    ),
    ("d64-final-entropy", lambda: f"entropy is {f3(summary(64)[1].entropy)} nats"),
    ("nudge-scaled-same", _nudge_same),
    (
        "nudge-unscaled",
        lambda: f"ends at {f2(nudged_losses()[1])} instead of {f2(summary(64)[1].loss)}",
    ),
]

# Numbers in the section that are settings or arithmetic, not measurements.
NOT_MEASURED = {"4", "8", "300", "64", "0", "10", "20", "16", "32", "128", "256", "100", "1"}


def section() -> str:
    text = PAGE.read_text()
    assert SECTION_START in text, "the demonstration section is missing from the page"
    return text[text.index(SECTION_START) : text.index(SECTION_END)]


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize(("figure", "expected"), PAGE_FIGURES, ids=[f for f, _ in PAGE_FIGURES])
def test_page_figure_is_what_the_computation_gives(
    figure: str, expected: Callable[[], str]
) -> None:
    assert _normalised(expected()) in _normalised(section()), figure


def test_every_number_in_the_section_is_checked() -> None:
    claimed = " ".join(_normalised(expected()) for _, expected in PAGE_FIGURES)
    numbers = set(re.findall(r"\d+(?:\.\d+)?", claimed))
    text = re.sub(r"`[^`]*`", "", section())  # the commands' arguments are not figures
    found = set(re.findall(r"\d+(?:\.\d+)?", text))
    assert found - numbers - NOT_MEASURED == set()


# ---------------------------------------------------------------------------------------
# The include, the script and the page


def test_include_is_self_contained() -> None:
    html = render_to_string("explorables/demonstration.html", {})
    assert '<script type="module" src="/static/explorables/demonstration-widget.mjs">' in html
    assert 'href="/static/explorables/explorables.css"' in html
    assert 'id="demonstration"' in html and 'data-xp="demonstration"' in html
    assert "http://" not in html and "https://" not in html  # nothing from a CDN
    assert "<script>" not in html and "style=" not in html  # the coming CSP allows neither
    for control in re.findall(r"<input[^>]*>", html):
        input_id = re.search(r'id="([^"]+)"', control).group(1)
        assert f'<label for="{input_id}"' in html
        if 'type="range"' in control:
            assert "aria-valuetext=" in control


NOJS_FIGURES: list[tuple[str, Callable[[], str]]] = [
    ("scaled-loss", lambda: f"loss of {f3(summary(64)[0].loss)} and retrieves"),
    ("scaled-retrieved", lambda: f"retrieves {pc(summary(64)[0].accuracy)} of the values"),
    ("unscaled-loss", lambda: f"stuck at a loss of {f2(summary(64)[1].loss)}"),
    ("unscaled-retrieved", lambda: f"and retrieves {pc(summary(64)[1].accuracy)},"),
    ("unscaled-entropy", lambda: f"entropy is {f3(summary(64)[1].entropy)} nats"),
    (
        "gradients",
        lambda: f"W<sub>Q</sub> is {T.format_sci(summary(64)[1].grad_q)} against "
        f"{T.format_sci(summary(64)[0].grad_q)} with the scale",
    ),
]


@pytest.mark.parametrize(("figure", "expected"), NOJS_FIGURES, ids=[f for f, _ in NOJS_FIGURES])
def test_no_javascript_text_quotes_the_computation(
    figure: str, expected: Callable[[], str]
) -> None:
    html = render_to_string("explorables/demonstration.html", {})
    nojs = re.search(r'<p class="xp-nojs[^"]*">(.*?)</p>', html, re.S).group(1)
    assert _normalised(expected()) in _normalised(nojs), figure


def test_the_script_prints_both_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert T.main(["--d-k", "64", "--seed", "0"]) == 0
    printed = capsys.readouterr().out
    s, u = summary(64)
    assert f"loss {f3(s.loss)} (÷√d_k) vs {f3(u.loss)} (none)" in printed
    assert "Without the scale the model stalls at d_k = 64." in printed
    # The table ends with the run's end as the sentence gives it: one set of final numbers.
    (end,) = [line for line in printed.splitlines() if line.startswith(f"last {T.LAST}")]
    assert end.split()[2:4] == [f3(s.loss), f3(u.loss)]
    assert len([line for line in printed.splitlines() if re.match(r"\s+\d+ ", line)]) == len(
        T.REPORT_STEPS
    )


def test_the_script_says_when_the_unscaled_head_learns(capsys: pytest.CaptureFixture[str]) -> None:
    T.main(["--d-k", "16", "--seed", "0"])
    assert "Without the scale the model learns at d_k = 16." in capsys.readouterr().out


def test_the_script_runs_as_a_module() -> None:
    run = subprocess.run(
        [
            str(ROOT / ".venv/bin/python"),
            "-m",
            "explorables.train_demo",
            "--d-k",
            "32",
            "--steps",
            "30",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "d_k = 32, seed 0: 30 SGD steps" in run.stdout


@pytest.mark.django_db
def test_the_explainer_page_shows_the_demonstration(client, seed_content: None) -> None:
    response = client.get(reverse("questions:explainer"))
    assert "explorables/demonstration.html" in [t.name for t in response.templates]
    body = response.content.decode()
    assert 'id="demonstration"' in body
    assert body.index("Watch it stall") < body.index('id="demonstration"')


def test_the_vectorised_generator_is_the_scalar_one() -> None:
    from explorables.prng import mix_seed, mulberry32, mulberry32_block

    for seed in (0, 1, mix_seed(7, 3), 0xFFFFFFFF):
        scalar = mulberry32(seed)
        np.testing.assert_array_equal(
            mulberry32_block(seed, 500), np.array([scalar() for _ in range(500)])
        )
    # mix_seed is compute.mjs's mixSeed: the value node printed for mixSeed(3, 1, 64).
    assert mix_seed(3, 1, 64) == 2163699600
