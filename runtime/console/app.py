"""The console's Starlette app: routes, the login, the security headers on every answer.

Every page needs a logged-in session (``auth``); every POST also needs the session's CSRF
token and a same-origin request. Headers: a strict Content-Security-Policy (no script at all,
styles from the console itself), ``nosniff``, no referrer, no framing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from specwire.runtime.console import (
    fact_pages,
    record_pages,
    results_pages,
    review_pages,
    wiki_pages,
)
from specwire.runtime.console.auth import COOKIE, ConsoleAuth, Session, csrf_matches, same_origin
from specwire.runtime.console.data import ConsoleData, NotFound, Refused
from specwire.runtime.console.html import Markup, page, tag, void
from specwire.runtime.console.view import View
from specwire.runtime.core.errors import StoreError
from specwire.runtime.facts.model import InvalidRequestError

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
MAX_FORM_BYTES = 64 * 1024

PageResult = tuple[str, Markup]


class SecurityHeaders:
    """Adds ``SECURITY_HEADERS`` to every response, errors included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.decode("latin-1").lower() not in SECURITY_HEADERS
                ]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)


def _stylesheet() -> bytes:
    return resources.files("specwire.runtime.console").joinpath("static/console.css").read_bytes()


def console_app(data: ConsoleData, auth: ConsoleAuth, *, evals_dir: Path | None = None) -> ASGIApp:
    """The console over ``data``; mount it anywhere (links follow the mount's ``root_path``)."""
    css = _stylesheet()

    def base_of(request: Request) -> str:
        return str(request.scope.get("root_path", "")).rstrip("/")

    def session_of(request: Request) -> Session | None:
        return auth.session(request.cookies.get(COOKIE))

    def own_origin(request: Request) -> str:
        return f"{request.url.scheme}://{request.url.netloc}"

    def html(request: Request, result: PageResult, session: Session, status: int = 200) -> Response:
        title, body = result
        return HTMLResponse(
            page(title, body, where=data.where, base=base_of(request), csrf=session.csrf), status
        )

    def refusal(status: int, text: str) -> Response:
        return HTMLResponse(f"<!doctype html><title>refused</title><p>{_escape(text)}</p>", status)

    async def checked_post(request: Request) -> tuple[Session, dict[str, str]] | Response:
        session = session_of(request)
        if session is None:
            return refusal(403, "log in first")
        if not same_origin(
            request.headers.get("origin"),
            request.headers.get("sec-fetch-site"),
            own_origin(request),
        ):
            return refusal(403, "a change must come from the console's own pages")
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_FORM_BYTES):
            return refusal(413, "form too large")
        form = await request.form()
        fields = {key: value for key, value in form.items() if isinstance(value, str)}
        if not csrf_matches(session, fields.get("csrf")):
            return refusal(403, "the form's CSRF token does not match your session")
        return session, fields

    def view_of(request: Request, session: Session) -> View:
        return View(data, base_of(request), session.csrf, evals_dir)

    def guarded(
        build: Callable[[View, Request], PageResult],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            session = session_of(request)
            if session is None:
                return RedirectResponse(base_of(request) + "/login", 303)
            return _answer(request, session, lambda: build(view_of(request, session), request))

        return endpoint

    def posting(
        build: Callable[[View, Request, dict[str, str]], PageResult],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            checked = await checked_post(request)
            if isinstance(checked, Response):
                return checked
            session, fields = checked
            return _answer(
                request, session, lambda: build(view_of(request, session), request, fields)
            )

        return endpoint

    def _answer(request: Request, session: Session, build: Callable[[], PageResult]) -> Response:
        try:
            return html(request, build(), session)
        except NotFound as exc:
            return html(request, ("Not found", tag("p", str(exc))), session, 404)
        except (fact_pages.BadQuery, Refused, InvalidRequestError, StoreError, ValueError) as exc:
            return html(request, ("Refused", tag("p", str(exc), class_="error")), session, 400)

    async def login_page(request: Request) -> Response:
        failed = request.query_params.get("failed") == "1"
        form = tag(
            "form",
            [
                tag(
                    "label",
                    ["owner token ", void("input", type="password", name="token", autofocus=True)],
                ),
                tag("button", "Log in", type="submit"),
            ],
            method="post",
            action=base_of(request) + "/login",
        )
        note = tag("p", "wrong token" if failed else None, class_="error")
        return HTMLResponse(
            page("Log in", Markup(form + note), where=data.where, base=base_of(request))
        )

    async def login(request: Request) -> Response:
        if not same_origin(
            request.headers.get("origin"),
            request.headers.get("sec-fetch-site"),
            own_origin(request),
        ):
            return refusal(403, "log in from the console's own page")
        form = await request.form()
        offered = form.get("token")
        session = auth.login(offered if isinstance(offered, str) else "")
        if session is None:
            return RedirectResponse(base_of(request) + "/login?failed=1", 303)
        response = RedirectResponse(base_of(request) + "/", 303)
        response.set_cookie(
            COOKIE,
            session.id,
            httponly=True,
            samesite="strict",
            path=(base_of(request) or "/"),
            secure=request.url.scheme == "https",
        )
        return response

    async def logout(request: Request) -> Response:
        checked = await checked_post(request)
        if isinstance(checked, Response):
            return checked
        auth.logout(checked[0].id)
        response = RedirectResponse(base_of(request) + "/login", 303)
        response.delete_cookie(COOKIE, path=(base_of(request) or "/"))
        return response

    async def stylesheet(request: Request) -> Response:
        return Response(css, media_type="text/css")

    def path_param(request: Request, name: str) -> str:
        return str(request.path_params[name])

    routes = [
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/static/console.css", stylesheet, methods=["GET"]),
        Route("/", guarded(lambda v, r: fact_pages.facts_list(v, r.query_params)), methods=["GET"]),
        Route(
            "/search", guarded(lambda v, r: fact_pages.search(v, r.query_params)), methods=["GET"]
        ),
        Route(
            "/facts/{fact_id}",
            guarded(lambda v, r: fact_pages.fact_page(v, path_param(r, "fact_id"))),
            methods=["GET"],
        ),
        Route("/quarantine", guarded(lambda v, r: review_pages.quarantine(v)), methods=["GET"]),
        Route(
            "/quarantine/{fact_id}/{action:str}",
            guarded(lambda v, r: _held_confirm(v, r)),
            methods=["GET"],
        ),
        Route(
            "/quarantine/{fact_id}/{action:str}",
            posting(lambda v, r, f: _held_change(v, r)),
            methods=["POST"],
        ),
        Route("/erase", guarded(lambda v, r: review_pages.erase_form(v)), methods=["GET"]),
        Route(
            "/erase/preview",
            guarded(lambda v, r: review_pages.erase_preview(v, r.query_params)),
            methods=["GET"],
        ),
        Route(
            "/erase",
            posting(
                lambda v, r, f: review_pages.erase_done(v, f.get("kind", ""), f.get("value", ""))
            ),
            methods=["POST"],
        ),
        Route(
            "/continuity",
            guarded(lambda v, r: record_pages.continuity(v, r.query_params)),
            methods=["GET"],
        ),
        Route("/sessions", guarded(lambda v, r: record_pages.sessions(v)), methods=["GET"]),
        Route(
            "/sessions/{session_id}",
            guarded(lambda v, r: record_pages.session(v, path_param(r, "session_id"))),
            methods=["GET"],
        ),
        Route("/wiki", guarded(lambda v, r: wiki_pages.articles(v)), methods=["GET"]),
        Route(
            "/wiki/{slug}",
            guarded(lambda v, r: wiki_pages.article(v, path_param(r, "slug"), r.query_params)),
            methods=["GET"],
        ),
        Route(
            "/wiki/{slug}/diff",
            guarded(lambda v, r: wiki_pages.diff(v, path_param(r, "slug"), r.query_params)),
            methods=["GET"],
        ),
        Route("/evals", guarded(lambda v, r: results_pages.results(v)), methods=["GET"]),
    ]
    app = Starlette(routes=routes)
    return SecurityHeaders(app)


def _held_confirm(view: View, request: Request) -> PageResult:
    action = str(request.path_params["action"])
    if action not in ("release", "delete"):
        raise NotFound(f"no action {action}")
    return review_pages.confirm_held(view, str(request.path_params["fact_id"]), action)


def _held_change(view: View, request: Request) -> PageResult:
    action = str(request.path_params["action"])
    fact_id = str(request.path_params["fact_id"])
    if action == "release":
        return review_pages.released(view, fact_id)
    if action == "delete":
        return review_pages.deleted(view, fact_id)
    raise NotFound(f"no action {action}")


def _escape(text: str) -> str:
    from html import escape

    return escape(text)
