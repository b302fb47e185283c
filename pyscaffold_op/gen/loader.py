"""Import a project's API packages and find its kinds, as the design contract says.

`<root>/src` goes on sys.path, every module under each API version package is imported, and the
`CustomResource` subclasses defined there (with a `gvk`) are the kinds. The project's modules are
purged from `sys.modules` before and after, so several projects with the same package name can be
generated in one process (tests, the scaffolder's golden regeneration).
"""

from __future__ import annotations

import importlib
import linecache
import pkgutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyscaffold_op.apimachinery import CustomResource
from pyscaffold_op.errors import GenerateError
from pyscaffold_op.project import Project


def purge_package(package: str) -> None:
    """Forget every imported module of `package` (and the kinds they registered)."""
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
    for gvk, cls in list(CustomResource.registry.items()):
        if cls.__module__ == package or cls.__module__.startswith(package + "."):
            del CustomResource.registry[gvk]


@contextmanager
def project_imports(root: Path, package: str) -> Iterator[None]:
    """`<root>/src` on sys.path and a clean slate for `package`, restored afterwards."""
    src = str((root / "src").resolve())
    purge_package(package)
    sys.path.insert(0, src)
    importlib.invalidate_caches()
    linecache.clearcache()  # gen.markers reads sources through linecache: no stale ones
    # pydantic's own attribute-docstring reading is off on KubeModel (apimachinery/resource.py): the
    # generator reads docstrings itself, with the markers, one parse per file.
    try:
        yield
    finally:
        if src in sys.path:
            sys.path.remove(src)
        purge_package(package)


def _import(name: str) -> object:
    try:
        return importlib.import_module(name)
    except GenerateError:
        raise
    except Exception as err:  # a user's module may raise anything at import time
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        where = _user_frame(err)
        at = f" (at {where})" if where and not isinstance(err, SyntaxError) else ""
        raise GenerateError(f"cannot import {name}: {type(err).__name__}: {first}{at}") from err


_PREFIXES = {sys.prefix, sys.base_prefix}


def _user_frame(err: BaseException) -> str | None:
    """`file:line` of the innermost traceback frame in the user's code (not a library's, not pyop's)."""
    import traceback

    pyop_dir = str(Path(__file__).resolve().parents[1])
    found = None
    for frame in traceback.extract_tb(err.__traceback__):
        filename = frame.filename
        if filename.startswith("<") or filename.startswith(pyop_dir):
            continue
        if {"site-packages", "dist-packages"} & set(Path(filename).parts):
            continue
        if any(Path(filename).resolve().is_relative_to(Path(p).resolve() / "lib") for p in _PREFIXES):
            continue  # the standard library (importlib.import_module)
        found = f"{filename}:{frame.lineno}"
    return found


_PACKAGE_MARKER_FILES = ("__init__.py", "groupversion_info.py")


def skipped(package_dir: Path) -> bool:
    """Whether a version package says `# +kubebuilder:skip` (controller-gen: not an API version)."""
    from pyscaffold_op.gen.markers import file_markers

    return any(
        file_markers(package_dir / name, ("kubebuilder:skip",))
        for name in _PACKAGE_MARKER_FILES
        if (package_dir / name).is_file()
    )


def load_kinds(project: Project, root: Path | None = None) -> list[type[CustomResource]]:
    """The kinds defined under the project's API version packages, in a stable order (packages
    marked `+kubebuilder:skip` left out when `root` is given)."""
    modules: list[str] = []
    for resource in project.resources:
        if resource.api is None:
            continue  # a controller for a kind of another API (core, apps, ...)
        module = project.api_module(resource)
        if root is not None and skipped(project.api_dir(root, resource)):
            continue
        if module not in modules:
            modules.append(module)
    kinds: dict[tuple[str, str, str], type[CustomResource]] = {}
    for module_name in modules:
        package = _import(module_name)
        names = [module_name]
        if hasattr(package, "__path__"):
            names += sorted(info.name for info in pkgutil.walk_packages(package.__path__, module_name + "."))
        for name in names:
            mod = _import(name)
            for value in vars(mod).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, CustomResource)
                    and value.__module__ == name
                    and "gvk" in value.__dict__
                ):
                    group, version, kind = value.gvk
                    kinds[(group, version, kind)] = value
    for resource in project.resources:
        if resource.api is None or project.api_module(resource) not in modules:
            continue
        gvk = (resource.qualified_group(), resource.version, resource.kind)
        if gvk not in kinds:
            raise GenerateError(
                f"PROJECT lists {resource.kind} ({gvk[0]}/{gvk[1]}) but no CustomResource subclass "
                f"in {project.api_module(resource)} has gvk = GroupVersionKind{gvk!r}"
            )
    return [kinds[key] for key in sorted(kinds)]
