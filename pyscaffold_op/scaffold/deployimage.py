"""`create api --image`: kubebuilder's deploy-image/v1-alpha plugin (flags, and the manager's env var).

The scaffolded controller runs the image in a Deployment its custom resource owns. The image is read
at run time from the env var `<KIND>_IMAGE`, which this module adds to the manager container in
config/manager/manager.yaml (and removes again for `pyop delete api`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pyscaffold_op.errors import ProjectError, ValidationError

PLUGIN = "deploy-image/v1-alpha"
# kubebuilder accepts the plugin's full key too
PLUGIN_ALIASES = frozenset({PLUGIN, "deploy-image.go.kubebuilder.io/v1-alpha"})
MANAGER_YAML = "config/manager/manager.yaml"


@dataclass(frozen=True)
class DeployImage:
    image: str
    command: tuple[str, ...] = ()
    port: int | None = None
    run_as_user: int | None = None

    def env_var(self, kind: str) -> str:
        return f"{kind.upper()}_IMAGE"


def parse(
    *,
    plugins: str | None,
    image: str | None,
    command: str | None,
    port: str | None,
    run_as_user: str | None,
) -> DeployImage | None:
    """The deploy-image options from the raw flags, or None without `--image`. Raises ValidationError."""
    selected = [p.strip() for p in (plugins or "").split(",") if p.strip()]
    unknown = [p for p in selected if p not in PLUGIN_ALIASES]
    if unknown:
        raise ValidationError(f"unknown plugin {unknown[0]!r}: pyop create api supports --plugins {PLUGIN}")
    if image is None:
        if selected:
            raise ValidationError(f"--plugins {PLUGIN} needs --image (the container image to deploy)")
        extra = [
            flag
            for flag, value in (
                ("--image-container-command", command),
                ("--image-container-port", port),
                ("--run-as-user", run_as_user),
            )
            if value is not None
        ]
        if extra:
            raise ValidationError(f"{extra[0]} needs --image (the container image to deploy)")
        return None
    validate_image(image)
    return DeployImage(
        image=image,
        command=_command(command),
        port=_port(port),
        run_as_user=_user(run_as_user),
    )


def validate_image(image: str) -> None:
    """A reference the container runtime can pull, by distribution's grammar (docker-image-py)."""
    from docker_image import reference

    try:
        reference.Reference.parse(image)
    except Exception as err:  # the library raises one class per rule, all plain Exceptions
        raise ValidationError(f"invalid --image {image!r}: {err}") from None


def _command(raw: str | None) -> tuple[str, ...]:
    if raw is None:
        return ()
    parts = tuple(part.strip() for part in raw.split(","))
    if not all(parts):
        raise ValidationError(
            f"invalid --image-container-command {raw!r}: comma-separated words, none empty "
            '(for example "memcached,--memory-limit=64,-o,modern,-v")'
        )
    return parts


def _port(raw: str | None) -> int | None:
    if raw is None:
        return None
    if not re.fullmatch(r"[0-9]+", raw.strip()) or not 1 <= int(raw) <= 65535:
        raise ValidationError(f"invalid --image-container-port {raw!r}: must be a number from 1 to 65535")
    return int(raw)


def _user(raw: str | None) -> int | None:
    if raw is None:
        return None
    # runAsUser is an int64 UID; kubebuilder's flag is a string pasted into Go code
    if not re.fullmatch(r"[0-9]+", raw.strip()) or int(raw) > 2**63 - 1:
        raise ValidationError(f"invalid --run-as-user {raw!r}: must be a numeric user ID (for example 1001)")
    return int(raw)


# -- config/manager/manager.yaml ----------------------------------------------------------------------

_MANAGER_NAME = re.compile(r"^(?P<indent>\s*)(?P<dash>- )?name: manager\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _item_start(line: str, indent: int) -> bool:
    return line.lstrip().startswith("- ") and _indent(line) == indent


def _container_block(lines: list[str]) -> tuple[int, int, int]:
    """(first line, end line, key indent) of the container named `manager`."""
    for index, line in enumerate(lines):
        match = _MANAGER_NAME.match(line)
        if match is None:
            continue
        keys = len(match["indent"]) + (2 if match["dash"] else 0)
        start = index
        while start > 0 and not _item_start(lines[start], keys - 2):
            start -= 1
        end = index + 1
        while end < len(lines):
            stripped = lines[end].strip()
            if (
                stripped
                and not stripped.startswith("#")
                and (
                    _indent(lines[end]) < keys
                    or (_indent(lines[end]) == keys - 2 and stripped.startswith("- "))
                )
            ):
                break
            end += 1
        return start, end, keys
    raise ProjectError(f"cannot edit {MANAGER_YAML}: it has no container named manager")


def _env_line(lines: list[str], start: int, end: int, keys: int) -> int | None:
    return next(
        (i for i in range(start, end) if _indent(lines[i]) == keys and lines[i].strip() == "env:"), None
    )


def add_env(text: str, name: str, value: str) -> str:
    """`text` with `name: value` first in the manager container's env (an `env:` is added if missing)."""
    lines = text.splitlines()
    start, end, keys = _container_block(lines)
    at = next((i for i in range(start, end) if lines[i].strip() == f"- name: {name}"), None)
    if at is not None:  # `create api --force` with another image
        values = [i for i in range(at + 1, end) if lines[i].strip().startswith("value:")][:1]
        for i in values:
            lines[i] = lines[i][: _indent(lines[i])] + f"value: {value}"
        return "\n".join(lines) + ("\n" if text.endswith("\n") else "")
    entry = [f"- name: {name}", f"  value: {value}"]
    env = _env_line(lines, start, end, keys)
    if env is None:
        name_line = next(i for i in range(start, end) if _MANAGER_NAME.match(lines[i]))
        new = [" " * keys + "env:", *(" " * keys + line for line in entry)]
        lines[name_line + 1 : name_line + 1] = new
    else:
        item = next((_indent(line) for line in lines[env + 1 : end] if line.strip().startswith("- ")), keys)
        lines[env + 1 : env + 1] = [" " * item + line for line in entry]
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


def remove_env(text: str, name: str) -> str:
    """`text` without the manager container's env var `name` (and without `env:` once it is empty)."""
    lines = text.splitlines()
    try:
        start, end, keys = _container_block(lines)
    except ProjectError:
        return text
    at = next((i for i in range(start, end) if lines[i].strip() == f"- name: {name}"), None)
    if at is None:
        return text
    stop = at + 1
    while stop < end and lines[stop].strip() and _indent(lines[stop]) > _indent(lines[at]):
        stop += 1
    del lines[at:stop]
    end -= stop - at
    env = _env_line(lines, start, end, keys)
    if env is not None:
        following = next(
            (line for line in lines[env + 1 : end] if line.strip() and not line.strip().startswith("#")), ""
        )
        if not following.strip().startswith("- ") or _indent(following) < keys:
            del lines[env]
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


# The key kubebuilder records the plugin's kinds under in PROJECT `plugins:`.
PROJECT_KEY = "deploy-image.go.kubebuilder.io/v1-alpha"


def recorded(image: DeployImage, domain: str, group: str, version: str, kind: str) -> dict[str, object]:
    """The kind's entry under PROJECT's `plugins: deploy-image.go.kubebuilder.io/v1-alpha: resources:`,
    as kubebuilder writes it (the flags as given: strings)."""
    options: dict[str, object] = {}
    if image.command:
        options["containerCommand"] = ",".join(image.command)
    if image.port is not None:
        options["containerPort"] = str(image.port)
    options["image"] = image.image
    if image.run_as_user is not None:
        options["runAsUser"] = str(image.run_as_user)
    return {"domain": domain, "group": group, "kind": kind, "options": options, "version": version}


def with_resource(
    plugins: dict[str, dict[str, Any]] | None, entry: dict[str, object]
) -> dict[str, dict[str, Any]]:
    """PROJECT's plugins with the kind's deploy-image entry added (replacing the kind's earlier one)."""
    out = dict(plugins or {})
    gvk = [entry["group"], entry["version"], entry["kind"]]
    listed = (out.get(PROJECT_KEY) or {}).get("resources") or []
    kept = [r for r in listed if [r.get("group"), r.get("version"), r.get("kind")] != gvk]
    out[PROJECT_KEY] = {**(out.get(PROJECT_KEY) or {}), "resources": [*kept, entry]}
    return dict(sorted(out.items()))


def without_resource(
    plugins: dict[str, dict[str, Any]] | None, group: str, version: str, kind: str
) -> dict[str, dict[str, Any]] | None:
    """PROJECT's plugins without the kind's deploy-image entry (`delete api`); the plugin's key goes
    with its last kind, `plugins:` with its last plugin."""
    if not plugins or PROJECT_KEY not in plugins:
        return plugins
    out = dict(plugins)
    resources = [
        r for r in out[PROJECT_KEY].get("resources") or []
        if (r.get("group"), r.get("version"), r.get("kind")) != (group, version, kind)
    ]  # fmt: skip
    if resources:
        out[PROJECT_KEY] = {**out[PROJECT_KEY], "resources": resources}
    else:
        del out[PROJECT_KEY]
    return out or None
