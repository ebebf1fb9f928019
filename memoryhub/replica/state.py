"""The two aliases and one HTTP request's routing state, which every other module of the
package reads: the request's client, whether it wrote, which servers it must avoid."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field

PRIMARY = "default"
REPLICA = "replica"


@dataclass
class RequestRouting:
    """One HTTP request's routing state; a mutable object so that every thread the request runs
    in (Django's sync views, MCP tool threads) sees the same one."""

    client: str = ""  # a hash of the API token or session cookie ("" when anonymous)
    pinned: bool | None = None  # None: not looked up yet
    wrote: bool = False
    failed_alias: str | None = None  # a read on this alias failed during the request
    avoid: set[str] = field(default_factory=set)  # aliases this request must not read from


# Set by request_scope.RoutingScope for the length of one HTTP request; None outside requests
# (management commands, Celery jobs, migrations).
request_routing: ContextVar[RequestRouting | None] = ContextVar("request_routing", default=None)


def current() -> RequestRouting | None:
    return request_routing.get()
