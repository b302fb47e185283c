"""Render a copier template folder (`templates/init`) with jinja2 directly, the way copier renders it.

`pyop init` used to run copier itself, which costs ~0.5 s of imports (questionary, prompt_toolkit,
plumbum, pydantic-settings) and ~35 `git` processes for a folder of 30 small files. The template stays
a copier template (copier.yml, `.jinja` suffix, templated paths, an answers file) and this module
follows copier's rules for it:

- only the `_subdirectory` is rendered; copier's default excludes (`__pycache__`, `*.py[co]`, ...) apply;
- a file whose name ends with `_templates_suffix` is rendered as jinja2 and loses the suffix; other files
  are copied byte for byte; `X` is skipped when a templated `X.jinja` sits next to it;
- every path part is rendered; a part rendering to "" drops the file (`{% if ... %}name{% endif %}`);
- `_envops` configure the environment, with copier's `to_nice_yaml` filter (jinja2-ansible-filters');
- `_jinja_extensions` are loaded after it, pyop's own only (templates/init's `yamlio.YamlFilters`);
- the answers file gets `_copier_answers`: `_src_path` and every question not marked `when: false`.

tests/scaffold/test_tree.py renders the same template with copier and compares the trees byte for byte.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pyscaffold_op.errors import PyopError

# copier's DEFAULT_EXCLUDE: the configuration, and what no template revision is made of
_CONFIG = ("copier.yaml", "copier.yml")
_JUNK = ("~*", "*.py[co]", "__pycache__", ".git", ".DS_Store", ".svn")


def _excluded(parts: tuple[str, ...], patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(part, pattern) for part in parts for pattern in patterns)


@dataclass(frozen=True)
class TreeTemplate:
    """A copier template folder, read from its copier.yml."""

    root: Path
    subdirectory: str
    suffix: str
    answers_file: str
    envops: Mapping[str, Any]
    extensions: tuple[str, ...]
    recorded: tuple[str, ...]  # the questions copier writes to the answers file

    @classmethod
    def load(cls, root: Path) -> TreeTemplate:
        return _load(root)

    def answers(self, data: Mapping[str, Any], src_path: str) -> dict[str, Any]:
        """What copier records in the answers file for `data`.

        `_commit` is the template's revision: copier writes a git ref there; pyop's templates ship inside
        the package, so it is a digest of the template's files, which `pyop upgrade` matches.
        """
        missing = [name for name in self.recorded if name not in data]
        if missing:
            raise PyopError(f"template {self.root}: no value for {', '.join(missing)}")
        recorded = {name: data[name] for name in self.recorded}
        return {"_commit": self.revision(), "_src_path": src_path, **recorded}

    def revision(self) -> str:
        """A digest of every file of the template (copier.yml included): equal trees, equal revisions."""
        return _revision(self.root)

    def render(self, data: Mapping[str, Any], answers: Mapping[str, Any]) -> dict[str, bytes]:
        """Every file of the rendered tree: relative POSIX path -> content."""
        import jinja2

        env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, **self.envops)
        env.filters["to_nice_yaml"] = to_nice_yaml
        for extension in self.extensions:  # after copier's own filters, as copier loads them
            if not extension.startswith("pyscaffold_op."):  # a template never runs other code here
                raise PyopError(f"template {self.root}: jinja extension {extension} is not pyop's")
            env.add_extension(extension)
        context = {
            **data,
            "_copier_answers": dict(answers),
            "_copier_conf": {"answers_file": self.answers_file},
        }
        source = self.root / self.subdirectory
        out: dict[str, bytes] = {}
        for path in self._files(source):
            relpath = path.relative_to(source)
            is_template = bool(self.suffix) and relpath.name.endswith(self.suffix)
            if not is_template and path.with_name(path.name + self.suffix).is_file():
                continue
            if is_template:
                relpath = relpath.with_name(relpath.name[: -len(self.suffix)])
            parts = [_render_part(env, part, context) for part in relpath.parts]
            if not all(parts):
                continue
            if is_template:
                text = env.from_string(path.read_text(encoding="utf-8")).render(context)
                out["/".join(parts)] = text.encode("utf-8")
            else:
                out["/".join(parts)] = path.read_bytes()
        return out

    def _files(self, source: Path) -> Iterator[Path]:
        for path in sorted(source.rglob("*")):
            parts = path.relative_to(source).parts
            if path.is_file() and not _excluded(parts, _CONFIG + _JUNK):
                yield path


def revision_files(root: Path) -> Iterator[tuple[str, Path]]:
    """(relative POSIX path, path) of every file a template's revision covers, in digest order."""
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if path.is_file() and not _excluded(parts, _JUNK):
            yield "/".join(parts), path


@cache
def _revision(root: Path) -> str:
    digest = hashlib.sha256()
    for relpath, path in revision_files(root):
        digest.update(f"{relpath}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    return f"sha256-{digest.hexdigest()[:16]}"


def _render_part(env: Any, part: str, context: Mapping[str, Any]) -> str:
    # compiling a jinja2 template costs ~1 ms: most path parts are plain names
    if "{" not in part:
        return part
    return str(env.from_string(part).render(context))


@cache
def _load(root: Path) -> TreeTemplate:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    config = yaml.load((root / "copier.yml").read_text(encoding="utf-8"), Loader=loader)
    recorded = tuple(
        name
        for name, question in config.items()
        if not name.startswith("_") and not (isinstance(question, dict) and question.get("when") is False)
    )
    return TreeTemplate(
        root=root,
        subdirectory=config.get("_subdirectory", ""),
        suffix=config.get("_templates_suffix", ".jinja"),
        answers_file=config.get("_answers_file", ".copier-answers.yml"),
        envops=dict(config.get("_envops", {})),
        extensions=tuple(config.get("_jinja_extensions", ())),
        recorded=recorded,
    )


def to_nice_yaml(value: Any, indent: int = 4) -> str:
    """jinja2-ansible-filters' `to_nice_yaml` (what copier templates use): block style, sorted keys."""
    import yaml

    return str(
        yaml.dump(value, Dumper=yaml.SafeDumper, indent=indent, allow_unicode=True, default_flow_style=False)
    )
