"""Read the seed content from `questions/content/`: Markdown files with TOML front matter.

Pure: no Django imports, so the loader is tested without a database and the data migration
can use it with historical models (see `questions.content_loading`). The format is described
in `questions/content/README.md`; in short, every question file is

    +++
    <TOML: slug, title, level, ordering, roles, exercise_slugs,
     [[key_points]], [[follow_ups]] (with [[follow_ups.key_points]]), [[wrong_answers]]>
    +++
    # Prompt
    # Short answer
    # Full answer

and a page file (`pages/<slug>.md`) has `slug` and `title` in its front matter and the
sections `# Lead` and `# Body`. Roles live in `roles.toml`. Every problem is raised as a
`ContentError` whose message starts with the file and the field.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from questions.assessment import PATTERN_CATASTROPHIC, pattern_is_catastrophic

CONTENT_DIR = Path(__file__).resolve().parent / "content"
ROLES_FILE = "roles.toml"
# Pattern sets shared by several key points or wrong answers: a line `@name` in a `patterns`
# field stands for the set's lines, so one paraphrase is taught once for every question.
PATTERN_SETS_FILE = "patterns.toml"
SET_LINE = "@"
PAGES_DIR = "pages"

FRONT_MATTER_FENCE = "+++"
LEVELS = ("L1", "L2", "L3")
CHECK_KINDS = ("number", "shape", "choice", "text")
# The follow-up fields that only mean something for one check kind.
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    "number": ("expected_number", "tolerance", "known_wrong"),
    "shape": ("expected_shape", "known_wrong"),
    "choice": ("choices", "correct_choice", "known_wrong"),
    "text": ("key_points",),
}
SLUG_RE = re.compile(r"^[-a-zA-Z0-9_]+$")
# A section starts at a level-1 heading outside a fenced code block; inside a field, use ##
# and deeper headings.
SECTION_RE = re.compile(r"^# (?P<name>.+?)\s*$")
FENCE_RE = re.compile(r"^ {0,3}(```|~~~)")

# Section heading -> field. Document sections keep a final newline, like a file does; the
# others are stored without one (a prompt is a paragraph, not a document).
QUESTION_SECTIONS = {
    "prompt": "prompt",
    "short answer": "short_answer",
    "full answer": "full_answer",
}
PAGE_SECTIONS = {"lead": "lead", "body": "body"}
DOCUMENT_FIELDS = frozenset({"full_answer", "body"})

# User-facing messages (tests assert on them). Every one is prefixed with "<file>: <field>: ".
NO_FRONT_MATTER = f"the file must start with a line {FRONT_MATTER_FENCE}, then TOML front matter"
UNCLOSED_FRONT_MATTER = f"the front matter has no closing {FRONT_MATTER_FENCE} line"
BAD_TOML = "not valid TOML: {error}"
MISSING_FIELD = "required field is missing"
UNKNOWN_FIELD = "unknown field (expected one of: {expected})"
WRONG_TYPE = "expected {expected}, got {got!r}"
EMPTY_TEXT = "must not be empty"
BAD_SLUG = "not a slug (letters, digits, - and _ only): {value!r}"
SLUG_NOT_FILE_NAME = "the slug {slug!r} must match the file name {stem!r}"
DUPLICATE_SLUG = "the slug {slug!r} is used twice in this file"
BAD_LEVEL = "must be one of {levels}, got {value!r}"
BAD_CHECK_KIND = "must be one of {kinds}, got {value!r}"
FIELD_NOT_FOR_KIND = "only a {kind} follow-up has this field (this one is {check_kind})"
NEEDS_FIELD_FOR_KIND = "a {check_kind} follow-up needs this field"
TOO_FEW_CHOICES = "a choice follow-up needs at least two choices"
CHOICE_NOT_LISTED = "must be one of the choices, got {value!r}"
KNOWN_WRONG_NOT_A_CHOICE = "must name a wrong choice, got {value!r}"
KNOWN_WRONG_NOT_FOR_TEXT = "a text follow-up has key points, not known wrong answers"
UNKNOWN_ROLE = "unknown role {slug!r} (roles are defined in {roles_file})"
BAD_PATTERN = "line {line} is not a valid regular expression: {pattern!r} ({error})"
CATASTROPHIC_PATTERN = "line {line}: " + PATTERN_CATASTROPHIC
UNKNOWN_SET = "unknown pattern set {name!r} (sets are defined in {sets_file})"
NO_PATTERNS = "needs at least one pattern (one regular expression per line)"
TEXT_BEFORE_SECTION = "text before the first section heading (# {first})"
UNKNOWN_SECTION = "unknown section '# {name}' (expected: {expected})"
DUPLICATE_SECTION = "the section '# {name}' appears twice"
MISSING_SECTION = "the section '# {name}' is missing"
NO_DIRECTORY = "not a content directory (no {roles_file} in it)"


class ContentError(ValueError):
    """A malformed content file. The message names the file and the field."""


class PatternError(ValueError):
    """A patterns field with an unknown set, a bad or a catastrophic line (named in it)."""


def patterns_expand(value: str, *, sets: dict[str, list[str]]) -> list[str]:
    """The lines a `patterns` field stores: `@name` lines replaced by the set's lines, blank
    lines dropped, every line checked. The content files and the admin both come here, so a
    set means the same in both and an unknown one is refused in both. Raises PatternError."""
    # The blank lines that TOML's ''' delimiters leave around the patterns are not patterns.
    lines = []
    for line in value.split("\n"):
        if not line.strip().startswith(SET_LINE):
            lines += [line.strip()] if line.strip() else []
            continue
        name = line.strip()[len(SET_LINE) :].strip()
        if name not in sets:
            raise PatternError(UNKNOWN_SET.format(name=name, sets_file=PATTERN_SETS_FILE))
        lines += sets[name]
    for number, line in enumerate(lines, start=1):
        try:
            re.compile(line.strip())
        except re.error as exc:
            raise PatternError(BAD_PATTERN.format(line=number, pattern=line, error=exc)) from exc
        if pattern_is_catastrophic(line):
            raise PatternError(CATASTROPHIC_PATTERN.format(line=number, pattern=line.strip()))
    return lines


def pattern_sets() -> dict[str, list[str]]:
    """The project's shared pattern sets (questions/content/patterns.toml), read afresh."""
    return pattern_sets_read(CONTENT_DIR / PATTERN_SETS_FILE)


class KeyPointContent(TypedDict):
    slug: str
    label: str
    patterns: str  # one regular expression per line


class WrongAnswerContent(TypedDict):
    slug: str
    statement: str
    rebuttal: str
    patterns: str


class FollowUpContent(TypedDict):
    level: str
    prompt: str
    expected_answer: str
    check_kind: str
    expected_number: float | None
    tolerance: float
    expected_shape: str
    choices: list[str]
    correct_choice: str
    known_wrong: dict[str, str]  # a foreseen wrong answer -> what it is and why it is wrong
    key_points: list[KeyPointContent]


class QuestionContent(TypedDict):
    slug: str
    title: str
    roles: list[str]
    level: str
    ordering: int
    exercise_slugs: list[str]
    prompt: str
    short_answer: str
    full_answer: str
    key_points: list[KeyPointContent]
    follow_ups: list[FollowUpContent]
    wrong_answers: list[WrongAnswerContent]


class PageContent(TypedDict):
    slug: str
    title: str
    lead: str
    body: str


class RoleContent(TypedDict):
    slug: str
    name: str
    ordering: int


@dataclass(frozen=True)
class ContentBundle:
    """Everything under a content directory, questions in their display order."""

    roles: list[RoleContent]
    questions: list[QuestionContent]
    pages: list[PageContent]

    def question(self, slug: str) -> QuestionContent:
        for question in self.questions:
            if question["slug"] == slug:
                return question
        raise KeyError(f"No question file has the slug {slug!r}.")

    def page(self, slug: str) -> PageContent:
        for page in self.pages:
            if page["slug"] == slug:
                return page
        raise KeyError(f"No page file has the slug {slug!r}.")


# --- Reading one table of the front matter -----------------------------------------------


class _Table:
    """A TOML table being read: every read is checked, and unread keys are reported."""

    def __init__(
        self,
        data: dict[str, Any],
        *,
        source: str,
        where: str,
        sets: dict[str, list[str]] | None = None,
    ) -> None:
        self.data = data
        self.source = source
        self.where = where
        self.sets = sets or {}
        self.read: set[str] = set()

    def error(self, field: str, message: str) -> ContentError:
        return ContentError(f"{self.source}: {self.where}{field}: {message}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, expected: str, types: tuple[type, ...], default: Any = ...) -> Any:
        self.read.add(key)
        if key not in self.data:
            if default is ...:
                raise self.error(key, MISSING_FIELD)
            return default
        value = self.data[key]
        # bool is an int in Python, never a number in this format.
        if not isinstance(value, types) or isinstance(value, bool):
            raise self.error(key, WRONG_TYPE.format(expected=expected, got=value))
        return value

    def text(self, key: str, default: Any = ...) -> str:
        value = self.raw(key, "a string", (str,), default)
        if value is not default and not value.strip():
            raise self.error(key, EMPTY_TEXT)
        return value

    def slug(self, key: str = "slug") -> str:
        value = self.text(key)
        if not SLUG_RE.match(value):
            raise self.error(key, BAD_SLUG.format(value=value))
        return value

    def choice(self, key: str, options: tuple[str, ...], message: str, **names: str) -> str:
        value = self.text(key)
        if value not in options:
            raise self.error(key, message.format(value=value, **names))
        return value

    def level(self) -> str:
        return self.choice("level", LEVELS, BAD_LEVEL, levels=", ".join(LEVELS))

    def number(self, key: str, default: Any = ...) -> float:
        value = self.raw(key, "a number", (int, float), default)
        return value if value is None else float(value)

    def integer(self, key: str, default: Any = ...) -> int:
        value = self.raw(key, "a whole number", (int,), default)
        if value < 0:
            raise self.error(key, WRONG_TYPE.format(expected="a number >= 0", got=value))
        return value

    def strings(self, key: str, default: Any = ...) -> list[str]:
        value = self.raw(key, "a list of strings", (list,), default)
        if any(not isinstance(item, str) for item in value):
            raise self.error(key, WRONG_TYPE.format(expected="a list of strings", got=value))
        return list(value)

    def patterns(self, key: str = "patterns", *, required: bool = True) -> str:
        value = self.raw(
            key, "a string of regular expressions", (str,), "" if not required else ...
        )
        try:
            lines = patterns_expand(value, sets=self.sets)
        except PatternError as exc:
            raise self.error(key, str(exc)) from exc
        if required and not lines:
            raise self.error(key, NO_PATTERNS)
        return "\n".join(lines)

    def known_wrong(self, key: str = "known_wrong") -> dict[str, str]:
        """A table of foreseen wrong answers, each to the explanation shown for it."""
        value = self.raw(key, "a table of 'answer' = 'why'", (dict,), {})
        for why in value.values():
            if not isinstance(why, str) or not why.strip():
                raise self.error(key, WRONG_TYPE.format(expected="an explanation", got=why))
        return dict(value)

    def tables(self, key: str) -> list[_Table]:
        items = self.raw(key, f"an array of tables ([[{key}]])", (list,), [])
        tables = []
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise self.error(key, WRONG_TYPE.format(expected=f"[[{key}]] tables", got=item))
            where = f"{self.where}{key}[{index}]."
            tables.append(_Table(item, source=self.source, where=where, sets=self.sets))
        return tables

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.read)
        if unknown:
            expected = ", ".join(sorted(self.read))
            raise self.error(unknown[0], UNKNOWN_FIELD.format(expected=expected))


# --- Splitting a file into front matter and sections --------------------------------------


def _split(text: str, *, source: str) -> tuple[dict[str, Any], list[str], int]:
    """The front matter, the body's lines and the file line number of the body's first."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != FRONT_MATTER_FENCE:
        raise ContentError(f"{source}: front matter: {NO_FRONT_MATTER}")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == FRONT_MATTER_FENCE)
    except StopIteration:
        raise ContentError(f"{source}: front matter: {UNCLOSED_FRONT_MATTER}") from None
    try:
        data = tomllib.loads("\n".join(lines[1:end]))
    except tomllib.TOMLDecodeError as exc:
        # tomllib counts from the first line of the front matter, which is line 2 of the file.
        error = re.sub(r"line (\d+)", lambda m: f"line {int(m[1]) + 1}", str(exc))
        raise ContentError(f"{source}: front matter: {BAD_TOML.format(error=error)}") from exc
    return data, lines[end + 1 :], end + 2


def _sections(
    lines: list[str], names: dict[str, str], *, source: str, first_line: int
) -> dict[str, str]:
    """The body's sections by field name, each without the blank lines around it."""
    expected = ", ".join(f"# {name.capitalize()}" for name in names)
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_fence = False
    for number, line in enumerate(lines):
        if FENCE_RE.match(line):
            in_fence = not in_fence
        match = None if in_fence else SECTION_RE.match(line)
        if match:
            name = match["name"].strip()
            field = names.get(name.lower())
            if field is None:
                raise ContentError(
                    f"{source}: body: {UNKNOWN_SECTION.format(name=name, expected=expected)}"
                )
            if field in found:
                raise ContentError(f"{source}: body: {DUPLICATE_SECTION.format(name=name)}")
            current = found[field] = []
        elif current is not None:
            current.append(line)
        elif line.strip():
            first = next(iter(names)).capitalize()
            raise ContentError(
                f"{source}: line {first_line + number}: {TEXT_BEFORE_SECTION.format(first=first)}"
            )
    sections: dict[str, str] = {}
    for name, field in names.items():
        if field not in found:
            raise ContentError(f"{source}: body: {MISSING_SECTION.format(name=name.capitalize())}")
        body = found[field]
        while body and not body[0].strip():
            body.pop(0)
        while body and not body[-1].strip():
            body.pop()
        value = "\n".join(body)
        if not value:
            raise ContentError(f"{source}: body: # {name.capitalize()}: {EMPTY_TEXT}")
        sections[field] = value + "\n" if field in DOCUMENT_FIELDS else value
    return sections


# --- The three kinds of file ---------------------------------------------------------------


def _key_point(table: _Table) -> KeyPointContent:
    # A key point without patterns is assessed by meaning: its label and the example answers.
    point = KeyPointContent(
        slug=table.slug(), label=table.text("label"), patterns=table.patterns(required=False)
    )
    table.done()
    return point


def _follow_up(table: _Table) -> FollowUpContent:
    check_kind = table.choice(
        "check_kind", CHECK_KINDS, BAD_CHECK_KIND, kinds=", ".join(CHECK_KINDS)
    )
    for kind, fields in KIND_FIELDS.items():
        for field in fields:
            if field not in KIND_FIELDS[check_kind] and table.has(field):
                message = FIELD_NOT_FOR_KIND.format(kind=kind, check_kind=check_kind)
                if field == "known_wrong":  # several kinds have it; only text has not
                    message = KNOWN_WRONG_NOT_FOR_TEXT
                raise table.error(field, message)
    follow_up = FollowUpContent(
        level=table.level(),
        prompt=table.text("prompt"),
        expected_answer=table.text("expected_answer"),
        check_kind=check_kind,
        expected_number=table.number("expected_number", None),
        tolerance=table.number("tolerance", 0.0),
        expected_shape=table.text("expected_shape", ""),
        choices=table.strings("choices", []),
        correct_choice=table.text("correct_choice", ""),
        known_wrong=table.known_wrong(),
        key_points=[_key_point(t) for t in table.tables("key_points")],
    )
    required = {"number": "expected_number", "shape": "expected_shape", "choice": "choices"}
    if check_kind in required and not table.has(required[check_kind]):
        raise table.error(required[check_kind], NEEDS_FIELD_FOR_KIND.format(check_kind=check_kind))
    if check_kind == "choice":
        if len(follow_up["choices"]) < 2:
            raise table.error("choices", TOO_FEW_CHOICES)
        if follow_up["correct_choice"] not in follow_up["choices"]:
            raise table.error(
                "correct_choice", CHOICE_NOT_LISTED.format(value=follow_up["correct_choice"])
            )
        for choice in follow_up["known_wrong"]:
            if choice not in follow_up["choices"] or choice == follow_up["correct_choice"]:
                raise table.error("known_wrong", KNOWN_WRONG_NOT_A_CHOICE.format(value=choice))
    table.done()
    return follow_up


def _wrong_answer(table: _Table) -> WrongAnswerContent:
    wrong = WrongAnswerContent(
        slug=table.slug(),
        statement=table.text("statement"),
        rebuttal=table.text("rebuttal"),
        patterns=table.patterns(required=False),
    )
    table.done()
    return wrong


def question_read(
    path: Path, *, roles: set[str], sets: dict[str, list[str]] | None = None
) -> QuestionContent:
    """One question file. `roles` are the slugs defined in roles.toml, `sets` the pattern
    sets of patterns.toml."""
    source = str(path)
    data, body, first_line = _split(path.read_text(encoding="utf-8-sig"), source=source)
    table = _Table(data, source=source, where="", sets=sets)
    slug = table.slug()
    if slug != path.stem:
        raise table.error("slug", SLUG_NOT_FILE_NAME.format(slug=slug, stem=path.stem))
    role_slugs = table.strings("roles", [])
    for role in role_slugs:
        if role not in roles:
            raise table.error("roles", UNKNOWN_ROLE.format(slug=role, roles_file=ROLES_FILE))
    sections = _sections(body, QUESTION_SECTIONS, source=source, first_line=first_line)
    question = QuestionContent(
        slug=slug,
        title=table.text("title"),
        roles=role_slugs,
        level=table.level(),
        ordering=table.integer("ordering", 0),
        exercise_slugs=table.strings("exercise_slugs", []),
        prompt=sections["prompt"],
        short_answer=sections["short_answer"],
        full_answer=sections["full_answer"],
        key_points=[_key_point(t) for t in table.tables("key_points")],
        follow_ups=[_follow_up(t) for t in table.tables("follow_ups")],
        wrong_answers=[_wrong_answer(t) for t in table.tables("wrong_answers")],
    )
    table.done()
    # The database keeps key points unique per question, follow-ups' ones included.
    key_points = question["key_points"] + [
        point for follow_up in question["follow_ups"] for point in follow_up["key_points"]
    ]
    for field, items in (("key_points", key_points), ("wrong_answers", question["wrong_answers"])):
        seen: set[str] = set()
        for item in items:
            if item["slug"] in seen:
                raise table.error(field, DUPLICATE_SLUG.format(slug=item["slug"]))
            seen.add(item["slug"])
    return question


def page_read(path: Path) -> PageContent:
    source = str(path)
    data, body, first_line = _split(path.read_text(encoding="utf-8-sig"), source=source)
    table = _Table(data, source=source, where="")
    slug = table.slug()
    if slug != path.stem:
        raise table.error("slug", SLUG_NOT_FILE_NAME.format(slug=slug, stem=path.stem))
    sections = _sections(body, PAGE_SECTIONS, source=source, first_line=first_line)
    page = PageContent(
        slug=slug, title=table.text("title"), lead=sections["lead"], body=sections["body"]
    )
    table.done()
    return page


def pattern_sets_read(path: Path) -> dict[str, list[str]]:
    """The shared pattern sets, by name; each set's patterns are checked like a field's."""
    if not path.is_file():
        return {}
    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except tomllib.TOMLDecodeError as exc:
        raise ContentError(f"{source}: {BAD_TOML.format(error=exc)}") from exc
    top = _Table(data, source=source, where="")
    sets: dict[str, list[str]] = {}
    for table in top.tables("sets"):
        name = table.slug("name")
        if name in sets:
            raise table.error("name", DUPLICATE_SLUG.format(slug=name))
        sets[name] = table.patterns().split("\n")
        table.done()
    top.done()
    return sets


def roles_read(path: Path) -> list[RoleContent]:
    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except tomllib.TOMLDecodeError as exc:
        raise ContentError(f"{source}: {BAD_TOML.format(error=exc)}") from exc
    top = _Table(data, source=source, where="")
    roles = []
    seen: set[str] = set()
    for index, table in enumerate(top.tables("roles")):
        role = RoleContent(slug=table.slug(), name=table.text("name"), ordering=index)
        table.done()
        if role["slug"] in seen:
            raise table.error("slug", DUPLICATE_SLUG.format(slug=role["slug"]))
        seen.add(role["slug"])
        roles.append(role)
    top.done()
    return roles


def content_read(directory: Path = CONTENT_DIR) -> ContentBundle:
    """Every role, question and page under `directory`. Raises ContentError."""
    directory = Path(directory)
    roles_path = directory / ROLES_FILE
    if not roles_path.is_file():
        raise ContentError(f"{directory}: {NO_DIRECTORY.format(roles_file=ROLES_FILE)}")
    roles = roles_read(roles_path)
    role_slugs = {role["slug"] for role in roles}
    sets = pattern_sets_read(directory / PATTERN_SETS_FILE)
    questions = [
        question_read(path, roles=role_slugs, sets=sets)
        for path in sorted(directory.glob("*.md"))
        if path.name != "README.md"
    ]
    # Display order, which is also the creation order (and so the ids) of a fresh database.
    questions.sort(key=lambda question: (question["ordering"], question["slug"]))
    pages = [page_read(path) for path in sorted((directory / PAGES_DIR).glob("*.md"))]
    return ContentBundle(roles=roles, questions=questions, pages=pages)


def content_bundle() -> ContentBundle:
    """The project's own content (questions/content/), read afresh."""
    return content_read(CONTENT_DIR)
