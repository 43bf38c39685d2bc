"""accounts.authentication: an API token is read with its user, and knox's answers are kept."""

from __future__ import annotations

import re

import pytest
from knox.models import AuthToken
from rest_framework.exceptions import AuthenticationFailed

from accounts.authentication import TokenAuthentication
from accounts.services.api_tokens import api_token_issue
from tests.factories import student_create

pytestmark = pytest.mark.django_db


def test_the_token_scheme_reads_knoxs_row_and_keeps_its_answers(django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    user = student_create(username="tess")
    issued = api_token_issue(user=user)
    with django_assert_num_queries(1):  # the token and its user, in one statement
        got_user, token = TokenAuthentication().authenticate_credentials(issued.token.encode())
    assert got_user == user
    assert token == AuthToken.objects.get(token_key=issued.prefix)
    assert token.user is got_user
    with pytest.raises(AuthenticationFailed, match=re.escape("Invalid token.")):
        TokenAuthentication().authenticate_credentials(b"0" * 64)
    user.is_active = False
    user.save()
    with pytest.raises(AuthenticationFailed, match=re.escape("User inactive or deleted.")):
        TokenAuthentication().authenticate_credentials(issued.token.encode())
