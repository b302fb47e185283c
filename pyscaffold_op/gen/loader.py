"""Import a project's API packages and find its kinds, as the design contract says.

`<root>/src` goes on sys.path, every module under each API version package is imported, and the
`CustomResource` subclasses defined there (with a `gvk`) are the kinds. The project's modules are
purged from `sys.modules` before and after, so several projects with the same package name can be
generated in one process (tests, the scaffolder's golden regeneration).
"""

from __future__ import annotations

import importlib
import linecache
import os
import pkgutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
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


def _import(name: str, watchdog: ImportWatchdog | None = None) -> object:
    if watchdog is not None:
        watchdog.importing(name)
    try:
        return importlib.import_module(name)
    except GenerateError:
        raise
    except SystemExit as exit_:  # sys.exit(0) at import time must not pass for a successful run
        code = "" if exit_.code is None else repr(exit_.code)
        where = _user_frame(exit_)
        at = f" (at {where})" if where else ""
        raise GenerateError(f"importing {name} called sys.exit({code}){at}") from None
    except Exception as err:  # a user's module may raise anything at import time
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        where = _user_frame(err)
        at = f" (at {where})" if where and not isinstance(err, SyntaxError) else ""
        raise GenerateError(f"cannot import {name}: {type(err).__name__}: {first}{at}") from err
    finally:
        if watchdog is not None:
            watchdog.importing(None)


IMPORT_TIMEOUT = 60.0
IMPORT_TIMEOUT_ENV = "PYOP_IMPORT_TIMEOUT"


def import_timeout() -> float:
    """Seconds one import of the project's API modules may take: `$PYOP_IMPORT_TIMEOUT`, else 60."""
    raw = os.environ.get(IMPORT_TIMEOUT_ENV, "")
    if not raw:
        return IMPORT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise GenerateError(f"${IMPORT_TIMEOUT_ENV}={raw!r}: not a positive number of seconds")
    return value


class ImportWatchdog:
    """A module that never returns from its import (it waits on a socket, a lock, input()) would hang
    the generator forever. One daemon thread per `load_kinds` watches the import in progress; after
    `timeout` seconds in one import it calls `on_expiry(module, where)`, by default printing one line
    naming the module (and the line of the project's code it waits in) and exiting with status 2, as
    `faulthandler.dump_traceback_later(exit=True)` would, but naming the module. The normal path costs
    one thread start per run and an attribute store per import (importing children in a subprocess
    would cost ~100x the generator's ~4 ms per kind)."""

    def __init__(
        self, timeout: float, src: Path, on_expiry: Callable[[str, str | None], None] | None = None
    ) -> None:
        self.timeout = timeout
        self.src = str(src)
        self.on_expiry = on_expiry or _exit_naming
        self._current: tuple[str, float] | None = None
        self._done = threading.Event()
        self._main = threading.get_ident()
        self._thread = threading.Thread(target=self._watch, name="pyop import watchdog", daemon=True)

    def __enter__(self) -> ImportWatchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()

    def importing(self, module: str | None) -> None:
        self._current = None if module is None else (module, time.monotonic())

    def _watch(self) -> None:
        while True:
            current = self._current
            delay = self.timeout if current is None else current[1] + self.timeout - time.monotonic()
            if current is not None and delay <= 0:
                self.on_expiry(current[0], self._where())
                return
            if self._done.wait(delay):
                return

    def _where(self) -> str | None:
        """`file:line` of the innermost frame of the importing thread in the project's sources."""
        frame = sys._current_frames().get(self._main)
        while frame is not None:
            if frame.f_code.co_filename.startswith(self.src):
                return f"{frame.f_code.co_filename}:{frame.f_lineno}"
            frame = frame.f_back
        return None


def _exit_naming(module: str, where: str | None) -> None:
    at = f" (waiting at {where})" if where else ""
    timeout = import_timeout()
    sys.stderr.write(
        f"error: importing {module} did not return in {timeout:g}s{at}; a module that waits at import "
        f"time hangs the generator (${IMPORT_TIMEOUT_ENV} sets the limit)\n"
    )
    sys.stderr.flush()
    os._exit(2)  # the importing thread cannot be interrupted: end the process, as faulthandler does


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


def _import_all(modules: list[str], watchdog: ImportWatchdog) -> list[tuple[str, object]]:
    """Every API version package and the modules under it, imported under the watchdog."""
    out: list[tuple[str, object]] = []
    for module_name in modules:
        package = _import(module_name, watchdog)
        names = [module_name]
        if hasattr(package, "__path__"):
            # walk_packages imports the subpackages it finds: watched, and a sys.exit() there named too
            watchdog.importing(module_name)
            try:
                found = pkgutil.walk_packages(package.__path__, module_name + ".")
                names += sorted(info.name for info in found)
            except SystemExit as exit_:
                code = "" if exit_.code is None else repr(exit_.code)
                raise GenerateError(
                    f"importing a package under {module_name} called sys.exit({code})"
                ) from None
            finally:
                watchdog.importing(None)
        out.extend((name, _import(name, watchdog)) for name in names)
    return out


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
    watchdog = ImportWatchdog(import_timeout(), ((root or Path.cwd()) / "src").resolve())
    with watchdog:
        imported = _import_all(modules, watchdog)
    for name, mod in imported:
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
