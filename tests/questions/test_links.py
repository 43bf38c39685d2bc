"""Every internal link on the site resolves, and every #anchor exists on its target page.

Crawls the rendered pages with the Django test client, as a visitor, a student with a graded
submission (verdict, history) and an instructor (the question pages revealed through the
preview, the staff lists): every href starting with / returns 200, or a redirect to the login
page, and every fragment is an id on the page it points at. Also the content's own Markdown
links, and the teaching promises that are about links.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urldefrag, urlsplit

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

from grader.engine.misconceptions import CODES, MISCONCEPTIONS
from grader.models import Exercise, Submission
from questions.content_files import content_bundle
from tests.factories import student_create, submission_create

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
# Forms' targets and actions are not pages to read; logout is a POST.
SKIP_PREFIXES = ("/accounts/logout/", "/admin/")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        if tag in ("a", "link") and a.get("href"):
            self.hrefs.append(a["href"] or "")
        if tag == "script" and a.get("src"):
            self.hrefs.append(a["src"] or "")


def parse(html: str) -> _Links:
    p = _Links()
    p.feed(html)
    return p


class Crawler:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.pages: dict[str, _Links] = {}
        self.broken: list[str] = []

    def page(self, path: str) -> _Links | None:
        if path not in self.pages:
            response = self.client.get(path)
            if response.status_code in (301, 302) and response["Location"].startswith(LOGIN):
                self.pages[path] = _Links()  # behind the login: fine, nothing to read
            elif response.status_code != 200:
                self.broken.append(f"{path}: {response.status_code}")
                self.pages[path] = _Links()
            elif "html" in response.get("Content-Type", ""):
                self.pages[path] = parse(response.content.decode())
            else:
                self.pages[path] = _Links()
        return self.pages[path]

    def check(self, start: list[str], depth: int = 2) -> list[str]:
        frontier = list(start)
        for _ in range(depth + 1):
            following: list[str] = []
            for source in frontier:
                links = self.page(source)
                for href in links.hrefs:
                    following += self._follow(source, href, links)
            frontier = [p for p in dict.fromkeys(following) if p not in self.pages]
        return self.broken

    def _follow(self, source: str, href: str, here: _Links) -> list[str]:
        url, fragment = urldefrag(href)
        if href.startswith("#"):
            if fragment and fragment not in here.ids:
                self.broken.append(f"{source}: #{fragment} is not on the page")
            return []
        if not url.startswith("/") or url.startswith("//"):
            return []  # external (checked by hand) or relative (none on this site)
        path = urlsplit(url).path
        if path.startswith("/static/"):
            if not finders.find(path.removeprefix("/static/")):
                self.broken.append(f"{source}: {path} is not a static file")
            return []
        if path.startswith(SKIP_PREFIXES):
            return []
        target = self.page(url)
        if fragment and fragment not in target.ids and target.hrefs:
            self.broken.append(f"{source}: {href}: no id {fragment!r} on {url}")
        return [url]


@pytest.fixture
def student(seed_content: None):
    return student_create(username="linky", password="linky-pass-123")


@pytest.fixture
def graded(student) -> Submission:
    """A failed submission diagnosed with every code, so the verdict links to every section."""
    exercise = Exercise.objects.filter(is_published=True).order_by("order").first()
    return submission_create(
        user=student,
        exercise=exercise,
        code="def attention(Q, K, V, mask=None):\n    return V\n",
        status=Submission.Status.FAILED,
        score=0.0,
        diagnosis=list(CODES),
        message="Your output is wrong at d_k = 4, 16.",
        seed=1,
    )


def public_pages() -> list[str]:
    bundle = content_bundle()
    pages = ["/", "/questions/", "/explainer/", "/exercises/", "/misconceptions/"]
    pages += [f"/questions/{q['slug']}/" for q in bundle.questions]
    pages += [f"/exercises/{e.slug}/" for e in Exercise.objects.filter(is_published=True)]
    return pages


def test_every_link_of_the_public_pages_resolves(client, seed_content) -> None:
    assert Crawler(client).check(public_pages()) == []


def test_every_link_of_a_verdict_and_the_history_resolves(client, graded) -> None:
    client.force_login(graded.user)
    history = reverse("submissions:history", kwargs={"slug": graded.exercise.slug})
    start = [reverse("submissions:detail", kwargs={"pk": graded.pk}), history]
    assert Crawler(client).check(start, depth=1) == []


def test_every_link_of_the_revealed_answers_and_staff_lists_resolves(
    client, graded, instructor
) -> None:
    client.force_login(instructor)
    start = [f"/questions/{q['slug']}/preview/" for q in content_bundle().questions]
    start += ["/staff/submissions/", "/staff/misconceptions/"]
    assert Crawler(client).check(start, depth=1) == []


_MD_LINK = re.compile(r"\]\((/[^)\s]*)\)")


def content_texts() -> list[tuple[str, str]]:
    bundle = content_bundle()
    texts = [
        (bundle.page("why-divide-by-sqrt-d")["slug"], bundle.page("why-divide-by-sqrt-d")["body"])
    ]
    for q in bundle.questions:
        parts = [q.get("prompt", ""), q.get("short_answer", ""), q.get("full_answer", "")]
        parts += [w.get("rebuttal", "") for w in q.get("wrong_answers", [])]
        parts += [f.get("expected_answer", "") for f in q.get("follow_ups", [])]
        texts.append((q["slug"], "\n".join(parts)))
    return texts


def test_the_contents_markdown_links_resolve(client, seed_content, instructor) -> None:
    client.force_login(instructor)  # the answers' links are in the revealed part
    crawler = Crawler(client)
    found = 0
    for slug, text in content_texts():
        for href in _MD_LINK.findall(text):
            found += 1
            url, fragment = urldefrag(href)
            target = crawler.page(url)
            assert fragment == "" or fragment in target.ids, f"{slug}: {href}"
    assert crawler.broken == []
    assert found >= 8  # the answers link the site's own sections


# --- the links the answers promise -----------------------------------------------------


def test_a_verdict_links_every_code_to_its_explanation_open_to_anyone(client, graded) -> None:
    client.force_login(graded.user)
    verdict = client.get(reverse("submissions:detail", kwargs={"pk": graded.pk})).content.decode()
    anonymous = Client().get("/misconceptions/").content.decode()
    ids = parse(anonymous).ids
    for code in CODES:
        m = MISCONCEPTIONS[code]
        assert f'href="/misconceptions/#{m.anchor}"' in verdict, code
        assert m.anchor in ids, code
    assert 'href="/explainer/#demonstration"' in verdict  # missing-scale's next step


def test_the_verdict_and_the_page_show_the_rebuttal_itself(client, graded) -> None:
    from questions.models import WrongAnswer

    client.force_login(graded.user)
    verdict = client.get(reverse("submissions:detail", kwargs={"pk": graded.pk})).content.decode()
    page = Client().get("/misconceptions/").content.decode()
    for m in MISCONCEPTIONS.values():
        if not m.wrong_answer_slug:
            continue
        wa = WrongAnswer.objects.get(
            question__slug="why-divide-before-softmax", slug=m.wrong_answer_slug
        )
        first_words = re.sub(r"\$[^$]*\$", "", wa.rebuttal).split(".")[0][:40]
        assert first_words in verdict and first_words in page, m.code
    # The question page keeps its reveal gate for a candidate who has not answered.
    question = Client().get("/questions/why-divide-before-softmax/").content.decode()
    wa = WrongAnswer.objects.get(question__slug="why-divide-before-softmax", slug="scale-values")
    assert wa.rebuttal.split(".")[0][:40] not in question


def test_history_and_staff_lists_name_codes_and_link_them(client, graded, instructor) -> None:
    client.force_login(graded.user)
    history = client.get(
        reverse("submissions:history", kwargs={"slug": graded.exercise.slug})
    ).content.decode()
    client.force_login(instructor)
    staff = client.get("/staff/submissions/").content.decode()
    analytics = client.get("/staff/misconceptions/").content.decode()
    for html in (history, staff, analytics):
        for code in ("missing-scale", "scale-by-d"):
            m = MISCONCEPTIONS[code]
            assert f'href="/misconceptions/#{m.anchor}"' in html
            assert m.title.replace("'", "&#x27;") in html
    assert "missing-scale, scale-by-d" not in history + staff  # names, not a list of slugs


def test_the_api_diagnosis_carries_label_and_explanation_url(client, graded) -> None:
    client.force_login(graded.user)
    data = client.get(f"/api/submissions/{graded.pk}/").json()
    items = {d["code"]: d for d in data["diagnosis"]}
    assert set(items) == set(CODES)
    for code, d in items.items():
        assert d["label"] == MISCONCEPTIONS[code].title
        assert d["explanation_url"] == f"/misconceptions/#misconception-{code}"
    assert items["scale-by-d"]["rebuttal"].startswith("It shrinks the scores too far")
    assert "rebuttal_html" not in items["scale-by-d"]


def test_exercise_pages_do_not_all_claim_to_be_the_demonstration(client, seed_content) -> None:
    for e in Exercise.objects.filter(is_published=True):
        html = client.get(f"/exercises/{e.slug}/").content.decode()
        assert "is the ten-minute demonstration" not in html
        assert 'href="/explainer/#demonstration"' in html
