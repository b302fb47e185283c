"""`pyop init`: validate the options, render the copier template in memory, move the files in place."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyscaffold_op import __version__, names
from pyscaffold_op.errors import ProjectError, ValidationError
from pyscaffold_op.project import PROJECT_FILE, Project, find_project_root
from pyscaffold_op.scaffold.boilerplate import LICENSES, boilerplate, header_from_boilerplate
from pyscaffold_op.scaffold.pins import version_range
from pyscaffold_op.scaffold.pyformat import format_python
from pyscaffold_op.scaffold.templates import INIT_TEMPLATE_TOKEN, templates_dir
from pyscaffold_op.scaffold.transaction import FilePlan, apply

ANSWERS_FILE = ".copier-answers.yml"


@dataclass(frozen=True)
class InitOptions:
    domain: str
    repo: str
    project_name: str | None = None
    owner: str | None = None
    license: str = "apache2"
    namespaced: bool = False
    multigroup: bool = False


@dataclass(frozen=True)
class InitContext:
    """Every name the init template uses, computed once (templates never derive names)."""

    domain: str
    repo: str
    project_name: str
    owner: str
    license: str
    namespaced: bool
    multigroup: bool
    package: str
    leader_election_id: str
    boilerplate: str

    def template_data(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "repo": self.repo,
            "project_name": self.project_name,
            "owner": self.owner,
            "license": self.license,
            "namespaced": self.namespaced,
            "multigroup": self.multigroup,
            "package": self.package,
            "leader_election_id": self.leader_election_id,
            "boilerplate": self.boilerplate,
            "header": header_from_boilerplate(self.boilerplate),
            "pyop_version_range": version_range(),
        }

    def project(self) -> Project:
        return Project(
            domain=self.domain,
            repo=self.repo,
            project_name=self.project_name,
            multigroup=self.multigroup,
            namespaced=self.namespaced,
            cli_version=__version__,
        )


def leader_election_id(repo: str, domain: str) -> str:
    """`<8 hex digits>.<domain>`: stable for the project, like kubebuilder's generated lease name."""
    digest = hashlib.sha256(f"{repo}|{domain}".encode()).hexdigest()[:8]
    return f"{digest}.{domain}"


def validate(options: InitOptions, root: Path) -> InitContext:
    """Check every input and the target folder; raise a one-line error before anything is written."""
    context = make_context(options)
    _check_folder(root)
    return context


def make_context(options: InitOptions, *, check_installed: bool = True) -> InitContext:
    """Every name the template needs, each input checked against its rule.

    `check_installed=False` for a project that exists (`pyop upgrade`): once it is pip-installed, its
    own package is an installed module.
    """
    names.validate_dns1123_subdomain(options.domain, "domain")
    repo = names.validate_repo(options.repo)
    package = names.package_name_from_repo(repo)
    package = names.validate_package_name(package, repo, check_installed=check_installed)
    if options.project_name is not None:
        project_name = names.validate_dns1123_label(options.project_name, "project name")
    else:
        project_name = names.project_name_from_repo(repo)
        try:
            names.validate_dns1123_label(project_name, "project name")
        except ValidationError as err:
            raise ValidationError(
                f"invalid project name {project_name!r} (derived from repo {repo!r}): must be a DNS-1123 "
                "label; pass --project-name"
            ) from err
    # `<project>-system` must itself be a valid namespace name (a DNS-1123 label).
    if len(f"{project_name}-system") > 63:
        raise ValidationError(
            f"invalid project name {project_name!r}: at most 56 characters, so that the namespace "
            f"'{project_name}-system' is a valid DNS-1123 label"
        )
    if options.license not in LICENSES:
        raise ValidationError(f"invalid license {options.license!r}: must be one of {', '.join(LICENSES)}")
    owner = options.owner if options.owner is not None else f"The {project_name} Authors"
    if "\n" in owner or "\r" in owner:
        raise ValidationError(f"invalid owner {owner!r}: must be a single line")
    return InitContext(
        domain=options.domain,
        repo=repo,
        project_name=project_name,
        owner=owner,
        license=options.license,
        namespaced=options.namespaced,
        multigroup=options.multigroup,
        package=package,
        leader_election_id=leader_election_id(repo, options.domain),
        boilerplate=boilerplate(options.license, owner),
    )


def _check_folder(root: Path) -> None:
    if not root.is_dir():
        raise ProjectError(f"cannot initialize {root}: not a folder")
    existing = find_project_root(root)
    if existing is not None:
        raise ProjectError(
            f"cannot initialize {root}: {existing / PROJECT_FILE} already exists (the folder already holds "
            "a project)"
        )
    strangers = sorted(entry.name for entry in root.iterdir() if not _may_precede_init(entry))
    if strangers:
        more = f" and {len(strangers) - 1} more" if len(strangers) > 1 else ""
        raise ProjectError(
            f"cannot initialize {root}: the folder is not empty ({strangers[0]}{more}); only hidden entries, "
            "*.md files and capitalised files such as LICENSE may be there before `pyop init`"
        )


def _may_precede_init(entry: Path) -> bool:
    """kubebuilder's rule for a folder to initialise: hidden entries (.git, .venv), *.md files and
    capitalised files (LICENSE, NOTICE) may already be there; anything else means the wrong folder."""
    name = entry.name
    if name.startswith("."):
        return True
    return entry.is_file() and (name.endswith(".md") or name[:1].isupper())


def render(context: InitContext, root: Path, template_root: Path | None = None) -> FilePlan:
    """Render templates/init (a copier template; `template_root` for another one) as a plan of files."""
    plan = FilePlan(root)
    for relpath, content in render_template(context, root, template_root).items():
        plan.write(relpath, content)
    plan.write(PROJECT_FILE, context.project().dump())
    return plan


def render_template(context: InitContext, root: Path, template_root: Path | None = None) -> dict[str, bytes]:
    """The init template's files for `context` as init writes them into `root`: the answers file
    included (not PROJECT), the Python formatted by ruff. `pyop upgrade` renders through here too, so
    its old and new renders compare byte for byte with what init wrote."""
    from pyscaffold_op.scaffold.tree import TreeTemplate

    template = TreeTemplate.load(template_root or templates_dir() / "init")
    data = context.template_data()
    plan = FilePlan(root)
    for relpath, content in template.render(data, template.answers(data, INIT_TEMPLATE_TOKEN)).items():
        plan.write(relpath, content)
    format_python(plan)
    return plan.files


def init_project(options: InitOptions, root: Path, template_root: Path | None = None) -> list[str]:
    """`pyop init` in `root`: validate, render, refuse to overwrite anything, apply atomically."""
    root = root.resolve()
    context = validate(options, root)
    plan = render(context, root, template_root)
    clashes = [relpath for relpath in sorted(plan.files) if (root / relpath).exists()]
    if clashes:
        more = f" (and {len(clashes) - 1} more)" if len(clashes) > 1 else ""
        raise ProjectError(
            f"cannot initialize {root}: {clashes[0]} already exists{more}; pyop init never overwrites"
        )
    return apply(plan)
