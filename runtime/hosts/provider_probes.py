"""Whether a bundle's memory providers answer, checked before it starts (within 1 s each).

One probe per endpoint (per tenant for an HTTP token of the managed target), all at once on
daemon threads: a probe that has not answered when the deadline passes is reported as such and
left behind (the process is about to exit with status 2). A probe reads its settings from the
environment (the caller has checked they are set) and reports one line that names the provider
and the reason, never a DSN, a URL or a token:

- ``postgres``: a connection and ``SELECT 1`` (nothing is created: migrations run when the
  bundle wires memory);
- ``http``: our contract's ``health`` call with the bundle's token and scope; the OpenComputer
  wire (``protocol: opencomputer``): a TCP connection to its host;
- ``markdown``: the vault's folder exists (not on the managed target, whose folders are per
  tenant and made on a tenant's first turn);
- ``file``: nothing to probe (the store is opened, and made, when memory is wired).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from specwire.runtime.core.lazy_dataclass import lazy_dataclass
from specwire.runtime.hosts.start_needs import Endpoint, reference, token_variables
from specwire.runtime.safety.secrets import SecretRef

HEALTH_DEADLINE_S = 1.0

Probe = Callable[[], str | None]  # the reason it failed, or None


@lazy_dataclass(frozen=True)
class _Job:
    """One probe of one endpoint (for one tenant, when the endpoint is per tenant)."""

    what: str  # "memory (postgres", closed by the report: ")" or ", tenants a, b)"
    probe: Probe
    tenant: str | None = None


def probe_endpoints(
    found: Sequence[Endpoint],
    *,
    spec: str,
    tenants: Sequence[str],
    cwd: Path,
    deadline_s: float = HEALTH_DEADLINE_S,
) -> list[str]:
    """One line per endpoint that did not answer in time or answered unhealthy (the tenants of
    an endpoint that fail for the same reason share the line)."""
    jobs: list[_Job] = []
    for endpoint in found:
        jobs += _jobs(endpoint, spec=spec, tenants=tenants, cwd=cwd, deadline_s=deadline_s)
    return _report(jobs, _run(jobs, deadline_s), deadline_s)


def _jobs(
    endpoint: Endpoint, *, spec: str, tenants: Sequence[str], cwd: Path, deadline_s: float
) -> list[_Job]:
    what = f"{endpoint.label} ({endpoint.backend}"
    # Modules are imported and clients made here, before the clock starts: the deadline is the
    # provider's to answer in, not the interpreter's to import httpx or psycopg in.
    if endpoint.backend == "postgres" and endpoint.dsn is not None:
        return [_Job(what, _postgres_probe(_value(endpoint.dsn)))]
    if endpoint.backend == "http" and endpoint.url is not None:
        url = _value(endpoint.url)
        if endpoint.protocol == "opencomputer":
            return [_Job(what + ", opencomputer", lambda: _tcp(url, deadline_s))]
        return [
            _Job(
                what,
                _http_probe(url, SecretRef(variable).resolve(), spec, tenant, deadline_s),
                tenant,
            )
            for variable, tenant in token_variables(endpoint, tenants)
        ]
    if endpoint.backend == "markdown" and endpoint.path is not None and not tenants:
        folder = cwd / endpoint.path
        return [_Job(what, lambda: _folder(folder, endpoint.path or ""))]
    return []


def _value(setting: str) -> str:
    variable = reference(setting)
    return setting if variable is None else SecretRef(variable).resolve()


_NO_ANSWER = object()  # a probe still running when the deadline passed


def _run(jobs: Sequence[_Job], deadline_s: float) -> list[object]:
    """Each job's reason (None: healthy; ``_NO_ANSWER``: no answer in time)."""
    results: dict[int, str | None] = {}

    def run(index: int, probe: Probe) -> None:
        try:
            results[index] = probe()
        except Exception as exc:  # a probe reports; it never takes the start down with it
            results[index] = f"the check failed ({type(exc).__name__})"

    threads = [
        threading.Thread(target=run, args=(index, job.probe), daemon=True, name="start-probe")
        for index, job in enumerate(jobs)
    ]
    for thread in threads:
        thread.start()
    ends = time.monotonic() + deadline_s
    for thread in threads:
        thread.join(max(0.0, ends - time.monotonic()))
    return [results.get(index, _NO_ANSWER) for index in range(len(jobs))]


def _report(jobs: Sequence[_Job], outcomes: Sequence[object], deadline_s: float) -> list[str]:
    failed: dict[tuple[str, str], list[str | None]] = {}
    for job, outcome in zip(jobs, outcomes, strict=True):
        if outcome is None:
            continue
        if outcome is _NO_ANSWER:
            said = f"did not answer within {deadline_s:g} s"
        else:
            said = f"is not reachable: {outcome}"
        failed.setdefault((job.what, said), []).append(job.tenant)
    lines = []
    for (what, said), tenants in failed.items():
        named = [tenant for tenant in tenants if tenant is not None]
        noun = "tenant" if len(named) == 1 else "tenants"
        closed = f"{what}, {noun} {', '.join(named)})" if named else f"{what})"
        lines.append(f"{closed} {said}")
    return lines


def _postgres_probe(dsn: str) -> Probe:
    try:
        import psycopg
    except ImportError:
        return _failed("this backend needs psycopg: pip install 'specwire[postgres]'")
    try:
        psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        # libpq's message quotes the part it could not parse, which may be the password.
        return _failed("the connection string is not valid")

    def probe() -> str | None:
        try:
            with psycopg.connect(dsn, connect_timeout=2, autocommit=True) as conn:
                conn.execute("SELECT 1")
        except psycopg.Error as exc:
            return _first_line(exc)
        return None

    return probe


def _http_probe(url: str, token: str, spec: str, tenant: str | None, deadline_s: float) -> Probe:
    try:
        from specwire.runtime.facts.providers.http.client import HttpFactProvider
    except ImportError as exc:
        return _failed(f"this backend needs {exc.name}: pip install 'specwire[memory-http]'")
    try:
        provider = HttpFactProvider(url, token, spec, tenant=tenant, timeout_s=deadline_s)
    except ValueError as exc:
        return _failed(str(exc))
    except Exception:  # httpx.InvalidURL (a bad port): never the URL itself
        return _failed("the memory service URL is not valid")

    def probe() -> str | None:
        try:
            health = provider.health()
        finally:
            provider.close()
        return None if health.ok else (health.message or "unhealthy")

    return probe


def _failed(reason: str) -> Probe:
    return lambda: reason


def _tcp(url: str, deadline_s: float) -> str | None:
    import socket  # a bundle without such an endpoint never needs it at start
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return "the URL's port is not valid"
    if not parts.hostname:
        return "the URL names no host"
    try:
        with socket.create_connection((parts.hostname, port), timeout=deadline_s):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def _folder(folder: Path, shown: str) -> str | None:
    if folder.is_dir():
        return None
    return f"its folder {shown!r} does not exist"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    first = text.splitlines()[0].strip() if text else ""
    return first[:200] or type(exc).__name__
