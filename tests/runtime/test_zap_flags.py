"""controller-runtime's zap flags on a pyop manager: listed by --help and doing what they do in a
kubebuilder project's manager (zap.Options.BindFlags)."""

from __future__ import annotations

import io
import json
import logging

import pytest

from pyscaffold_op.runtime.log import encode_time, setup_logging
from pyscaffold_op.runtime.manager.cmd import manager_flag_parser, parse_manager_flags

ZAP_FLAGS = (
    "--zap-log-level",
    "--zap-encoder",
    "--zap-devel",
    "--zap-stacktrace-level",
    "--zap-time-encoding",
)


def test_help_lists_every_zap_flag() -> None:
    text = manager_flag_parser("manager").format_help()
    for flag in ZAP_FLAGS:
        assert flag in text, flag


def test_zap_values_map_to_the_managers_settings() -> None:
    assert parse_manager_flags(["--zap-log-level=panic"]).log_level == "critical"
    assert parse_manager_flags(["--zap-log-level=3"]).log_level == "debug"  # zap's V(3): debug
    assert parse_manager_flags(["--zap-encoder=console"]).log_format == "text"
    assert parse_manager_flags(["--zap-encoder=json"]).log_format == "json"
    devel = parse_manager_flags(["--zap-devel"])
    assert (devel.log_level, devel.log_format, devel.zap_stacktrace_level) == ("debug", "text", "warning")
    assert parse_manager_flags(["--zap-devel", "--zap-log-level=error"]).log_level == "error"  # explicit wins
    plain = parse_manager_flags([])
    assert (plain.log_level, plain.log_format, plain.zap_stacktrace_level) == ("info", "text", None)
    with pytest.raises(SystemExit):
        parse_manager_flags(["--zap-log-level=-1"])


def test_time_encodings_are_zaps() -> None:
    t = 1700000000.123456789
    assert encode_time(t, "epoch") == 1700000000.123457
    assert encode_time(t, "millis") == 1700000000123.457
    assert encode_time(t, "nano") == 1700000000123456768  # a float's precision, as time.time() gives
    assert encode_time(t, "iso8601") == "2023-11-14T22:13:20.123Z"
    assert encode_time(t, "rfc3339") == "2023-11-14T22:13:20Z"
    assert encode_time(1700000000.5, "rfc3339nano") == "2023-11-14T22:13:20.5Z"
    with pytest.raises(ValueError, match="time encoding must be one of"):
        encode_time(t, "unix")


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_the_stacktrace_level_keeps_errors_and_drops_tracebacks_below_it(fmt: str) -> None:
    out = io.StringIO()
    handler = setup_logging("info", fmt, out, stacktrace_level="error", time_encoding="rfc3339")
    try:
        log = logging.getLogger("zap.test")
        for level in (logging.WARNING, logging.ERROR):
            try:
                raise RuntimeError(f"boom at {level}")
            except RuntimeError:
                log.log(level, "failed", exc_info=True)
    finally:
        logging.getLogger().removeHandler(handler)
    text = out.getvalue()
    assert "boom at 30" in text and "boom at 40" in text  # the error always
    assert text.count("Traceback") == 1  # the error line's only
    assert text.index("Traceback") > text.index("boom at 30")
    if fmt == "json":
        warning, error = (json.loads(line) for line in text.splitlines() if line.startswith("{"))
        assert "stacktrace" not in warning and "stacktrace" in error
        assert warning["ts"].endswith("Z") and warning["error"] == "boom at 30"
