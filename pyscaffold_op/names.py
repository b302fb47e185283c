"""Every naming rule of a project in one place: DNS names, versions, kinds, Python module names, plurals.

Below the scaffolder and the PROJECT loader, so flags and the values read back from PROJECT pass the
same checks."""

from __future__ import annotations

import keyword
import re
import sys

from pyscaffold_op.apimachinery.naming import pluralize
from pyscaffold_op.apimachinery.validation import is_dns1123_label, is_dns1123_subdomain
from pyscaffold_op.errors import ValidationError
from pyscaffold_op.project import api_module_path, group_module_name, package_name_from_repo

__all__ = [
    "api_module_path",
    "group_module_name",
    "package_name_from_repo",
    "pascal_case",
    "pluralize",
    "project_name_from_folder",
    "project_name_from_repo",
    "snake_case",
    "validate_dns1123_label",
    "validate_dns1123_subdomain",
    "validate_group",
    "validate_kind",
    "validate_package_name",
    "validate_plural",
    "validate_qualified_group",
    "validate_repo",
    "validate_version",
]

# Applied with `fullmatch`: Python's `$` also matches before a trailing newline, so `re.match("^...$")`
# would accept "v1\n".
_VERSION = re.compile(r"v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?")
_KIND = re.compile(r"[A-Z][A-Za-z0-9]*")


def _dns1123(value: str, what: str, problems: list[str], shape: str) -> str:
    if not value or problems:
        raise ValidationError(f"invalid {what} {value!r}: must be a DNS-1123 {shape}")
    return value


def validate_dns1123_subdomain(value: str, what: str) -> str:
    """A DNS-1123 subdomain: lower-case alphanumerics, '-' and '.', at most 253 characters."""
    shape = "subdomain (lower-case letters, digits, '-' and '.', starting and ending with an alphanumeric"
    return _dns1123(value, what, is_dns1123_subdomain(value), f"{shape}, at most 253 characters)")


def validate_dns1123_label(value: str, what: str) -> str:
    """A DNS-1123 label: lower-case alphanumerics and '-', at most 63 characters."""
    shape = "label (lower-case letters, digits and '-', starting and ending with an alphanumeric"
    return _dns1123(value, what, is_dns1123_label(value), f"{shape}, at most 63 characters)")


def validate_group(group: str) -> str:
    """A group is a DNS-1123 subdomain; it may be empty only for the core group."""
    if group == "":
        return group
    return validate_dns1123_subdomain(group, "group")


def validate_qualified_group(group: str, domain: str) -> str:
    """`<group>.<domain>`, the group the API server knows, is at most 253 characters (checked once the
    PROJECT's domain is known)."""
    full = f"{group}.{domain}" if domain and group else group
    if len(full) > 253:
        raise ValidationError(f"invalid group {group!r}: {full!r} is longer than 253 characters")
    return group


def snake_case(kind: str) -> str:
    """`CronJob` -> `cron_job`: the kind's variable in the scaffolded code."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])|(?<=[A-Z])([A-Z])(?=[a-z])", r"_\1\2", kind).lower()


def pascal_case(module: str) -> str:
    """`cron_job` -> `CronJob`."""
    return "".join(part[:1].upper() + part[1:] for part in module.split("_"))


def validate_version(version: str) -> str:
    """Kubernetes API versions: v<N>, optionally followed by alpha<N> or beta<N>."""
    if not _VERSION.fullmatch(version):
        raise ValidationError(
            f"invalid version {version!r}: must be v<N> optionally followed by alpha<N> or beta<N> "
            "(for example v1, v1alpha1, v2beta3)"
        )
    return version


def validate_kind(kind: str) -> str:
    """CamelCase, starts upper-case, alphanumeric, not a Python keyword.

    A standard-library name is fine (`Site`, `Queue`, `Operator`, `Resource`): the kind's modules are
    `<kind>_types.py` and `<kind>_controller.py`, which shadow nothing, like kubebuilder's `<kind>_types.go`.
    A module built into the interpreter (`Sys`, `Time`, `Gc`, ...) is refused: the scaffolded reconciler
    binds the lower-cased kind as a local variable, and those modules are the ones code reaches for
    everywhere, so `time = await client.get(Time, ...)` would make `time.monotonic()` in the same
    function an UnboundLocalError.
    """
    if not _KIND.fullmatch(kind):
        raise ValidationError(
            f"invalid kind {kind!r}: must be CamelCase, start with an upper-case letter and contain "
            "only letters and digits"
        )
    if len(kind) > 63:  # kubebuilder: the lower-cased kind must be a DNS-1035 label
        raise ValidationError(
            f"invalid kind {kind[:20]!r}...: must be at most 63 characters, not {len(kind)}"
        )
    lower = kind.lower()
    if keyword.iskeyword(lower) or keyword.iskeyword(kind):
        raise ValidationError(f"invalid kind {kind!r}: {lower!r} is a Python keyword")
    if lower in sys.builtin_module_names:
        raise ValidationError(
            f"invalid kind {kind!r}: {lower!r} would shadow the built-in module {lower!r} in the "
            "scaffolded code; choose another name"
        )
    return kind


# golang.org/x/mod/module.CheckImportPath: the characters a path element may hold
_REPO_ELEMENT = re.compile(r"[A-Za-z0-9._~+-]+")


def validate_repo(repo: str) -> str:
    """A Go module path such as `github.com/owner/name` (golang.org/x/mod's CheckImportPath rules):
    elements of letters, digits and `-._~+`, none empty, none starting or ending with a dot (so no
    `.` or `..`); no scheme, no spaces. Leading and trailing slashes are dropped."""
    rule = "must be a Go module path such as github.com/owner/name"
    if not repo or repo != repo.strip() or " " in repo or "://" in repo or not repo.strip("/"):
        raise ValidationError(f"invalid repo {repo!r}: {rule} (no scheme, no spaces)")
    path = repo.strip("/")
    for elem in path.split("/"):
        if not elem:
            raise ValidationError(f"invalid repo {repo!r}: {rule}; it has an empty element (//)")
        if not _REPO_ELEMENT.fullmatch(elem):
            raise ValidationError(
                f"invalid repo {repo!r}: {rule}; element {elem!r} may hold only letters, digits and -._~+"
            )
        if elem.startswith(".") or elem.endswith("."):
            raise ValidationError(
                f"invalid repo {repo!r}: {rule}; element {elem!r} may not start or end with a dot"
            )
    return path


def project_name_from_repo(repo: str) -> str:
    """The repo's last element, lower-cased, '_' and '.' turned into '-'."""
    last = repo.rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"[_.]", "-", last).lower()


def project_name_from_folder(folder: str) -> str:
    """`pyop init`'s default project name: the project folder's name, lower-cased (kubebuilder's rule),
    with '_' and '.' turned into '-' (`my_operator` -> `my-operator`)."""
    return re.sub(r"[_.]", "-", folder).lower()


def validate_package_name(package: str, repo: str, *, check_installed: bool = True) -> str:
    """The Python package derived from the repo must be importable and must not shadow stdlib."""
    if not package.isidentifier() or keyword.iskeyword(package) or package.startswith("_"):
        raise ValidationError(
            f"invalid repo {repo!r}: its last element gives the Python package {package!r}, which is "
            "not a valid Python identifier"
        )
    if package in sys.stdlib_module_names or package in {"pyscaffold_op", "tests", "test", "src"}:
        raise ValidationError(
            f"invalid repo {repo!r}: its last element gives the Python package {package!r}, which "
            "shadows a standard-library or pyop module"
        )
    installed = installed_module_path(package) if check_installed else None
    if installed is not None:
        raise ValidationError(
            f"invalid repo {repo!r}: its last element gives the Python package {package!r}, which "
            f"shadows the installed module {package!r} ({installed}) that pyop or its dependencies may "
            "import; choose another last element for --repo"
        )
    return package


def installed_module_path(name: str) -> str | None:
    """Where a third-party top-level module `name` is installed (in site-packages), else None.

    `pyop generate` and `make run` put the project's `src/` first on `sys.path`, so a project package with
    the name of an installed module (`six`, `yaml`, `attr`) hides it from every library importing it.
    A module found elsewhere (an editable install of an earlier project of that name) does not count.
    """
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    origin = spec.origin or next(iter(spec.submodule_search_locations or []), None)
    if not origin:
        return None
    parts = set(re.split(r"[\\/]", origin))
    return origin if parts & {"site-packages", "dist-packages"} else None


def validate_plural(plural: str) -> str:
    """A resource plural is a lower-case DNS-1123 label."""
    validate_dns1123_label(plural, "plural")
    return plural
