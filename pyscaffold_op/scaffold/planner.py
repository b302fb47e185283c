"""The planner of the create commands: every file they write and every edit of a shared file, planned in
memory (`transaction.FilePlan`) and journaled with its inverse and what needs it (`journal`).

`new` writes a file the resource owns (a different existing file is a clash unless --force), `ensure`
creates a shared file once, `insert` puts a statement into a shared file and journals its operation
(`create api`), `edit` changes a shared file and journals the changed line blocks with their `Need`
(`create webhook`). At the end the journal goes into `.pyop-apis.yml`, from the final (formatted) plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pyscaffold_op.errors import ProjectError
from pyscaffold_op.scaffold.journal import (
    RECORD_FILE,
    ApiRecord,
    Change,
    Insertion,
    InsertionOp,
    Need,
    OwnedFile,
    WebhookKind,
    changes,
    digest,
    load_record,
)
from pyscaffold_op.scaffold.render import render
from pyscaffold_op.scaffold.transaction import FilePlan


@dataclass(frozen=True)
class _Written:
    created: bool
    """A shared file this run created (`ensure`), not one the resource owns (`new`)."""
    need: Need | None


@dataclass
class Planner:
    plan: FilePlan
    force: bool
    clashes: list[str] = field(default_factory=list)
    files: dict[str, _Written] = field(default_factory=dict)
    insertions: list[Insertion] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)

    def _current(self, relpath: str) -> str:
        current = self.plan.read_current(relpath)
        if current is None:
            raise ProjectError(f"cannot edit {relpath}: the file is missing (was it made by `pyop init`?)")
        return current

    def new(self, relpath: str, content: str, need: Need | None = None) -> None:
        """A file the resource owns: an existing different file is a clash unless --force."""
        current = self.plan.read_current(relpath)
        if current is not None and current != content and not self.force:
            self.clashes.append(relpath)
        self.plan.write(relpath, content)
        self.files.setdefault(relpath, _Written(created=False, need=need))

    def ensure(self, relpath: str, content: str, need: Need | None = None) -> bool:
        """A shared file created once (package __init__, kustomization): never overwritten.
        Returns whether this run creates it."""
        if self.plan.read_current(relpath) is not None:
            return False
        self.plan.write(relpath, content)
        self.files.setdefault(relpath, _Written(created=True, need=need))
        return True

    def rewrite(self, relpath: str, change: Callable[[str], str], need: Need) -> None:
        """Change a file the resource owns in place (a conversion added to an existing webhook file)."""
        self.plan.write(relpath, change(self._current(relpath)))
        self.files.setdefault(relpath, _Written(created=False, need=need))

    def insert(self, relpath: str, op: InsertionOp, text: str, change: Callable[[str], str]) -> None:
        """Put `text` into a shared file with `change`; journaled with `op`, its inverse (`create api`)."""
        current = self._current(relpath)
        updated = change(current)
        self.insertions.append(Insertion(file=relpath, op=op, text=text, changed=updated != current))
        self.plan.write(relpath, updated)

    def edit(self, relpath: str, change: Callable[[str], str], need: Need) -> None:
        """Change a shared file; journaled as the changed line blocks and what needs them (create webhook)."""
        before = self._current(relpath)
        after = change(before)
        self.plan.write(relpath, after)
        self.changes.extend(changes(relpath, before, after, need))

    def package_inits(
        self,
        header: str,
        module: str,
        docstrings: dict[str, str],
        need_of: Callable[[str], Need] | None = None,
    ) -> None:
        """`__init__.py` for every package from `<pkg>.<x>` down to (not including) `module`."""
        parts = module.split(".")
        for depth in range(2, len(parts)):
            relpath = "src/" + "/".join(parts[:depth]) + "/__init__.py"
            docstring = docstrings.get(parts[depth - 1], f"The {parts[depth - 1]} package.")
            content = render("api/package_init.py.jinja", header=header, docstring=docstring)
            self.ensure(relpath, content, need_of(relpath) if need_of else None)

    def refuse_clashes(self, unless: Callable[[str], bool] = lambda relpath: False) -> None:
        clashes = [relpath for relpath in self.clashes if not unless(relpath)]
        if clashes:
            more = f" (and {len(clashes) - 1} more)" if len(clashes) > 1 else ""
            raise ProjectError(f"{clashes[0]} already exists{more}; pass --force to overwrite")

    def write_api_record(self, group: str, version: str, kind: str, generated: list[str]) -> None:
        """Journal what `create api` added, from the final (formatted) plan."""
        files = self.plan.files
        mine = [i for i in self.insertions if i.changed]
        created = {}
        for relpath in (r for r, written in self.files.items() if written.created):
            text = files[relpath].decode("utf-8")
            for insertion in mine:
                if insertion.file == relpath:
                    text = insertion.revert(text)
            created[relpath] = digest(text)
        api = ApiRecord(
            group=group,
            version=version,
            kind=kind,
            files={r: digest(files[r]) for r, written in self.files.items() if not written.created},
            created=created,
            generated=generated,
            insertions=self.insertions,
        )
        record = load_record(self.plan.read_current(RECORD_FILE))
        self.plan.write(RECORD_FILE, record.with_api(api).dump())

    def write_webhook_record(self, group: str, version: str, kind: str) -> None:
        """Journal what `create webhook` added, from the final (formatted) plan."""
        record = load_record(self.plan.read_current(RECORD_FILE))
        hooks = record.webhooks.model_copy(deep=True)
        webhook_kind = WebhookKind(group=group, version=version, kind=kind)
        if webhook_kind not in hooks.kinds:
            hooks.kinds.append(webhook_kind)
        for relpath, written in self.files.items():
            text = self.plan.read_current(relpath)
            assert text is not None and written.need is not None
            old = hooks.files.get(relpath)
            hooks.files[relpath] = OwnedFile(digest=digest(text), need=old.need if old else written.need)
        hooks.changes.extend(self.changes)
        self.plan.write(RECORD_FILE, record.model_copy(update={"webhooks": hooks}).dump())
