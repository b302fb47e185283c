"""Structured logging: `setup_logging(level, fmt="json"|"text")`, and the reconcile context.

While a request is reconciled, `reconcile_context` puts controller, namespace/name and a reconcile id
into a context variable; a filter copies them into every log record made during the reconcile (from
any logger), so a reconciler's own `logging.getLogger(__name__).info(...)` lines carry them too, as
controller-runtime's `log.FromContext(ctx)` does.
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

_context: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "pyop_reconcile", default=None
)

# Attributes every LogRecord has; anything else on a record came from `extra=` and is a structured field.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


@contextlib.contextmanager
def reconcile_context(controller: str, request: Any, reconcile_id: str) -> Iterator[None]:
    token = _context.set(
        {
            "controller": controller,
            "request": str(request),  # not "name": a LogRecord's `name` is its logger's
            "namespace": request.namespace,
            "reconcile_id": reconcile_id,
        }
    )
    try:
        yield
    finally:
        _context.reset(token)


def current_reconcile() -> dict[str, str] | None:
    """controller/request/namespace/reconcile_id of the reconcile running in this task, if any."""
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
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


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
        fields = " ".join(f"{k}={v}" for k, v in _fields(record).items())
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
        fields = " ".join(f"{k}={v}" for k, v in _fields(record).items())
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
