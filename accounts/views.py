"""Account pages: sign-up (its username rules and its rate limit) and the password reset
request, whose mail is limited by accounts.password_reset."""

from __future__ import annotations

import unicodedata

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordResetForm, UserCreationForm
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
)
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from accounts.password_reset import password_reset_mail_allowed
from accounts.usernames import MSG_USERNAME_RESERVED, username_is_reserved
from common.ratelimit import client_ip, rate_limit_hit

MSG_SIGNUP_THROTTLED = "Too many sign-ups from your network. Wait {wait} seconds and try again."
MSG_USERNAME_CHARACTERS = (
    "Use only English letters, digits and the characters @ . + - _ in a username, so that no "
    "two usernames look alike."
)
MSG_USERNAME_TAKEN = "A user with that username already exists."


def username_is_plain(username: str) -> bool:
    """ASCII letters, digits and @.+-_ only, after NFKC (which folds full-width letters to
    ASCII): a Cyrillic or Greek look-alike letter can't pass for an existing name."""
    normalised = unicodedata.normalize("NFKC", username)
    return normalised.isascii() and all(c.isalnum() or c in "@.+-_" for c in normalised)


class SignupForm(UserCreationForm):
    email = forms.EmailField(
        required=False,
        help_text="Optional. Only used to send you a link if you forget your password.",
    )

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")

    def clean_username(self) -> str:
        username = self.cleaned_data["username"]
        if not username_is_plain(username):
            raise forms.ValidationError(MSG_USERNAME_CHARACTERS, code="confusable")
        if username_is_reserved(username):
            raise forms.ValidationError(MSG_USERNAME_RESERVED, code="reserved")
        # "Student" next to "student" is a look-alike too.
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise forms.ValidationError(MSG_USERNAME_TAKEN, code="unique")
        return username


def safe_next(request: HttpRequest) -> str:
    """The `next` address of the request (POST, else GET) if it is a page of this site, else
    "": an open redirect would let a link to our sign-up page send people anywhere."""
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return ""


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    next_url = safe_next(request)
    if request.user.is_authenticated:
        return redirect(next_url or "home")
    form = SignupForm(request.POST or None)
    if request.method == "POST":
        # Per client address (see NUM_PROXIES), counted before the form: each try costs a
        # password hash, and each success an account.
        wait = rate_limit_hit(
            scope="signup", ident=client_ip(request), rate=settings.THROTTLE_RATES["signup"]
        )
        if wait is not None:
            form = SignupForm()
            context = {
                "form": form,
                "next": next_url,
                "throttled": MSG_SIGNUP_THROTTLED.format(wait=int(wait)),
            }
            return render(request, "registration/signup.html", context, status=429)
        if form.is_valid():
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect(next_url or "home")
    return render(request, "registration/signup.html", {"form": form, "next": next_url})


class PasswordResetView(auth_views.PasswordResetView):
    """Django's reset (a mail with a one-time link). Every well-formed request gets the same
    answer; whether it sends a mail is accounts.password_reset's rule, which nobody can use to
    flood an inbox or to block the owner's own reset."""

    extra_email_context = {"product_name": settings.PRODUCT_NAME}

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        email = form.cleaned_data["email"]
        if password_reset_mail_allowed(client=client_ip(self.request), email=email):
            return super().form_valid(form)
        return HttpResponseRedirect(self.get_success_url())
