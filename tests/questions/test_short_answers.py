"""Short answers that name the confusion behind a foreseen wrong answer."""

from __future__ import annotations

from questions.assessment import short_answers as s

D_MODEL = {"512": "d_model, the model width; the question asks for d_head."}


def test_a_known_wrong_number_names_the_confusion() -> None:
    result = s.check_number("It is 512.", 64.0, 0.0, D_MODEL)
    assert not result.correct
    assert result.message == s.NUMBER_KNOWN_WRONG.format(got=512, why=D_MODEL["512"])
    assert result.message.startswith("Not quite: 512 is d_model, the model width")


def test_a_known_wrong_number_matches_within_the_tolerance() -> None:
    why = {"128": "the head size itself; divide by its square root."}
    assert s.check_number("128.02", 11.3, 0.05, why).message.startswith("Not quite: 128.02 is")
    assert s.check_number("11.31", 11.3, 0.05, why).message == s.NUMBER_CORRECT


def test_an_unforeseen_wrong_number_keeps_the_plain_message() -> None:
    assert s.check_number("100", 64.0, 0.0, D_MODEL).message == s.NUMBER_WRONG_INTEGER.format(
        got=100
    )
    assert s.check_number("64", 64.0, 0.0, D_MODEL).message == s.NUMBER_CORRECT


def test_a_wrong_choice_says_why() -> None:
    choices = ["Yes, it is learned", "No, it is a fixed recipe"]
    why = {"Yes, it is learned": "it is fixed by the recipe."}
    result = s.check_choice("yes,  it is learned", choices, choices[1], why)
    assert result.message == s.CHOICE_KNOWN_WRONG.format(why="it is fixed by the recipe.")
    assert s.check_choice(choices[0], choices, choices[1]).message == s.CHOICE_WRONG
    assert s.check_choice(choices[1], choices, choices[1], why).message == s.CHOICE_CORRECT


def test_a_known_wrong_shape_names_the_confusion() -> None:
    why = {"(n, d_k)": "the shape of the queries."}
    result = s.check_shape("[n, d_k]", "(n, n)", why)
    assert result.message == s.SHAPE_KNOWN_WRONG.format(got="(n, d_k)", why=why["(n, d_k)"])
