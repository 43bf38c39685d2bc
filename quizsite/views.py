from __future__ import annotations

import unicodedata
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordResetForm, UserCreationForm
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    HttpResponseServerError,
    JsonResponse,
)
from django.shortcuts import redirect, render
from django.template import loader
from django.templatetags.static import static
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults
from django.views.decorators.http import require_http_methods
from django.views.generic import RedirectView

from quizsite.password_reset import password_reset_mail_allowed
from quizsite.ratelimit import client_ip, rate_limit_hit
from quizsite.usernames import MSG_USERNAME_RESERVED, username_is_reserved

MSG_SIGNUP_THROTTLED = "Too many sign-ups from your network. Wait {wait} seconds and try again."
MSG_USERNAME_CHARACTERS = (
    "Use only English letters, digits and the characters @ . + - _ in a username, so that no "
    "two usernames look alike."
)
MSG_USERNAME_TAKEN = "A user with that username already exists."


MSG_SERVER_ERROR = "The server failed on our side, not yours. Please try again in a minute."


MSG_NOT_FOUND = "Not found."
MSG_BAD_REQUEST = "Bad request."
MSG_FORBIDDEN = "You do not have permission to perform this action."


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": MSG_SERVER_ERROR}, status=500)
    # Rendered without the request's context, as Django's own handler does (whatever broke
    # may be in a context processor); the product's name is the one thing the page needs.
    template = loader.get_template("500.html")
    return HttpResponseServerError(template.render({"PRODUCT_NAME": settings.PRODUCT_NAME}))


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):  # a URL no route matches, e.g. /api/attempts/x/
        return JsonResponse({"detail": MSG_NOT_FOUND}, status=404)
    return defaults.page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": MSG_BAD_REQUEST}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": MSG_FORBIDDEN}, status=403)
    return defaults.permission_denied(request, exception)


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


class FaviconView(RedirectView):
    """/favicon.ico, which browsers ask for whatever the page links: the SVG icon. Temporary,
    as the icon's address carries its content hash in production and changes with it."""

    permanent = False

    def get_redirect_url(self, *args: Any, **kwargs: Any) -> str:
        return static("favicon.svg")


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
    answer; whether it sends a mail is quizsite.password_reset's rule, which nobody can use to
    flood an inbox or to block the owner's own reset."""

    extra_email_context = {"product_name": settings.PRODUCT_NAME}

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        email = form.cleaned_data["email"]
        if password_reset_mail_allowed(client=client_ip(self.request), email=email):
            return super().form_valid(form)
        return HttpResponseRedirect(self.get_success_url())
