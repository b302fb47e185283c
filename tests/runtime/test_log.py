"""FieldsFormatter: structured fields appended to another formatter's first line."""

from __future__ import annotations

import logging

from pyscaffold_op.runtime.controller.request import Request
from pyscaffold_op.runtime.log import FieldsFormatter, reconcile_context


def _record(msg: str, exc: BaseException | None = None, **extra: object) -> logging.LogRecord:
    logger = logging.getLogger("test.fields")
    exc_info = (type(exc), exc, exc.__traceback__) if exc is not None else None
    return logger.makeRecord(logger.name, logging.ERROR, __file__, 1, msg, (), exc_info, extra=extra)


def test_fields_follow_the_inner_formatters_line() -> None:
    formatter = FieldsFormatter(logging.Formatter("%(levelname)s %(message)s"))
    record = _record("Reconciler error", error="409 Conflict: stale", errorType="Conflict")
    assert formatter.format(record) == "ERROR Reconciler error error=409 Conflict: stale errorType=Conflict"


def test_a_record_without_fields_is_left_as_the_inner_formatter_wrote_it() -> None:
    formatter = FieldsFormatter(logging.Formatter("%(name)s: %(message)s"))
    assert formatter.format(_record("plain")) == "test.fields: plain"


def test_fields_go_on_the_first_line_before_a_traceback() -> None:
    try:
        raise ValueError("boom")
    except ValueError as err:
        record = _record("Reconciler error", err, error="boom")
    lines = FieldsFormatter(logging.Formatter("%(message)s")).format(record).splitlines()
    assert lines[0] == "Reconciler error error=boom"
    assert lines[1] == "Traceback (most recent call last):" and lines[-1] == "ValueError: boom"


def test_the_reconcile_context_is_added_to_records_made_during_a_reconcile() -> None:
    formatter = FieldsFormatter(logging.Formatter("%(message)s"))
    with reconcile_context("memcached", Request(name="mc", namespace="default"), "abc123"):
        line = formatter.format(_record("creating the Deployment"))  # handlers format as the record is made
    assert line == (
        "creating the Deployment controller=memcached namespace=default name=mc reconcileID=abc123"
    )
    with reconcile_context(
        "memcached", Request(name="mc", namespace="default"), "abc", ("cache.example.com", "Memcached")
    ):
        line = formatter.format(_record("creating the Deployment"))
    assert line == (
        "creating the Deployment controller=memcached controllerGroup=cache.example.com"
        " controllerKind=Memcached Memcached=default/mc namespace=default name=mc reconcileID=abc"
    )
