"""`create webhook` for a kind of another project's API (issue 27): kubebuilder's
`--external-api-path/-domain/-module` flags, the PROJECT entry kubebuilder records, a placeholder model
when no Python module defines the kind, and a webhook test that runs against the emulator."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import PACKAGE, RunPyop, assert_one_line_error, run_project_tests, snapshot

GO_PATH = "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
GO_MODULE = "github.com/cert-manager/cert-manager@v1.21.1"
ISSUER = ["--group", "cert-manager", "--version", "v1", "--kind", "Issuer"]
EXTERNAL = [
    f"--external-api-path={GO_PATH}",
    "--external-api-domain=io",
    f"--external-api-module={GO_MODULE}",
]
PLACEHOLDER = f"src/{PACKAGE}/external/cert_manager/v1/issuer_types.py"
WEBHOOK = f"src/{PACKAGE}/webhooks/v1/issuer_webhook.py"


def with_src(root: Path) -> str:
    return os.pathsep.join(p for p in (str(root / "src"), os.environ.get("PYTHONPATH", "")) if p)


def _resources(root: Path) -> list[dict[str, object]]:
    resources: list[dict[str, object]] = yaml.safe_load((root / "PROJECT").read_text())["resources"]
    return resources


def test_a_webhook_for_an_external_kind_as_kubebuilder_scaffolds_it(pyop: RunPyop, initialized: Path) -> None:
    root = initialized
    run = pyop("create", "webhook", *ISSUER, "--defaulting", *EXTERNAL, "--make=false", cwd=root)
    assert run.code == 0, run.err
    assert _resources(root) == [
        {
            "domain": "io",
            "external": True,
            "group": "cert-manager",
            "kind": "Issuer",
            "module": GO_MODULE,
            "path": GO_PATH,
            "version": "v1",
            "webhooks": {"defaulting": True, "webhookVersion": "v1"},
        }
    ]  # kubebuilder v4.16's PROJECT entry for the same command
    model = (root / PLACEHOLDER).read_text()
    assert 'gvk = GroupVersionKind("cert-manager.io", "v1", "Issuer")' in model
    assert 'model_config = ConfigDict(extra="allow")' in model
    webhook = (root / WEBHOOK).read_text()
    assert f"from {PACKAGE}.external.cert_manager.v1.issuer_types import Issuer\n" in webhook
    assert (
        "# +kubebuilder:webhook:path=/mutate-cert-manager-io-v1-issuer,mutating=true,failurePolicy=fail,"
        "sideEffects=None,groups=cert-manager.io,resources=issuers,verbs=create;update,versions=v1,"
        "name=missuer-v1.kb.io,admissionReviewVersions=v1"
    ) in webhook
    # a second webhook type: PROJECT names the kind now, no flags needed (kubebuilder's incremental run)
    run = pyop("create", "webhook", *ISSUER, "--programmatic-validation", "--make=false", cwd=root)
    assert run.code == 0, run.err
    [issuer] = _resources(root)
    assert issuer["webhooks"] == {"defaulting": True, "validation": True, "webhookVersion": "v1"}
    assert pyop("generate", "manifests", cwd=root).code == 0
    docs = list(yaml.safe_load_all((root / "config/webhook/manifests.yaml").read_text()))
    rules = {
        hook["clientConfig"]["service"]["path"]: hook["rules"][0] for doc in docs for hook in doc["webhooks"]
    }
    assert set(rules) == {"/mutate-cert-manager-io-v1-issuer", "/validate-cert-manager-io-v1-issuer"}
    for rule in rules.values():
        assert (rule["apiGroups"], rule["apiVersions"], rule["resources"]) == (
            ["cert-manager.io"],
            ["v1"],
            ["issuers"],
        )
    for check in (["check", "."], ["format", "--check", "."]):
        lint = subprocess.run(
            [sys.executable, "-m", "ruff", *check], cwd=root, capture_output=True, text=True
        )
        assert lint.returncode == 0, lint.stdout + lint.stderr
    # the scaffolded test installs a minimal Issuer CRD and goes through the API server to the webhooks
    tests = run_project_tests(root, {**os.environ, "PYTHONPATH": with_src(root)})
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert "4 passed" in tests.stdout
    # the last webhook deleted: the entry goes; the placeholder model stays (yours to type)
    assert pyop("delete", "webhook", *ISSUER, "--no-make", cwd=root).code == 0
    assert _resources(root) == []
    assert not (root / WEBHOOK).exists()
    assert (root / PLACEHOLDER).is_file()


def test_a_python_module_given_is_imported_and_no_placeholder_written(
    pyop: RunPyop, initialized: Path
) -> None:
    module = f"{PACKAGE}.certmanager"
    flags = [f"--external-api-path={GO_PATH}", "--external-api-domain=io", f"--external-api-module={module}"]
    run = pyop("create", "webhook", *ISSUER, "--defaulting", *flags, "--no-make", cwd=initialized)
    assert run.code == 0, run.err
    assert f"from {module} import Issuer\n" in (initialized / WEBHOOK).read_text()
    assert not (initialized / f"src/{PACKAGE}/external").exists()
    [issuer] = _resources(initialized)
    assert issuer["module"] == module


def test_the_controller_and_the_webhook_of_an_external_group_share_its_package(
    pyop: RunPyop, initialized: Path
) -> None:
    certificate = ["--group", "cert-manager", "--version", "v1", "--kind", "Certificate"]
    run = pyop("create", "api", *certificate, "--resource=false", *EXTERNAL, "--make=false", cwd=initialized)
    assert run.code == 0, run.err
    run = pyop("create", "webhook", *ISSUER, "--defaulting", *EXTERNAL, "--make=false", cwd=initialized)
    assert run.code == 0, run.err
    folder = initialized / f"src/{PACKAGE}/external/cert_manager/v1"
    assert sorted(p.name for p in folder.iterdir() if p.suffix == ".py") == [
        "__init__.py",
        "certificate_types.py",
        "issuer_types.py",
    ]
    assert [r["kind"] for r in _resources(initialized)] == ["Certificate", "Issuer"]
    assert all(r["module"] == GO_MODULE for r in _resources(initialized))


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ([*ISSUER, "--defaulting", "--external-api-domain=io"], ("need --external-api-path",)),
        ([*ISSUER, "--defaulting", f"--external-api-path={GO_PATH}"], ("--external-api-domain is required",)),
        (
            [*ISSUER, "--conversion", "--spoke", "v2", *EXTERNAL],
            ("--conversion is not for an external kind",),
        ),
        ([*ISSUER, "--defaulting"], ("no API cert-manager/v1, Kind=Issuer", "create api")),
    ],
)
def test_bad_external_webhooks_are_one_line_and_change_nothing(
    pyop: RunPyop, initialized: Path, args: list[str], fragments: tuple[str, ...]
) -> None:
    before = snapshot(initialized)
    assert_one_line_error(pyop("create", "webhook", *args, "--no-make", cwd=initialized), *fragments)
    assert snapshot(initialized) == before
