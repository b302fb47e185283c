"""Go's rules for import and module paths (golang.org/x/mod/module's CheckImportPath and CheckPath,
ported line by line) and kubebuilder's rule for an external API's path (its `resource.Validate`):
what `--external-api-path` and a Go `--external-api-module` must be. Each function returns the
problem, or None for a valid path; `tests/scaffold/test_external_flags.py` has kubebuilder judge them."""

from __future__ import annotations

import re

# Windows reserves these names whatever the extension: Go refuses them as path elements.
_BAD_WINDOWS_NAMES = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"COM{i}" for i in range(1, 10)] + [f"LPT{i}" for i in range(1, 10)]
)
_MODULE_CHARS = re.compile(r"[-._~0-9A-Za-z]")
_FIRST_ELEMENT_CHARS = re.compile(r"[-.0-9a-z]")
_TILDE_DIGITS = re.compile(r".*~[0-9]+")
# what may follow `@` in a `go get` target: a version, a branch, a commit or `latest`
_QUERY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+~/-]*")


def _element_problem(elem: str, module: bool) -> str | None:
    if elem == "":
        return "empty path element"
    if elem.count(".") == len(elem):
        return f"invalid path element {elem!r}"
    if elem[0] == "." and module:
        return "leading dot in path element"
    if elem[-1] == ".":
        return "trailing dot in path element"
    for char in elem:
        if not (_MODULE_CHARS.fullmatch(char) or (char == "+" and not module)):
            return f"invalid char {char!r}"
    short = elem.split(".", 1)[0]
    if short.upper() in _BAD_WINDOWS_NAMES:
        return f"{short!r} disallowed as path element component on Windows"
    if _TILDE_DIGITS.fullmatch(short):
        return "trailing tilde and digits in path element"
    return None


def _path_problem(path: str, module: bool) -> str | None:
    if path == "":
        return "empty string"
    if path[0] == "-":
        return "leading dash"
    if "//" in path:
        return "double slash"
    if path[-1] == "/":
        return "trailing slash"
    for elem in path.split("/"):
        problem = _element_problem(elem, module)
        if problem is not None:
            return problem
    return None


def import_path_problem(path: str) -> str | None:
    """module.CheckImportPath: elements of letters, digits and `-._~+`, none empty, `.`/`..`, ending
    with a dot or a Windows device name."""
    return _path_problem(path, module=False)


def _major_suffix_ok(path: str) -> bool:
    """module.SplitPathVersion's verdict: a trailing `/vN` is N >= 2 without a leading zero or a dot
    (gopkg.in paths end in `.vN`)."""
    digits = "0123456789"
    i = len(path)
    if path.startswith("gopkg.in/"):
        if path.endswith("-unstable"):
            i -= len("-unstable")
        while i > 0 and path[i - 1] in digits:
            i -= 1
        if i <= 1 or path[i - 1] != "v" or path[i - 2] != ".":
            return False
        major = path[i - 2 :]
        return not (len(major) <= 2 or (major[2] == "0" and major != ".v0"))
    dot = False
    while i > 0 and (path[i - 1] in digits or path[i - 1] == "."):
        dot = dot or path[i - 1] == "."
        i -= 1
    if i <= 1 or i == len(path) or path[i - 1] != "v" or path[i - 2] != "/":
        return True
    major = path[i - 2 :]
    return not (dot or len(major) <= 2 or major[2] == "0" or major == "/v1")


def module_path_problem(path: str) -> str | None:
    """module.CheckPath: an import path whose first element is a lower-case host name with a dot, and
    whose `/vN` suffix, if any, is a major version from 2."""
    problem = _path_problem(path, module=True)
    if problem is not None:
        return problem
    first = path.split("/", 1)[0]
    if "." not in first:
        return "missing dot in first path element"
    for char in first:
        if not _FIRST_ELEMENT_CHARS.fullmatch(char):
            return f"invalid char {char!r} in first path element"
    if not _major_suffix_ok(path):
        return "invalid version"
    return None


def external_api_path_problem(path: str) -> str | None:
    """kubebuilder's rule for an external resource's path: a Go import path without a version, fully
    qualified (a host with a dot first) and with a package below the host."""
    if "@" in path:
        return "version specifiers belong in --external-api-module, not the path"
    problem = import_path_problem(path)
    if problem is not None:
        return f"must be a valid Go import path: {problem}"
    first, _, rest = path.partition("/")
    if "." not in first or first.startswith("."):
        return "must be a fully-qualified Go import path (e.g. github.com/org/repo/api/v1)"
    if rest == "":
        return "must include a package sub-path (e.g. github.com/org/repo/api/v1)"
    return None


def go_module_target_problem(target: str) -> str | None:
    """A `go get` target as kubebuilder's `--external-api-module` takes it: a module path, optionally
    `@` and a version, branch or commit."""
    path, at, query = target.partition("@")
    problem = module_path_problem(path)
    if problem is not None:
        return f"not a Go module path: {problem}"
    if at and not _QUERY.fullmatch(query):
        return f"{query!r} after '@' is not a version, branch or commit"
    return None
