"""What `pyop create api` added to a project, recorded in `.pyop-apis.yml` for `pyop delete api`.

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

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, Field

from pyscaffold_op.errors import ProjectError
from pyscaffold_op.scaffold import edits
from pyscaffold_op.scaffold.webhook_record import WebhookRecord

RECORD_FILE = ".pyop-apis.yml"
_HEADER = (
    "# Written by pyop create api: what each API added, so `pyop delete api` removes exactly that\n"
    "# and can tell the files you edited since (their SHA-256 differs). Keep it under version control.\n"
)


def digest(content: str | bytes) -> str:
    data = content.encode("utf-8") if isinstance(content, str) else content
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Insertion(BaseModel):
    """One statement `create api` put into a shared file (see `edits`): its inverse is `revert`."""

    file: str
    op: Literal["statement", "entry", "enable", "env"]
    """statement: Python lines at a scaffold marker; entry: a kustomization list entry;
    enable: `#- x` made `- x`; env: an env var of the manager container (`create api --image`)."""
    text: str
    changed: bool = True
    """False when the statement was already there (another version of the kind put it): not this API's."""

    def key(self) -> tuple[str, str, str]:
        return (self.file, self.op, self.text)

    def revert(self, text: str) -> str:
        if self.op == "statement":
            return edits.remove_statement(text, self.text)
        if self.op == "entry":
            return edits.remove_list_entry(text, self.text)
        if self.op == "env":
            from pyscaffold_op.scaffold import deployimage

            return deployimage.remove_env(text, self.text.partition("=")[0])
        return edits.disable_list_entry(text, self.text)


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
