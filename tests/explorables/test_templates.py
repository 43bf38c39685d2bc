"""The includes render on their own (no context, no view) and read well without JavaScript."""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.template.loader import render_to_string

from grader.engine.reference import attention, attention_weights
from tests.explorables.sample_plots import sample_plots

INCLUDES = ["variance", "saturation", "sqrt_vs_d", "judges", "worked_example"]


@pytest.mark.parametrize("name", INCLUDES)
def test_include_is_self_contained(name: str) -> None:
    html = render_to_string(f"explorables/{name}.html", {})
    assert '<script type="module" src="/static/explorables/widgets.mjs"></script>' in html
    assert 'href="/static/explorables/explorables.css"' in html
    assert "data-xp=" in html
    assert "http://" not in html and "https://" not in html  # nothing from a CDN
    for slider in re.findall(r"<input[^>]*type=\"range\"[^>]*>", html):
        assert "aria-valuetext=" in slider
        input_id = re.search(r'id="([^"]+)"', slider).group(1)
        assert f'<label for="{input_id}"' in html


def _matrix(html: str, name: str) -> np.ndarray:
    table = re.search(rf'data-out-matrix="{name}".*?</table>', html, re.S).group(0)
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
    return np.array([[float(c) for c in re.findall(r"<td>([^<]*)</td>", r)] for r in rows])


def test_worked_example_server_rendered_numbers_are_right() -> None:
    html = render_to_string("explorables/worked_example.html", {})
    Q = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 1, 0]], dtype=float)
    K = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]], dtype=float)
    V = np.array([[1, 0], [0, 1], [1, 1]], dtype=float)
    np.testing.assert_array_equal(_matrix(html, "scores"), Q @ K.T)
    np.testing.assert_array_equal(_matrix(html, "scaled"), Q @ K.T / 2)
    np.testing.assert_allclose(_matrix(html, "weights"), attention_weights(Q, K), atol=5e-4)
    np.testing.assert_allclose(_matrix(html, "output"), attention(Q, K, V), atol=5e-4)
    assert "the sum is 5.367" in html
    assert len(re.findall(r'<input type="number"', html)) == 12


def test_submission_plots_render_tables_without_javascript() -> None:
    plots = sample_plots("attention", "missing-scale")
    html = render_to_string("explorables/submission_plots.html", {"plots": plots})
    assert 'id="plots-data"' in html
    assert "/static/explorables/plots.js" in html
    assert html.count("<table") == 3  # student and reference weights, the curve
    assert ">q6<" in html and ">512<" in html
    ref_first = f"{plots['example']['reference'][0][0]:.3f}"
    assert f"<td>{ref_first}</td>" in html


def test_submission_plots_render_nothing_without_plots() -> None:
    assert render_to_string("explorables/submission_plots.html", {"plots": {}}).strip() == ""
    assert render_to_string("explorables/submission_plots.html", {}).strip() == ""


def test_submission_plots_of_a_failing_function_explain_why() -> None:
    html = render_to_string(
        "explorables/submission_plots.html", {"plots": sample_plots("attention", "error")}
    )
    assert "ValueError: shapes not aligned" in html


def test_submission_plots_render_the_vanishing_gradient_without_javascript() -> None:
    plots = sample_plots("softmax_backward", "backward-vanishing-hidden")
    html = render_to_string("explorables/submission_plots.html", {"plots": plots})
    assert 'data-section="vanishing"' in html and 'data-chart="vanishing"' in html
    assert html.count("<table") == 3  # student and reference gradients, the curve
    reference_last = plots["vanishing"]["reference"][-1]
    assert reference_last < 1e-30 and f"<td>{reference_last:.2e}</td>" in html
    clipped_last = plots["vanishing"]["student"][-1]
    assert clipped_last > 1e-8 and f"<td>{clipped_last:.2e}</td>" in html


def test_submission_plots_render_the_attention_backward_dq_curve() -> None:
    plots = sample_plots("attention_backward", "backward-scale-dropped")
    html = render_to_string("explorables/submission_plots.html", {"plots": plots})
    assert 'data-section="vanishing"' in html and "The largest entry of dQ" in html
    assert html.count("<table") == 3  # student and reference dQ, the curve
    dropped, reference = plots["vanishing"]["student"][0], plots["vanishing"]["reference"][0]
    assert dropped == pytest.approx(reference * 8**0.5, rel=1e-3)
    assert f"<td>{dropped:.2e}</td>" in html
