"""What `pyop create webhook` added, kept in `.pyop-apis.yml` (key `webhooks`) for `pyop delete webhook`.

Webhooks share much (config/webhook, certmanager, the manager patch, the server flags in `__main__.py`),
so each file and each change carries a `Need`: the webhooks that still use it. `delete webhook` takes out
whatever no remaining webhook of PROJECT needs. A change is a block of lines: the lines it put in a
shared file (`after`) and those they replaced (`before`), found again by exact match.
"""

from __future__ import annotations

import difflib
from typing import Literal

from pydantic import BaseModel, Field

from pyscaffold_op.project import Project

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


class OwnedFile(BaseModel):
    digest: str
    need: Need


class Change(BaseModel):
    file: str
    before: str
    after: str
    need: Need

    def revert(self, text: str) -> str | None:
        """The text with `after` put back to `before`; None when `after` is not there exactly once."""
        lines = text.splitlines(keepends=True)
        block = self.after.splitlines(keepends=True)
        hits = [i for i in range(len(lines) - len(block) + 1) if lines[i : i + len(block)] == block]
        if len(hits) != 1:
            return None
        at = hits[0]
        return "".join([*lines[:at], self.before, *lines[at + len(block) :]])


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
