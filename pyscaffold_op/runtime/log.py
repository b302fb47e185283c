"""Structured logging: `setup_logging(level, fmt="json"|"text")`, and the reconcile context.

While a request is reconciled, `reconcile_context` puts controller-runtime's keys into a context
variable: `controller`, `controllerGroup`, `controllerKind`, the kind's `{"name", "namespace"}` under the
kind's name (klog's KRef), `namespace`, `name` and `reconcileID`. A filter copies them into every log
record made during the reconcile (from any logger), so a reconciler's own
`logging.getLogger(__name__).info(...)` lines carry them too, as controller-runtime's
`log.FromContext(ctx)` does. One key style throughout: controller-runtime's camelCase.

A LogRecord's own `name` is its logger's, so the object's name rides on the record as `name_` and is
written `name` (any `extra` key that is a LogRecord attribute plus `_` is written without the `_`); the
logger's name is written `logger`.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import sys
import time
from collections.abc import Iterator
from typing import Any

_context: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "pyop_reconcile", default=None
)

# Attributes every LogRecord has; anything else on a record came from `extra=` and is a structured field.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


def reconcile_fields(
    controller: str, request: Any, reconcile_id: str, group_kind: tuple[str, str] | None = None
) -> dict[str, Any]:
    """controller-runtime's per-reconcile log keys (its builder's LogConstructor plus reconcileID)."""
    group, kind = group_kind or ("", "")
    fields: dict[str, Any] = {"controller": controller}
    if kind:
        fields["controllerGroup"] = group
        fields["controllerKind"] = kind
        fields[kind] = {"name": request.name, "namespace": request.namespace}
    fields["namespace"] = request.namespace
    fields["name_"] = request.name  # written `name`: see the module's docstring
    fields["reconcileID"] = reconcile_id
    return fields


@contextlib.contextmanager
def reconcile_context(
    controller: str,
    request: Any,
    reconcile_id: str,
    group_kind: tuple[str, str] | None = None,
    **extra: Any,
) -> Iterator[None]:
    """The reconcile's keys (plus `extra`, such as a daemon's name) on every log record made inside."""
    fields = reconcile_fields(controller, request, reconcile_id, group_kind)
    fields.update(extra)
    token = _context.set(fields)
    try:
        yield
    finally:
        _context.reset(token)


def current_reconcile() -> dict[str, Any] | None:
    """The log keys of the reconcile running in this task (`reconcile_fields`), if any."""
    return _context.get()


class ReconcileContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        ctx = _context.get()
        if ctx:
            for k, v in ctx.items():
                if not hasattr(record, k):
                    setattr(record, k, v)
        return True


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {
        (k[:-1] if k[-1] == "_" and k[:-1] in _STANDARD else k): v
        for k, v in vars(record).items()
        if k not in _STANDARD and not k.startswith("_")
    }


def _text(value: Any) -> Any:
    """A field's value in a text line: a KRef-like {"name", "namespace"} as `namespace/name`."""
    if isinstance(value, dict) and value.keys() == {"name", "namespace"}:
        return f"{value['namespace']}/{value['name']}" if value["namespace"] else value["name"]
    return value


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, the structured fields, error/stacktrace."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        out.update(_fields(record))
        if record.exc_info:
            from pyscaffold_op.runtime.panics import safe_str

            if "error" not in out:  # an explicit `error` field (a recovered panic's) is kept
                out["error"] = safe_str(record.exc_info[1]) if record.exc_info[1] is not None else "None"
            out["stacktrace"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    """`2026-12-02T14:00:00Z INFO logger msg key=value ...` for humans (development mode)."""

    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        fields = " ".join(f"{k}={_text(v)}" for k, v in _fields(record).items())
        line = f"{ts}Z {record.levelname:<5} {record.name} {record.getMessage()}" + (
            f" {fields}" if fields else ""
        )
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class FieldsFormatter(logging.Formatter):
    """Wraps another formatter (pytest's, a user's) and appends the record's structured fields as
    `key=value` to its first line, so what a plain `%(message)s` format drops (the error of a
    "Reconciler error", the controller, the request) is still shown."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        _reconcile_filter.filter(record)
        text = self.inner.format(record)
        fields = " ".join(f"{k}={_text(v)}" for k, v in _fields(record).items())
        if not fields:
            return text
        first, newline, rest = text.partition("\n")
        return f"{first} {fields}{newline}{rest}"


_reconcile_filter = ReconcileContextFilter()


def setup_logging(level: str | int = "info", fmt: str = "json", stream: Any = None) -> logging.Handler:
    """Configure the root logger once: one stream handler (stderr), JSON or text, with reconcile context.

    Returns the handler. Calling it again replaces the handler it installed before.
    """
    if fmt not in ("json", "text"):
        raise ValueError(f"log format must be 'json' or 'text', got {fmt!r}")
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_pyop", False):
            root.removeHandler(h)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler._pyop = True  # type: ignore[attr-defined]  # our mark, found again by getattr above
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(ReconcileContextFilter())
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    if root.level > logging.DEBUG:
        # One INFO line per HTTP request drowns everything else; keep them for debug level.
        for noisy in ("httpx2", "httpx", "httpcore", "httpcore2"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    return handler
