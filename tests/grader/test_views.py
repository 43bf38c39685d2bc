"""grader.views: the exercise pages and the misconceptions page, as anyone sees them."""

import pytest
from django.urls import reverse

from grader.models import Exercise

pytestmark = pytest.mark.django_db

SIGNATURES = {
    "scaled-dot-product-attention": "def attention(Q, K, V, mask=None):",
    "multi-head-attention": "def multi_head_attention(X, W_q, W_k, W_v, W_o, n_heads, mask=None):",
    "stable-softmax": "def softmax(x, axis=-1):",
}


def test_exercise_pages_render_contract_and_link_back(client):
    response = client.get(reverse("grader:exercise-list"))
    assert response.status_code == 200
    for slug in SIGNATURES:
        assert f"/exercises/{slug}/" in response.content.decode()
    response = client.get(
        reverse("grader:exercise-detail", kwargs={"slug": "multi-head-attention"})
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "/questions/why-divide-before-softmax/" in html
    assert "<h3" in html and "What the hidden checks test" in html  # Markdown rendered
    assert "def multi_head_attention(" in html
    assert 'id="submit-heading"' in html or "submit" in html
    assert client.get("/exercises/nope/").status_code == 404


def test_unpublished_exercise_is_hidden(client):
    Exercise.objects.filter(slug="stable-softmax").update(is_published=False)
    assert client.get("/exercises/stable-softmax/").status_code == 404


def test_statement_is_sanitised(client):
    Exercise.objects.filter(slug="stable-softmax").update(
        statement="Hi <script>alert(1)</script> $x_i$ and **bold**"
    )
    html = client.get("/exercises/stable-softmax/").content.decode()
    assert "<script>alert(1)" not in html
    assert "<strong>bold</strong>" in html and "$x_i$" in html


def test_every_misconception_has_a_section_at_its_anchor_open_to_anyone(client):
    from common.rendering import render_inline
    from grader.engine.misconceptions import CODES, EXPLANATIONS_PATH, MISCONCEPTIONS

    assert reverse("grader:misconception-list") == EXPLANATIONS_PATH
    page = client.get(EXPLANATIONS_PATH)  # anonymous: no interview gate before it
    assert page.status_code == 200
    html = page.content.decode()
    for code in CODES:
        m = MISCONCEPTIONS[code]
        assert f'id="{m.anchor}"' in html and f'href="#{m.anchor}"' in html
        assert render_inline(m.title) in html  # the title's Markdown (`K.T`), rendered
