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

import contextvars
import json
import logging
import sys
import time
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


class reconcile_context:  # named as the function it replaced: `with reconcile_context(...):`
    """The reconcile's keys (plus `extra`, such as a daemon's name) on every log record made inside.

    A class rather than a generator: every reconcile enters one, and this costs a third as much."""

    __slots__ = ("_fields", "_token")

    def __init__(
        self,
        controller: str,
        request: Any,
        reconcile_id: str,
        group_kind: tuple[str, str] | None = None,
        **extra: Any,
    ) -> None:
        self._fields = reconcile_fields(controller, request, reconcile_id, group_kind)
        if extra:
            self._fields.update(extra)
        self._token: contextvars.Token[dict[str, Any] | None] | None = None

    def __enter__(self) -> None:
        self._token = _context.set(self._fields)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _context.reset(self._token)
            self._token = None


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


TIME_ENCODINGS = ("epoch", "millis", "nano", "iso8601", "rfc3339", "rfc3339nano")
"""zap's time encoders (controller-runtime's --zap-time-encoding), for the `ts` of each line."""


def encode_time(created: float, encoding: str) -> Any:
    """`created` (seconds since the epoch) as zap's encoder of that name writes it."""
    if encoding == "epoch":
        return round(created, 6)
    if encoding == "millis":
        return round(created * 1000, 3)
    if encoding == "nano":
        return int(created * 1_000_000_000)
    whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    fraction = created - int(created)
    if encoding == "iso8601":  # 2006-01-02T15:04:05.000Z0700
        return f"{whole}.{int(fraction * 1000):03d}Z"
    if encoding == "rfc3339":
        return f"{whole}Z"
    if encoding == "rfc3339nano":  # trailing zeros dropped, as Go's RFC3339Nano
        digits = f"{int(fraction * 1_000_000_000):09d}".rstrip("0")
        return f"{whole}.{digits}Z" if digits else f"{whole}Z"
    raise ValueError(f"time encoding must be one of {', '.join(TIME_ENCODINGS)}, got {encoding!r}")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, the structured fields, error/stacktrace.

    `time_encoding`: zap's name for how `ts` is written (epoch seconds by default); `stacktrace_level`:
    below it, a record's exception gives its `error` but no `stacktrace` (zap's stacktrace level;
    None: every exception logged with its traceback keeps it)."""

    def __init__(self, time_encoding: str = "epoch", stacktrace_level: int | None = None) -> None:
        super().__init__()
        encode_time(0.0, time_encoding)  # an unknown encoding fails here, not on the first line
        self.time_encoding, self.stacktrace_level = time_encoding, stacktrace_level

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": encode_time(record.created, self.time_encoding),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        out.update(_fields(record))
        if record.exc_info:
            from pyscaffold_op.runtime.panics import safe_str

            if "error" not in out:  # an explicit `error` field (a recovered panic's) is kept
                out["error"] = safe_str(record.exc_info[1]) if record.exc_info[1] is not None else "None"
            if self.stacktrace_level is None or record.levelno >= self.stacktrace_level:
                out["stacktrace"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    """`2026-12-02T14:00:00Z INFO logger msg key=value ...` for humans (development mode); the same
    `time_encoding` and `stacktrace_level` as JsonFormatter (default: RFC 3339 times)."""

    def __init__(self, time_encoding: str = "rfc3339", stacktrace_level: int | None = None) -> None:
        super().__init__()
        encode_time(0.0, time_encoding)
        self.time_encoding, self.stacktrace_level = time_encoding, stacktrace_level

    def format(self, record: logging.LogRecord) -> str:
        ts = encode_time(record.created, self.time_encoding)
        fields = " ".join(f"{k}={_text(v)}" for k, v in _fields(record).items())
        if record.exc_info and self.stacktrace_level is not None and record.levelno < self.stacktrace_level:
            from pyscaffold_op.runtime.panics import safe_str

            error = record.exc_info[1]
            shown = safe_str(error) if error is not None else "None"
            fields = " ".join(f for f in (fields, f"error={shown}") if f)
            record = logging.makeLogRecord({**vars(record), "exc_info": None, "exc_text": None})
        line = f"{ts} {record.levelname:<5} {record.name} {record.getMessage()}" + (
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


def setup_logging(
    level: str | int = "info",
    fmt: str = "json",
    stream: Any = None,
    *,
    time_encoding: str | None = None,
    stacktrace_level: str | int | None = None,
) -> logging.Handler:
    """Configure the root logger once: one stream handler (stderr), JSON or text, with reconcile context.

    `time_encoding` and `stacktrace_level` are controller-runtime's `--zap-time-encoding` and
    `--zap-stacktrace-level` (see JsonFormatter). Returns the handler. Calling it again replaces the
    handler it installed before.
    """
    if fmt not in ("json", "text"):
        raise ValueError(f"log format must be 'json' or 'text', got {fmt!r}")
    stack = (
        logging.getLevelName(stacktrace_level.upper())
        if isinstance(stacktrace_level, str)
        else stacktrace_level
    )
    if stack is not None and not isinstance(stack, int):
        raise ValueError(f"unknown stacktrace level {stacktrace_level!r}")
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_pyop", False):
            root.removeHandler(h)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler._pyop = True  # type: ignore[attr-defined]  # our mark, found again by getattr above
    if fmt == "json":
        handler.setFormatter(JsonFormatter(time_encoding or "epoch", stack))
    else:
        handler.setFormatter(TextFormatter(time_encoding or "rfc3339", stack))
    handler.addFilter(ReconcileContextFilter())
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    if root.level > logging.DEBUG:
        # One INFO line per HTTP request drowns everything else; keep them for debug level.
        for noisy in ("httpx2", "httpx", "httpcore", "httpcore2"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    return handler
