"""The generated project: Python compiles and is ruff-clean, YAML loads and round-trips, kustomize builds."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from .conftest import AT_INIT, PACKAGE, RunPyop, run_project_tests

REPO_ROOT = Path(__file__).resolve().parents[2]
GOLDEN = REPO_ROOT / "testdata" / "project"
KUBECTL = shutil.which("kubectl")

STUB_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  names:
    kind: {kind}
    listKind: {kind}List
    plural: {plural}
    singular: {singular}
  scope: Namespaced
  versions:
  - name: {version}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
    served: true
    storage: true
"""


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def yaml_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in {".yaml", ".yml"} and p.is_file())


def stub_manifests(root: Path) -> None:
    """What `make manifests` adds, in its simplest valid form, so kustomize builds without the generator."""
    project = YAML(typ="safe").load((root / "PROJECT").read_text())
    for resource in project["resources"]:
        if not resource.get("api"):
            continue
        from pyscaffold_op.apimachinery.naming import pluralize

        group = f"{resource['group']}.{resource['domain']}"
        plural = resource.get("plural") or pluralize(resource["kind"])
        path = root / "config/crd/bases" / f"{group}_{plural}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            STUB_CRD.format(
                group=group,
                plural=plural,
                kind=resource["kind"],
                singular=resource["kind"].lower(),
                version=resource["version"],
            )
        )


@pytest.fixture
def variant(pyop: RunPyop, tmp_path: Path) -> Path:
    """A namespaced multigroup project with two groups and a cluster-scoped kind."""
    root = tmp_path / "variant"
    root.mkdir()
    args = [
        "init",
        "--domain",
        "example.com",
        "--repo",
        "example.com/x/fleet",
        "--namespaced",
        "--multigroup",
    ]
    assert pyop(*args, "--license", "none", cwd=root).code == 0
    for group, version, kind, extra in (
        ("crew", "v1", "Captain", []),
        ("crew", "v1", "FirstMate", ["--cluster-scoped"]),
        ("sea", "v2beta1", "Whale", ["--plural", "whalez"]),
        ("sea", "v2beta1", "CertificateSigningRequestPolicy", []),
    ):
        run = pyop(
            "create",
            "api",
            "--group",
            group,
            "--version",
            version,
            "--kind",
            kind,
            "--no-make",
            *extra,
            cwd=root,
        )
        assert run.code == 0, run.err
    return root


def trees(request: pytest.FixtureRequest) -> list[Path]:
    return [request.getfixturevalue(name) for name in ("initialized", "with_api", "variant")]


def test_python_compiles(request: pytest.FixtureRequest) -> None:
    for root in trees(request):
        for path in python_files(root):
            compile(path.read_text(), str(path), "exec")


def test_python_is_ruff_clean_with_the_projects_own_config(request: pytest.FixtureRequest) -> None:
    for root in trees(request):
        for args in (["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]):
            result = subprocess.run(
                [sys.executable, "-m", "ruff", *args], cwd=root, capture_output=True, text=True
            )
            assert result.returncode == 0, f"ruff {args[0]} in {root.name}:\n{result.stdout}{result.stderr}"


def test_every_yaml_document_loads_and_round_trips(request: pytest.FixtureRequest) -> None:
    yaml = YAML()
    yaml.indent(mapping=2, sequence=2, offset=0)
    yaml.preserve_quotes = True
    yaml.width = 4096
    for root in trees(request):
        files = [*yaml_files(root), root / "PROJECT"]
        assert len(files) > 15
        for path in files:
            text = path.read_text()
            documents = list(YAML(typ="safe").load_all(text))
            assert documents and all(doc is not None for doc in documents), path
            if text.lstrip().startswith(("---", "#")) and "\n---" in text:
                continue  # ruamel normalizes a leading comment before '---'; loading is what matters there
            if path.name == ".pyop-apis.yml":
                continue  # pyop's record, YAML in its JSON form (scaffold/journal.py): loading matters
            buffer = io.StringIO()
            yaml.dump_all(list(yaml.load_all(text)), buffer)
            assert buffer.getvalue() == text, (
                f"{path.relative_to(root)} does not round-trip through ruamel.yaml"
            )


@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kustomize_builds(request: pytest.FixtureRequest) -> None:
    for root in trees(request):
        stub_manifests(root)
        overlays = ["default", "rbac", "manager", "prometheus", "network-policy"]
        if (root / "config/crd/kustomization.yaml").is_file():
            overlays += ["crd", "samples"]
        for overlay in overlays:
            result = subprocess.run(
                [KUBECTL, "kustomize", f"config/{overlay}"], cwd=root, capture_output=True, text=True
            )
            assert result.returncode == 0, (
                f"kubectl kustomize config/{overlay} in {root.name}: {result.stderr}"
            )
            if overlay == "default":
                documents = list(YAML(typ="safe").load_all(result.stdout))
        kinds = {doc["kind"] for doc in documents}
        assert {"Namespace", "Deployment", "ServiceAccount", "Service", "Role", "RoleBinding"} <= kinds
        assert ("CustomResourceDefinition" in kinds) == ("crd" in overlays)
        for doc in documents:
            if doc["kind"] != "Namespace" and doc["metadata"].get("namespace"):
                assert doc["metadata"]["namespace"].endswith("-system")


@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
@pytest.mark.skipif(
    not (GOLDEN / "config/crd/bases").is_dir(), reason="golden tree has no generated manifests"
)
def test_golden_tree_kustomize_builds_with_generated_manifests() -> None:
    result = subprocess.run(
        [KUBECTL, "kustomize", "config/default"], cwd=GOLDEN, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    documents = list(YAML(typ="safe").load_all(result.stdout))
    crds = [doc for doc in documents if doc["kind"] == "CustomResourceDefinition"]
    assert [crd["metadata"]["name"] for crd in crds] == ["ats.programming-kubernetes.viper.run"]
    deployment = next(doc for doc in documents if doc["kind"] == "Deployment")
    assert deployment["metadata"]["namespace"] == "programming-kubernetes-system"
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[0] == "--metrics-bind-address=:8443"


def test_deploy_image_substitution_without_kustomize_binary(pyop: RunPyop, tmp_path: Path) -> None:
    """`make deploy IMG=...` swaps the image with sed on kubectl's kustomize output (no kustomize binary)."""
    assert pyop(*AT_INIT, cwd=tmp_path).code == 0
    makefile = (tmp_path / "Makefile").read_text()
    assert "SET_IMAGE = sed -e 's|image: controller:latest|image: $(IMG)|'" in makefile
    assert "$(KUBECTL) kustomize config/default | $(SET_IMAGE) | $(APPLY) -f -" in makefile
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    result = subprocess.run(
        ["make", "-n", "deploy", "IMG=example.com/at:v1", "PYOP=true", "KUBECTL=kubectl"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "image: example.com/at:v1" in result.stdout


def test_package_imports_without_the_runtime(with_api: Path) -> None:
    """The API package needs only pyscaffold_op.apimachinery (what `pyop generate` imports)."""
    code = (
        f"import sys; sys.path.insert(0, 'src'); from {PACKAGE}.api.v1alpha1 import At, GROUP, VERSION; "
        "a = At(metadata={'name': 'x'}, spec={}); print(GROUP, VERSION, a.to_dict()['apiVersion'], At.plural)"
    )
    result = subprocess.run([sys.executable, "-B", "-c", code], cwd=with_api, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "programming-kubernetes.viper.run",
        "v1alpha1",
        "programming-kubernetes.viper.run/v1alpha1",
        "ats",
    ]


@pytest.mark.slow
def test_the_generated_controller_test_passes(tmp_path: Path) -> None:
    """The golden project's own test suite (manager + reconciler against envtest) passes, in a subprocess."""
    project = tmp_path / "project"
    shutil.copytree(GOLDEN, project, ignore=shutil.ignore_patterns("__pycache__"))
    result = run_project_tests(project)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "3 passed" in result.stdout


@pytest.mark.slow
def test_kinds_named_like_standard_library_modules_pass_their_tests(pyop: RunPyop, tmp_path: Path) -> None:
    """`Site`, `Queue`, `Logging`: scaffolded, generated and tested like any other kind."""
    from pyscaffold_op.gen import generate_manifests

    assert pyop(*AT_INIT, "--license", "none", cwd=tmp_path).code == 0
    for kind in ("Site", "Queue", "Logging"):
        args = ["create", "api", "--group", "web", "--version", "v1", "--kind", kind, "--no-make"]
        run = pyop(*args, cwd=tmp_path)
        assert run.code == 0, run.err
    generate_manifests(tmp_path)
    result = run_project_tests(tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "5 passed" in result.stdout


def test_long_names_keep_the_code_ruff_clean(pyop: RunPyop, tmp_path: Path) -> None:
    """`ruff check` and `ruff format --check` with the project's config (`make lint`) pass when long
    names push imports and calls past 120 columns: the scaffolder runs ruff on what it generates."""
    args = ["init", "--domain", "very-long-domain-name.example.com", "--multigroup", "--license", "none"]
    assert (
        pyop(
            *args, "--repo", "github.com/acme/an-operator-with-a-rather-long-package-name", cwd=tmp_path
        ).code
        == 0
    )
    for kind in ("CertificateSigningRequestPolicyBinding", "ClusterCertificateSigningRequestPolicyBinding"):
        create = ["create", "api", "--group", "programming-kubernetes-extensions", "--version", "v1alpha1"]
        run = pyop(*create, "--kind", kind, "--no-make", cwd=tmp_path)
        assert run.code == 0, run.err
    main_py = (tmp_path / "src/an_operator_with_a_rather_long_package_name/__main__.py").read_text()
    assert 'get_event_recorder(\n            "programming-kubernetes-extensions-certificate' in main_py
    for args in (["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *args], cwd=tmp_path, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_controller_test_creates_the_sample(pyop: RunPyop, tmp_path: Path) -> None:
    """The scaffolded controller test creates the sample from config/samples: after the user makes a
    spec field required, the test names the sample to update, and passes once it is."""
    from pyscaffold_op.gen import generate_manifests

    assert pyop(*AT_INIT, "--license", "none", cwd=tmp_path).code == 0
    run = pyop(
        "create", "api", "--group", "batch", "--version", "v1", "--kind", "CronJob", "--no-make", cwd=tmp_path
    )
    assert run.code == 0, run.err
    types = tmp_path / "src/programming_kubernetes/api/v1/cronjob_types.py"
    scaffolded = (
        '    foo: str | None = None\n    """foo is an example field of CronJob. Edit cronjob_types.py to '
        'remove/update."""\n'
    )
    assert scaffolded in types.read_text()
    types.write_text(types.read_text().replace(scaffolded, '    schedule: str\n    """In Cron format."""\n'))
    generate_manifests(tmp_path)

    failed = run_project_tests(tmp_path)
    assert failed.returncode == 1, failed.stdout[-3000:]
    assert "batch_v1_cronjob.yaml: the sample is not a valid CronJob" in failed.stdout
    sample = tmp_path / "config/samples/batch_v1_cronjob.yaml"
    sample.write_text(sample.read_text().replace("spec: {}", 'spec:\n  schedule: "*/1 * * * *"'))
    passed = run_project_tests(tmp_path)
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-2000:]
    assert "3 passed" in passed.stdout
