"""The built-in models' descriptions (issue 29 item 5): the real kube-apiserver's text as class and
attribute docstrings, shown by pyright's hover (the judge: a `textDocument/hover` request to
`pyright-langserver`), at no run-time cost (field docstrings are not in the compiled code)."""

from __future__ import annotations

import ast
import inspect
import json
import os
import shutil
import subprocess
import types
from pathlib import Path
from typing import Any

import pytest

from pyscaffold_op.dev import model_docs
from pyscaffold_op.dev.models import MODULES
from pyscaffold_op.models import spec

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "pyscaffold_op" / "models"
PREFIX_OF = {module: prefix for prefix, module in MODULES.items()}


def _words(text: str) -> str:
    return " ".join(text.split())


def _generated_classes() -> list[tuple[str, ast.ClassDef, Path]]:
    """(definition name, class, file) of every generated class."""
    out = []
    for path in sorted(MODELS.rglob("*.py")):
        module = path.parent.name if path.parent != MODELS else path.stem
        if module not in PREFIX_OF:
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                out.append((PREFIX_OF[module] + node.name, node, path))
    return out


def _field_docstrings(node: ast.ClassDef) -> dict[str, str]:
    """wire name -> the docstring right after that field."""
    out = {}
    for stmt, after in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            name = model_docs.wire_name(stmt)
            assert name is not None
            out[name] = after.value.value
    return out


def test_every_generated_class_and_field_carries_the_servers_description() -> None:
    server = model_docs.load()
    classes = _generated_classes()
    assert len(classes) > 400
    fields = 0
    for definition, node, path in classes:
        described = server[definition]
        assert _words(inspect.cleandoc(ast.get_docstring(node) or "")) == _words(
            described.get(model_docs.CLASS, "")
        ), f"{path.name}: {node.name}"
        docs = _field_docstrings(node)
        names = {model_docs.wire_name(s) for s in node.body if isinstance(s, ast.AnnAssign)}
        # every field is found under its wire name: the docstrings looked for are the right ones
        short = f"{path.parent.name if path.parent != MODELS else path.stem}.{node.name}"
        assert names <= set(spec.definition(short).get("properties", {})), short
        want = {name: text for name, text in described.items() if name in names}
        assert {n: _words(inspect.cleandoc(d)) for n, d in docs.items()} == {
            n: _words(t) for n, t in want.items()
        }, f"{path.name}: {node.name}"
        fields += len(docs)
    assert fields


def _strings(code: types.CodeType) -> set[str]:
    found = {c for c in code.co_consts if isinstance(c, str)}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _strings(const)
    return found


def test_field_docstrings_are_not_in_the_compiled_code_and_pydantic_ignores_them() -> None:
    from pyscaffold_op.models.core_v1 import Container, Pod

    path = MODELS / "core_v1" / "_pod_spec.py"
    source = path.read_text()
    compiled = _strings(compile(source, str(path), "exec"))
    container = next(n for _d, n, p in _generated_classes() if p == path and n.name == "Container")
    docs = _field_docstrings(container)
    assert "imagePullPolicy" in docs
    assert not set(docs.values()) & compiled  # CPython dropped every one
    assert ast.get_docstring(container, clean=False) in compiled  # the class's own: its __doc__
    assert inspect.cleandoc(Container.__doc__ or "").startswith("A single application container")
    assert (Pod.__doc__ or "").startswith("Pod is a collection of containers")
    assert Container.model_fields["image_pull_policy"].description is None  # use_attribute_docstrings off


@pytest.mark.parametrize(
    "text",
    [
        'ends in a quote "x"',
        'holds """ three quotes and a \\d backslash',
        "a long line " * 30,
        'Possible enum values:\n - `"A"` first, ' + "long " * 40 + '\n - `"B"` second',
        "para one\n\npara two",
    ],
)
def test_a_docstring_round_trips_its_text(text: str) -> None:
    source = f"class C:\n    x: int\n{model_docs.docstring(text, '    ')}"
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)
    doc = node.body[1]
    assert isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
    assert isinstance(doc.value.value, str)
    assert _words(doc.value.value) == _words(text)
    assert all(len(line) <= model_docs.WIDTH for line in source.splitlines() if " " in line.strip())


# -- the judge: pyright's hover --------------------------------------------------------------------------
class LanguageServer:
    """A minimal LSP client of `pyright-langserver --stdio` (JSON-RPC with Content-Length framing)."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            ["pyright-langserver", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": "project"}],
                "capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown"]}}},
            },
        )
        self.notify("initialized", {})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        length = 0
        while (line := self.proc.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        assert length, "pyright-langserver closed its output"
        message: dict[str, Any] = json.loads(self.proc.stdout.read(length))
        return message

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any] | None) -> Any:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self._receive()
            if "method" in message and "id" in message:  # the server asks: its defaults will do
                items = (message.get("params") or {}).get("items", [])
                self._send({"id": message["id"], "result": [None] * len(items) or None})
            elif message.get("id") == self.next_id:
                return message.get("result")

    def hover(self, path: Path, line: int, character: int) -> str:
        uri = path.as_uri()
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": path.read_text()}},
        )
        result = self.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
        )
        return str((result or {}).get("contents", {}).get("value", ""))

    def close(self) -> None:
        self.request("shutdown", None)
        self.notify("exit", {})
        self.proc.wait(30)


@pytest.mark.slow
def test_pyright_hover_shows_the_descriptions(tmp_path: Path) -> None:
    if shutil.which("pyright-langserver") is None:
        pytest.skip("pyright-langserver is not on PATH (pip install pyright)")
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({"extraPaths": [str(REPO)]}))
    use = tmp_path / "use.py"
    lines = [
        "from pyscaffold_op.models.core_v1 import Pod",
        "def f(pod: Pod) -> None:",
        "    assert pod.spec",
        "    pod.spec.containers[0].image_pull_policy",
    ]
    use.write_text("\n".join(lines) + "\n")
    server = LanguageServer(tmp_path)
    try:
        field = server.hover(use, 3, lines[3].index("image_pull_policy") + 3)
        kind = server.hover(use, 0, lines[0].index("Pod") + 1)
    finally:
        server.close()
    described = model_docs.load()
    assert "image_pull_policy: str | None" in field
    assert _words(described["io.k8s.api.core.v1.Container"]["imagePullPolicy"]) in _words(field)
    assert "class Pod(" in kind
    assert _words(described["io.k8s.api.core.v1.Pod"][model_docs.CLASS]) in _words(kind)
