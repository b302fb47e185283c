"""`create api` for built-in (core) and external kinds, and `--controller-name` (issue 15, item 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.scaffold.conftest import PACKAGE, RunPyop, assert_one_line_error, snapshot

CTRL = f"src/{PACKAGE}/controllers"
CERT_MANAGER = [
    "--group", "cert-manager", "--version", "v1", "--kind", "Certificate",
    "--external-api-path", "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
    "--external-api-domain", "io", "--external-api-module", f"{PACKAGE}.external.certmanager",
]  # fmt: skip
CERT_MODEL = """
from pyscaffold_op.apimachinery import GroupVersionKind, KubeObject


class Certificate(KubeObject):
    gvk = GroupVersionKind("cert-manager.io", "v1", "Certificate")
    plural = "certificates"
"""


def _resources(root: Path) -> list[dict]:
    return yaml.safe_load((root / "PROJECT").read_text())["resources"]


def test_core_kind_controller_in_a_single_group_project(pyop: RunPyop, with_api: Path) -> None:
    run = pyop("create", "api", "--group", "apps", "--version", "v1", "--kind", "Deployment",
               "--no-resource", "--controller", "--no-make", cwd=with_api)  # fmt: skip
    assert run.code == 0, run.err
    assert {"controller": True, "core": True, "group": "apps", "kind": "Deployment",
            "path": "k8s.io/api/apps/v1", "version": "v1"} in _resources(with_api)  # fmt: skip
    controller = (with_api / f"{CTRL}/deployment_controller.py").read_text()
    assert "from pyscaffold_op.models.apps_v1 import Deployment" in controller
    assert (
        "# +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;"
        in controller
    )
    assert "mgr.builder().for_(Deployment)" in controller
    assert "DeploymentReconciler(" in (with_api / f"src/{PACKAGE}/__main__.py").read_text()
    # no types, sample, roles or CRD for a kind the project does not own
    assert not list(with_api.rglob("deployment_types.py"))
    assert not list((with_api / "config").rglob("*deployment*"))


def test_core_group_pod(pyop: RunPyop, initialized: Path) -> None:
    # like kubebuilder: --resource=false makes a core group name the built-in kind
    run = pyop("create", "api", "--group", "core", "--version", "v1", "--kind", "Pod", "--resource=false",
               "--no-make", cwd=initialized)  # fmt: skip
    assert run.code == 0, run.err
    assert _resources(initialized) == [
        {
            "controller": True,
            "core": True,
            "group": "core",
            "kind": "Pod",
            "path": "k8s.io/api/core/v1",
            "version": "v1",
        }
    ]
    assert "rbac:groups=core,resources=pods," in (initialized / f"{CTRL}/pod_controller.py").read_text()


def test_external_kind_and_a_second_controller(pyop: RunPyop, with_api: Path) -> None:
    run = pyop("create", "api", *CERT_MANAGER, "--no-make", cwd=with_api)
    assert run.code == 0, run.err
    assert {"controller": True, "domain": "io", "external": True, "group": "cert-manager",
            "kind": "Certificate", "module": f"{PACKAGE}.external.certmanager",
            "path": "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
            "version": "v1"} in _resources(with_api)  # fmt: skip
    controller = (with_api / f"{CTRL}/certificate_controller.py").read_text()
    assert f"from {PACKAGE}.external.certmanager import Certificate" in controller
    assert "rbac:groups=cert-manager.io,resources=certificates," in controller
    again = pyop("create", "api", *CERT_MANAGER, "--no-make", cwd=with_api)
    assert_one_line_error(again, "controller for cert-manager/v1, Kind=Certificate already exists")
    second = pyop(
        "create", "api", *CERT_MANAGER, "--controller-name", "cert-renewer", "--no-make", cwd=with_api
    )
    assert second.code == 0, second.err
    renewer = (with_api / f"{CTRL}/cert_renewer_controller.py").read_text()
    assert "class CertRenewerReconciler:" in renewer and '.named("cert-renewer")' in renewer
    assert (with_api / "tests/test_cert_renewer_controller.py").is_file()
    assert sum(r["kind"] == "Certificate" for r in _resources(with_api)) == 1


@pytest.mark.slow
def test_generated_project_with_core_and_external_controllers_passes_its_tests(
    pyop: RunPyop, with_api: Path
) -> None:
    external = with_api / f"src/{PACKAGE}/external"
    external.mkdir()
    (external / "__init__.py").write_text("")
    (external / "certmanager.py").write_text(CERT_MODEL)
    for args in (["--group", "apps", "--version", "v1", "--kind", "Deployment", "--resource=false"],
                 ["--group", "core", "--version", "v1", "--kind", "Namespace", "--resource=false"],
                 CERT_MANAGER):  # fmt: skip
        assert pyop("create", "api", *args, "--no-make", cwd=with_api).code == 0
    assert pyop("generate", "manifests", cwd=with_api).code == 0
    role = yaml.safe_load((with_api / "config/rbac/role.yaml").read_text())
    groups = {g for rule in role["rules"] for g in rule["apiGroups"]}
    assert {"", "apps", "cert-manager.io", "programming-kubernetes.viper.run"} <= groups
    pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--log-level=DEBUG"]
    pytest_cmd.append("tests")
    run = subprocess.run(pytest_cmd, cwd=with_api, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "6 passed" in run.stdout


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--group", "apps", "--version", "v1", "--kind", "Deploy", "--no-resource"],
         ["kind 'Deploy' is not a kind of apps/v1"]),
        (["--group", "events", "--version", "v1", "--kind", "Event", "--no-resource"],
         ["no built-in models for events/v1"]),
        (["--group", "apps", "--version", "v1", "--kind", "Deployment", "--no-resource", "--no-controller"],
         ["nothing to scaffold"]),
        ([*CERT_MANAGER[:6], "--external-api-path", "x/y"], ["--external-api-domain is required"]),
        ([*CERT_MANAGER[:6], "--external-api-domain", "io"], ["need --external-api-path"]),
        ([*CERT_MANAGER, "--controller-name", "Bad_Name"], ["controller name"]),
    ],
)  # fmt: skip
def test_bad_other_kinds_exit_2_and_change_nothing(
    pyop: RunPyop, with_api: Path, args: list[str], fragments: list[str]
) -> None:
    before = snapshot(with_api)
    assert_one_line_error(pyop("create", "api", *args, "--no-make", cwd=with_api), *fragments)
    assert snapshot(with_api) == before


def test_a_core_group_with_resource_is_the_projects_own_group(pyop: RunPyop, initialized: Path) -> None:
    """kubebuilder's CronJob tutorial: `create api --group batch --kind CronJob` (a resource) scaffolds the
    custom group batch.<domain>, not the built-in batch/v1 CronJob."""
    run = pyop("create", "api", "--group", "batch", "--version", "v1", "--kind", "CronJob", "--no-make",
               cwd=initialized)  # fmt: skip
    assert run.code == 0, run.err
    (entry,) = _resources(initialized)
    assert (entry["group"], entry["domain"], entry["kind"]) == ("batch", "viper.run", "CronJob")
    assert "core" not in entry and entry["api"]["namespaced"] is True
    assert list(initialized.rglob("cronjob_types.py"))


def test_a_controller_for_the_projects_own_kind_in_a_core_group(pyop: RunPyop, initialized: Path) -> None:
    """The project's own batch.<domain> CronJob wins over the built-in one for `--resource=false`."""
    create = ["create", "api", "--group", "batch", "--version", "v1", "--kind", "CronJob", "--no-make"]
    assert pyop(*create, "--controller=false", cwd=initialized).code == 0
    run = pyop(*create, "--resource=false", "--controller", cwd=initialized)
    assert run.code == 0, run.err
    (entry,) = _resources(initialized)
    assert entry["controller"] is True and "core" not in entry
