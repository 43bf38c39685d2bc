"""grader.engine.misconceptions: what each misconception links to."""


def test_rebuttal_links_point_at_existing_wrong_answers():
    from grader.engine.misconceptions import MISCONCEPTIONS, QUESTION_SLUG
    from questions.content_files import content_bundle
    from questions.selectors import wrong_answer_url

    Q003 = content_bundle().question(QUESTION_SLUG)  # KeyError if the slug changed
    wrong_slugs = {w["slug"] for w in Q003["wrong_answers"]}
    for m in MISCONCEPTIONS.values():
        if m.wrong_answer_slug:
            assert m.wrong_answer_slug in wrong_slugs
            assert m.rebuttal_url == wrong_answer_url(m.wrong_answer_slug)
