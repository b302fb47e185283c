"""The undo journal: what `pyop create api` and `pyop create webhook` added to a project, recorded in
`.pyop-apis.yml` for `pyop delete api` and `pyop delete webhook`.

Every edit of a shared file is recorded with its inverse and with what needs it (`Edit`). An
`Insertion` (create api) is inverted by its operation (`remove_statement`, `remove_list_entry`, ...)
and is needed by its API and by every other API that recorded the same insertion; a `Change`
(create webhook) is a block of lines, the lines it put in (`after`) and those they replaced (`before`),
found again by exact match, and carries a `Need`: the webhooks that still use it. Files are recorded
the same way: with their digest, and for webhooks with their `Need`. `planner.Planner` writes the journal.

Per API (group, version, kind): the files it wrote with their SHA-256 (so an edited file is told from an
untouched one without re-rendering, which would call every file "edited" once pyop's templates change),
the shared files it created (package `__init__.py`, kustomizations) with the digest of their content
without this API's lines, the generated CRD, and every line it inserted into shared files.

The file is YAML written in its JSON form (comments, then one JSON document): it grows by ~3 KB per
API, and PyYAML's constructor and representer cost ~4 ms per API on every `create api`, which then
slowed as kinds accumulated; JSON reads and writes it in ~1 ms for 50 APIs. A record in block YAML
(older pyop, or edited by hand) is still read.

`create api --force` re-records the hashes of the files it rewrites; `pyop edit` re-records those it
rewrites (license headers, RBAC markers) when they were untouched; `pyop upgrade` does not touch them.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Literal

from pydantic import BaseModel, Field

from pyscaffold_op.errors import ProjectError
from pyscaffold_op.project import Project
from pyscaffold_op.scaffold import edits, pysource

RECORD_FILE = ".pyop-apis.yml"
_HEADER = (
    "# Written by pyop create api: what each API added, so `pyop delete api` removes exactly that\n"
    "# and can tell the files you edited since (their SHA-256 differs). Keep it under version control.\n"
)


def digest(content: str | bytes) -> str:
    data = content.encode("utf-8") if isinstance(content, str) else content
    return "sha256:" + hashlib.sha256(data).hexdigest()


InsertionOp = Literal["statement", "entry", "enable", "env"]
WebhookType = Literal["defaulting", "validation", "conversion"]
ALL_TYPES: tuple[WebhookType, ...] = ("defaulting", "validation", "conversion")
ADMISSION: tuple[WebhookType, ...] = ("defaulting", "validation")


class Need(BaseModel):
    """Which webhooks use a file or a change: any of `types` on a resource matching the set fields."""

    group: str = ""
    version: str = ""
    kind: str = ""
    types: list[WebhookType] = Field(default_factory=lambda: list(ALL_TYPES))

    def met(self, project: Project) -> bool:
        for resource in project.resources:
            hooks = resource.webhooks
            if hooks is None:
                continue
            wanted = {"group": self.group, "version": self.version, "kind": self.kind}
            if any(value and getattr(resource, field) != value for field, value in wanted.items()):
                continue
            if any(getattr(hooks, t) for t in self.types):
                return True
        return False


class Edit(BaseModel):
    """One edit of a shared file: `revert` is its inverse (None when it cannot be found again)."""

    file: str

    def revert(self, text: str) -> str | None:
        raise NotImplementedError


class Insertion(Edit):
    """One statement `create api` put into a shared file (see `edits`, `pysource`), inverted by its `op`."""

    op: InsertionOp
    """statement: Python lines at a scaffold marker; entry: a kustomization list entry;
    enable: `#- x` made `- x`; env: an env var of the manager container (`create api --image`)."""
    text: str
    changed: bool = True
    """False when the statement was already there (another version of the kind put it): not this API's."""

    def key(self) -> tuple[str, str, str]:
        return (self.file, self.op, self.text)

    def revert(self, text: str) -> str:
        if self.op == "statement":
            return pysource.remove_statement(text, self.text)
        if self.op == "entry":
            return edits.remove_list_entry(text, self.text)
        if self.op == "env":
            from pyscaffold_op.scaffold import deployimage

            return deployimage.remove_env(text, self.text.partition("=")[0])
        return edits.disable_list_entry(text, self.text)


class OwnedFile(BaseModel):
    digest: str
    need: Need


class Change(Edit):
    """A block of lines `create webhook` changed in a shared file, inverted by putting `before` back."""

    before: str
    after: str
    need: Need

    def revert(self, text: str) -> str | None:
        """The text with `after` put back to `before`; None when `after` is not there exactly once (in a
        Python file: not even as ruff may have re-wrapped it)."""
        lines = text.splitlines(keepends=True)
        block = self.after.splitlines(keepends=True)
        hits = [i for i in range(len(lines) - len(block) + 1) if lines[i : i + len(block)] == block]
        if len(hits) == 1:
            return "".join([*lines[: hits[0]], self.before, *lines[hits[0] + len(block) :]])
        if self.file.endswith(".py"):  # ruff may have wrapped the lines put in (a long import)
            span = pysource.find_reformatted(lines, self.after)
            if span is not None:
                return "".join([*lines[: span[0]], self.before, *lines[span[1] :]])
        return None


def changes(file: str, old: str, new: str, need: Need) -> list[Change]:
    """The line blocks that turn `old` into `new`, each widened by context until it occurs once in `new`."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        while j2 - j1 == 0 or _count(b, b[j1:j2]) != 1:
            grow_up = j1 > 0 and i1 > 0
            grow_down = j2 < len(b) and i2 < len(a)
            if not (grow_up or grow_down):
                break  # `revert` will refuse it
            if grow_up:
                i1, j1 = i1 - 1, j1 - 1
            if grow_down:
                i2, j2 = i2 + 1, j2 + 1
        out.append(Change(file=file, before="".join(a[i1:i2]), after="".join(b[j1:j2]), need=need))
    return out


def _count(lines: list[str], block: list[str]) -> int:
    return sum(lines[i : i + len(block)] == block for i in range(len(lines) - len(block) + 1))


class WebhookKind(BaseModel):
    group: str
    version: str
    kind: str


class WebhookRecord(BaseModel):
    kinds: list[WebhookKind] = Field(default_factory=list)
    """The resources whose webhooks were created with a record (older ones cannot be deleted)."""
    files: dict[str, OwnedFile] = Field(default_factory=dict)
    changes: list[Change] = Field(default_factory=list)

    def has(self, group: str, version: str, kind: str) -> bool:
        return WebhookKind(group=group, version=version, kind=kind) in self.kinds

    def empty(self) -> bool:
        return not (self.kinds or self.files or self.changes)


class ApiRecord(BaseModel):
    group: str
    version: str
    kind: str
    files: dict[str, str] = Field(default_factory=dict)
    """Files this API wrote -> their digest."""
    created: dict[str, str] = Field(default_factory=dict)
    """Shared files this API created -> the digest of their content without this API's insertions."""
    generated: list[str] = Field(default_factory=list)
    """What `make manifests` writes for it (the CRD), removed with it."""
    insertions: list[Insertion] = Field(default_factory=list)

    def same_gvk(self, group: str, version: str, kind: str) -> bool:
        return (self.group, self.version, self.kind) == (group, version, kind)

    def merged(self, newer: ApiRecord) -> ApiRecord:
        """This record after another `create api` for the same API (`--force`, a controller added)."""
        insertions = {i.key(): i for i in self.insertions}
        for insertion in newer.insertions:
            old = insertions.get(insertion.key())
            changed = insertion.changed or (old is not None and old.changed)
            insertions[insertion.key()] = insertion.model_copy(update={"changed": changed})
        return self.model_copy(
            update={
                "files": {**self.files, **newer.files},
                "created": {**newer.created, **self.created},
                "generated": sorted({*self.generated, *newer.generated}),
                "insertions": list(insertions.values()),
            }
        )


class Record(BaseModel):
    apis: list[ApiRecord] = Field(default_factory=list)
    webhooks: WebhookRecord = Field(default_factory=WebhookRecord)
    """What `pyop create webhook` added (absent from records written before it kept one)."""

    def find(self, group: str, version: str, kind: str) -> ApiRecord | None:
        return next((a for a in self.apis if a.same_gvk(group, version, kind)), None)

    def with_api(self, api: ApiRecord) -> Record:
        old = self.find(api.group, api.version, api.kind)
        if old is None:
            return Record(apis=[*self.apis, api], webhooks=self.webhooks)
        return Record(apis=[old.merged(api) if a is old else a for a in self.apis], webhooks=self.webhooks)

    def without(self, api: ApiRecord) -> Record:
        return Record(apis=[a for a in self.apis if a is not api], webhooks=self.webhooks)

    def empty(self) -> bool:
        return not self.apis and self.webhooks.empty()

    def dump(self) -> str:
        data = self.model_dump(mode="json", exclude={"webhooks"} if self.webhooks.empty() else None)
        return _HEADER + json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def load_record(text: str | None) -> Record:
    """The record from the file's text (None: no file yet, an empty record)."""
    if text is None:
        return Record()
    import yaml

    body = text.lstrip()
    while body.startswith("#"):  # the header comments; JSON has none
        body = body.partition("\n")[2].lstrip()
    try:
        try:
            data = json.loads(body) if body else {}
        except ValueError:  # block YAML: an older record, or one edited by hand
            data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
        return Record.model_validate(data)
    except (yaml.YAMLError, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ProjectError(f"cannot read {RECORD_FILE}: {first}") from err
