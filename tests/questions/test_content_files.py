"""The content files (questions/content/) and their reader: no database, no Django."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from questions import content_files as cf

README = cf.CONTENT_DIR / "README.md"

# Slugs other tools and databases rely on (links, the grader's misconceptions, eval sets).
# Adding a key point or a wrong answer is fine; renaming or removing one is not.
STABLE_QUESTIONS = {
    "why-divide-before-softmax": {
        "key_points": [
            "variance-grows",
            "softmax-saturates",
            "gradients-vanish",
            "scale-restores-unit-variance",
            "fu-saturates",
            "fu-tiny-gradients",
            "fu-no-error",
            "fu-projections-absorb",
            "fu-initial-scale",
        ],
        "wrong_answers": [
            "sums-to-one",
            "larger-learning-rate",
            "scale-values",
            "divide-by-dk",
            "sequence-length",
            "fp16-overflow",
            "scale-invariant",
        ],
        "follow_ups": ["shape", "text", "text", "number"],
    },
    "scaled-dot-product-attention-by-hand": {
        "key_points": [
            "formula",
            "variance-grows",
            "softmax-saturates",
            "gradients-vanish",
            "fu-over-shrinks",
            "fu-near-uniform",
            "fu-learned-or-tuned",
            "fu-qk-norm",
        ],
        "wrong_answers": ["modelling-choice"],
        "follow_ups": ["number", "text", "text", "choice"],
    },
    "why-divide-before-mixing": {
        "key_points": [
            "variance-grows",
            "softmax-saturates",
            "gradients-vanish",
            "scale-restores-unit-variance",
            "fu-saturates",
            "fu-training-struggles",
        ],
        "wrong_answers": ["new-idea-about-meaning"],
        "follow_ups": ["text", "choice", "choice"],
    },
    "which-dimension-in-multi-head": {
        "key_points": ["head-width", "divide-by-eight", "per-head-softmax"],
        "wrong_answers": ["model-width", "sequence-length"],
        "follow_ups": ["number", "number", "choice"],
    },
    "why-root-dk-not-dk": {
        "key_points": ["variance-grows", "over-shrinks", "near-uniform"],
        "wrong_answers": ["dk-is-safer", "any-constant"],
        "follow_ups": ["number", "choice", "choice"],
    },
    "what-flashattention-changes": {
        "key_points": ["same-maths", "tiles", "no-score-matrix"],
        "wrong_answers": ["flash-approximates", "flash-drops-scale"],
        "follow_ups": ["shape", "choice", "choice"],
    },
    "is-the-scale-ever-different": {
        "key_points": ["learned-or-folded", "mup-one-over-d", "qk-norm"],
        "wrong_answers": ["always-root-dk", "mup-for-speed"],
        "follow_ups": ["choice", "choice", "choice"],
    },
    "why-scale-at-initialisation": {
        "key_points": ["projections-absorb", "matters-at-initialisation", "gradients-vanish"],
        "wrong_answers": ["changes-capacity", "training-finds-scale"],
        "follow_ups": ["choice", "choice", "number"],
    },
    "incident-loss-flattens": {
        "key_points": ["attention-entropy", "missing-scale", "fix-and-compare"],
        "wrong_answers": ["data-problem", "tune-learning-rate"],
        "follow_ups": ["number", "choice", "choice"],
    },
    "does-the-scale-change-the-winner": {
        "key_points": ["order-kept", "how-soft", "temperature"],
        "wrong_answers": ["changes-the-winner", "changes-nothing"],
        "follow_ups": ["choice", "choice"],
    },
}
STABLE_ROLES = ["inference-engineering", "llm-product-engineering", "ai-data-systems"]
STABLE_PAGES = ["why-divide-by-sqrt-d"]


def all_key_point_slugs(question: cf.QuestionContent) -> list[str]:
    return [kp["slug"] for kp in question["key_points"]] + [
        kp["slug"] for fu in question["follow_ups"] for kp in fu["key_points"]
    ]


# --- The project's content ------------------------------------------------------------------


def test_stable_slugs_are_all_there() -> None:
    bundle = cf.content_bundle()
    # Display order, and the creation order of a fresh database (so its ids).
    assert [q["slug"] for q in bundle.questions] == list(STABLE_QUESTIONS)
    assert [r["slug"] for r in bundle.roles] == STABLE_ROLES
    assert [r["ordering"] for r in bundle.roles] == [0, 1, 2]
    assert [p["slug"] for p in bundle.pages] == STABLE_PAGES
    for slug, stable in STABLE_QUESTIONS.items():
        question = bundle.question(slug)
        assert set(stable["key_points"]) <= set(all_key_point_slugs(question)), slug
        assert set(stable["wrong_answers"]) <= {w["slug"] for w in question["wrong_answers"]}
        # Follow-ups are matched by position (eval sets say "follow-up:<ordering>").
        assert [fu["check_kind"] for fu in question["follow_ups"]] == stable["follow_ups"]


def test_question_fields_as_the_models_store_them() -> None:
    bundle = cf.content_bundle()
    q003 = bundle.question("why-divide-before-softmax")
    assert q003["roles"] == STABLE_ROLES
    assert (q003["level"], q003["ordering"]) == ("L2", 10)
    assert q003["exercise_slugs"] == [
        "scaled-dot-product-attention",
        "multi-head-attention",
        "stable-softmax",
        "softmax-backward",
        "scaling-demonstration",
        "attention-backward",
    ]
    assert q003["follow_ups"][0]["expected_shape"] == "(n, n)"
    last = q003["follow_ups"][3]
    assert (last["expected_number"], last["tolerance"]) == (64.0, 0.0)
    assert isinstance(last["expected_number"], float) and isinstance(last["tolerance"], float)
    q002 = bundle.question("scaled-dot-product-attention-by-hand")
    first = q002["follow_ups"][0]
    assert (first["expected_number"], first["tolerance"]) == (0.506, 0.001)
    flash = q002["follow_ups"][3]
    assert flash["correct_choice"] in flash["choices"] and len(flash["choices"]) == 3
    assert "T \u00d7 T score matrix" in flash["correct_choice"]
    # A backslash in a TOML literal string is a backslash: LaTeX and regexes arrive intact.
    assert "$\\sqrt{d_k}$" in q003["key_points"][0]["label"]
    assert "saturat\\w*" in q003["key_points"][1]["patterns"].splitlines()


def test_text_fields_have_no_stray_whitespace() -> None:
    bundle = cf.content_bundle()
    for question in bundle.questions:
        for field in ("title", "prompt", "short_answer"):
            assert question[field] == question[field].strip(), (question["slug"], field)
        assert question["full_answer"].endswith("\n")
        assert not question["full_answer"].endswith("\n\n")
        assert not question["full_answer"].startswith("\n")
        # One paragraph, one line: the key-point patterns are matched against it.
        assert "\n" not in question["short_answer"]
        for item in question["key_points"] + question["wrong_answers"]:
            lines = item["patterns"].split("\n") if item["patterns"] else []
            assert all(line.strip() for line in lines), (question["slug"], item["slug"])
    page = bundle.page("why-divide-by-sqrt-d")
    assert page["lead"] == page["lead"].strip() and page["body"].endswith(".\n")


def test_every_pattern_compiles() -> None:
    for question in cf.content_bundle().questions:
        points = question["key_points"] + [
            kp for fu in question["follow_ups"] for kp in fu["key_points"]
        ]
        for item in points + question["wrong_answers"]:
            for line in item["patterns"].splitlines():
                re.compile(line)


# --- The reader's errors ---------------------------------------------------------------------

QUESTION = """\
+++
slug = "q"
title = 'A question'
level = "L1"
roles = ["r"]

[[key_points]]
slug = "kp"
label = 'A point'
patterns = '''
point
'''

[[follow_ups]]
level = "L2"
check_kind = "text"
prompt = 'Why?'
expected_answer = 'Because.'

[[follow_ups.key_points]]
slug = "fu-kp"
label = 'Because'
patterns = '''
because
'''

[[follow_ups]]
level = "L3"
check_kind = "number"
prompt = 'How many?'
expected_answer = '64'
expected_number = 64

[[wrong_answers]]
slug = "wa"
statement = 'Wrong.'
rebuttal = 'No.'
+++

# Prompt

Prompt text.

# Short answer

Short text.

# Full answer

## Part

```python
# a comment, not a section
x = 1
```
"""

PAGE = """\
+++
slug = "p"
title = 'A page'
+++
# Lead
Lead.
# Body
Body.
"""


@pytest.fixture
def content_dir(tmp_path: Path) -> Path:
    (tmp_path / "pages").mkdir()
    (tmp_path / cf.ROLES_FILE).write_text('[[roles]]\nslug = "r"\nname = "R"\n')
    (tmp_path / "q.md").write_text(QUESTION)
    (tmp_path / "pages" / "p.md").write_text(PAGE)
    return tmp_path


def test_a_minimal_directory_reads(content_dir: Path) -> None:
    bundle = cf.content_read(content_dir)
    question = bundle.question("q")
    assert question["prompt"] == "Prompt text."
    assert question["full_answer"] == (
        "## Part\n\n```python\n# a comment, not a section\nx = 1\n```\n"
    )
    assert question["ordering"] == 0 and question["exercise_slugs"] == []
    assert question["key_points"] == [{"slug": "kp", "label": "A point", "patterns": "point"}]
    text_fu, number_fu = question["follow_ups"]
    assert text_fu["key_points"][0]["slug"] == "fu-kp" and text_fu["expected_number"] is None
    assert number_fu["expected_number"] == 64.0 and number_fu["key_points"] == []
    assert question["wrong_answers"][0]["patterns"] == ""
    assert bundle.page("p") == {"slug": "p", "title": "A page", "lead": "Lead.", "body": "Body.\n"}
    with pytest.raises(KeyError):
        bundle.question("nope")


def test_the_readme_example_is_a_valid_file(content_dir: Path) -> None:
    example = re.search(r"```markdown\n(.*?)\n```\n", README.read_text(), re.DOTALL)
    assert example is not None
    (content_dir / cf.ROLES_FILE).write_text(
        '[[roles]]\nslug = "inference-engineering"\nname = "I"\n'
    )
    (content_dir / "q.md").unlink()
    (content_dir / "why-divide-before-softmax.md").write_text(example[1] + "\n")
    question = cf.content_read(content_dir).question("why-divide-before-softmax")
    assert question["follow_ups"][0]["key_points"][0]["slug"] == "fu-no-error"
    assert question["key_points"][0]["patterns"] == "saturat\\w*\none[- ]hot"


def replace(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


BROKEN_QUESTIONS = {
    "no front matter": (replace("+++\nslug", "slug"), "front matter: " + cf.NO_FRONT_MATTER),
    "unclosed": (replace("+++\n\n# Prompt", "\n# Prompt"), cf.UNCLOSED_FRONT_MATTER),
    "bad toml": (replace('level = "L1"', "level = L1"), "front matter: not valid TOML"),
    "missing field": (replace("title = 'A question'\n", ""), "title: " + cf.MISSING_FIELD),
    "unknown field": (replace('level = "L1"', 'level = "L1"\ncolour = 1'), "colour: unknown"),
    "wrong type": (
        replace('level = "L1"', 'level = "L1"\nordering = "ten"'),
        "ordering: " + cf.WRONG_TYPE.format(expected="a whole number", got="ten"),
    ),
    "slug is not the file name": (
        replace('slug = "q"', 'slug = "other"'),
        "slug: " + cf.SLUG_NOT_FILE_NAME.format(slug="other", stem="q"),
    ),
    "unknown role": (
        replace('roles = ["r"]', 'roles = ["nope"]'),
        "roles: " + cf.UNKNOWN_ROLE.format(slug="nope", roles_file=cf.ROLES_FILE),
    ),
    "bad level": (
        replace('level = "L1"', 'level = "L4"'),
        "level: " + cf.BAD_LEVEL.format(levels="L1, L2, L3", value="L4"),
    ),
    "bad check kind": (
        replace('check_kind = "text"', 'check_kind = "essay"'),
        "follow_ups[0].check_kind: must be one of",
    ),
    "field of another kind": (
        replace("expected_answer = 'Because.'", "expected_answer = 'Because.'\ntolerance = 1"),
        "follow_ups[0].tolerance: "
        + cf.FIELD_NOT_FOR_KIND.format(kind="number", check_kind="text"),
    ),
    "number without its number": (
        replace("expected_number = 64\n", ""),
        "follow_ups[1].expected_number: " + cf.NEEDS_FIELD_FOR_KIND.format(check_kind="number"),
    ),
    "bad regex": (
        replace("because\n", "because\n(unclosed\n"),
        "follow_ups[0].key_points[0].patterns: line 2 is not a valid regular expression",
    ),
    "catastrophic regex": (
        replace("because\n", "because\n^(a+)+$\n"),
        "follow_ups[0].key_points[0].patterns: "
        + cf.CATASTROPHIC_PATTERN.format(line=2, pattern="^(a+)+$"),
    ),
    "duplicate key point slug": (
        replace('slug = "fu-kp"', 'slug = "kp"'),
        "key_points: " + cf.DUPLICATE_SLUG.format(slug="kp"),
    ),
    "empty text": (replace("prompt = 'Why?'", "prompt = ' '"), "prompt: " + cf.EMPTY_TEXT),
    "missing section": (
        replace("# Short answer\n\nShort text.\n", ""),
        "body: " + cf.MISSING_SECTION.format(name="Short answer"),
    ),
    "unknown section": (
        replace("# Short answer", "# Summary"),
        "body: unknown section '# Summary'",
    ),
    "duplicate section": (
        replace("# Full answer", "# Prompt\n\nAgain.\n\n# Full answer"),
        "body: " + cf.DUPLICATE_SECTION.format(name="Prompt"),
    ),
    "text before the sections": (
        replace("+++\n\n# Prompt", "+++\nStray.\n# Prompt"),
        f"line {QUESTION.split(chr(10)).index('+++', 1) + 2}: "
        + cf.TEXT_BEFORE_SECTION.format(first="Prompt"),
    ),
}


@pytest.mark.parametrize("name", BROKEN_QUESTIONS)
def test_a_broken_question_file_names_the_file_and_the_field(content_dir: Path, name: str) -> None:
    edit, message = BROKEN_QUESTIONS[name]
    path = content_dir / "q.md"
    path.write_text(edit(QUESTION))
    with pytest.raises(cf.ContentError) as caught:
        cf.content_read(content_dir)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_a_choice_follow_up_needs_its_answer_among_the_choices(content_dir: Path) -> None:
    choice = (
        '[[follow_ups]]\nlevel = "L1"\ncheck_kind = "choice"\nprompt = \'Which?\'\n'
        "expected_answer = 'A'\nchoices = ['A', 'B']\ncorrect_choice = 'C'\n\n[[wrong_answers]]"
    )
    (content_dir / "q.md").write_text(QUESTION.replace("[[wrong_answers]]", choice))
    with pytest.raises(cf.ContentError, match=r"follow_ups\[2\]\.correct_choice: must be one"):
        cf.content_read(content_dir)


def test_broken_roles_and_pages_are_named_too(content_dir: Path) -> None:
    roles = content_dir / cf.ROLES_FILE
    roles.write_text('[[roles]]\nslug = "r"\n')
    with pytest.raises(cf.ContentError, match=re.escape(f"{roles}: roles[0].name: required")):
        cf.content_read(content_dir)
    roles.write_text('[[roles]]\nslug = "r"\nname = "R"\n')
    page = content_dir / "pages" / "p.md"
    page.write_text(PAGE.replace("# Lead", "# Intro"))
    with pytest.raises(cf.ContentError, match=re.escape(f"{page}: body: unknown section")):
        cf.content_read(content_dir)
    shutil.rmtree(content_dir)
    with pytest.raises(cf.ContentError, match="not a content directory"):
        cf.content_read(content_dir)


def test_a_shared_pattern_set_expands_where_it_is_named(content_dir: Path) -> None:
    (content_dir / cf.PATTERN_SETS_FILE).write_text(
        "[[sets]]\nname = \"shared\"\npatterns = '''\nalpha\nbeta\n'''\n"
    )
    path = content_dir / "q.md"
    path.write_text(
        path.read_text().replace("patterns = '''\npoint\n", "patterns = '''\n@shared\npoint\n", 1)
    )
    question = cf.content_read(content_dir).question("q")
    assert question["key_points"][0]["patterns"] == "alpha\nbeta\npoint"
    path.write_text(path.read_text().replace("@shared", "@missing"))
    with pytest.raises(cf.ContentError, match="unknown pattern set 'missing'"):
        cf.content_read(content_dir)


def test_the_shared_key_points_read_one_set_in_every_question() -> None:
    bundle = cf.content_bundle()
    by_slug: dict[str, set[str]] = {}
    for question in bundle.questions:
        for point in question["key_points"]:
            by_slug.setdefault(point["slug"], set()).add(point["patterns"])
    for slug in ("variance-grows", "softmax-saturates", "gradients-vanish"):
        assert len(by_slug[slug]) == 1, slug  # the same lines wherever the idea is asked


def test_known_wrong_answers_are_read_and_checked(content_dir: Path) -> None:
    number = "expected_number = 64\n"
    known = number + "\n[follow_ups.known_wrong]\n'512' = 'd_model, the model width.'\n"
    (content_dir / "q.md").write_text(QUESTION.replace(number, known))
    number_fu = cf.content_read(content_dir).question("q")["follow_ups"][1]
    assert number_fu["known_wrong"] == {"512": "d_model, the model width."}
    choice = (
        '[[follow_ups]]\nlevel = "L1"\ncheck_kind = "choice"\nprompt = \'Which?\'\n'
        "expected_answer = 'A'\nchoices = ['A', 'B']\ncorrect_choice = 'A'\n"
        "[follow_ups.known_wrong]\n'C' = 'not an option.'\n\n[[wrong_answers]]"
    )
    (content_dir / "q.md").write_text(QUESTION.replace("[[wrong_answers]]", choice))
    with pytest.raises(cf.ContentError, match=r"follow_ups\[2\]\.known_wrong: must name a wrong"):
        cf.content_read(content_dir)
    text = "expected_answer = 'Because.'\n"
    (content_dir / "q.md").write_text(
        QUESTION.replace(text, text + "[follow_ups.known_wrong]\n'x' = 'y'\n", 1)
    )
    with pytest.raises(cf.ContentError, match="known_wrong: " + cf.KNOWN_WRONG_NOT_FOR_TEXT):
        cf.content_read(content_dir)


def test_every_shipped_wrong_choice_says_why() -> None:
    for question in cf.content_bundle().questions:
        for follow_up in question["follow_ups"]:
            if follow_up["check_kind"] == "choice":
                wrong = set(follow_up["choices"]) - {follow_up["correct_choice"]}
                assert set(follow_up["known_wrong"]) == wrong, question["slug"]
