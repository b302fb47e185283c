"""`pyop create api --image`: kubebuilder's deploy-image/v1-alpha plugin."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pyscaffold_op.scaffold import deployimage
from pyscaffold_op.scaffold.journal import RECORD_FILE, load_record

from .conftest import AT_INIT, PACKAGE, RunPyop, assert_one_line_error, run_project_tests, snapshot

MEMCACHED = ["create", "api", "--group", "cache", "--version", "v1alpha1", "--kind", "Memcached", "--no-make"]
IMAGE = "memcached:1.6.26-alpine3.19"
# kubebuilder's own example, flag for flag
KUBEBUILDER_FLAGS = [
    f"--image={IMAGE}",
    "--image-container-command=memcached,--memory-limit=64,-o,modern,-v",
    "--image-container-port=11211",
    "--run-as-user=1001",
    "--plugins=deploy-image/v1-alpha",
]


@pytest.fixture
def project(pyop: RunPyop, tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    assert pyop(*AT_INIT, "--license", "none", cwd=root).code == 0
    return root


def _manager_container(root: Path) -> dict[str, object]:
    docs = list(yaml.safe_load_all((root / "config/manager/manager.yaml").read_text()))
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    containers = deployment["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == "manager")


@pytest.mark.parametrize(
    ("flags", "fragments"),
    [
        (["--image", "Memcached:1.6"], ["invalid --image 'Memcached:1.6'", "lowercase"]),
        (["--image", "memcached:"], ["invalid --image 'memcached:'"]),
        (["--image", "mem cached"], ["invalid --image 'mem cached'"]),
        (["--image", ""], ["invalid --image ''"]),
        ([f"--image={IMAGE}", "--image-container-port=0"], ["--image-container-port '0'", "1 to 65535"]),
        ([f"--image={IMAGE}", "--image-container-port=65536"], ["--image-container-port '65536'"]),
        ([f"--image={IMAGE}", "--image-container-port=http"], ["--image-container-port 'http'"]),
        ([f"--image={IMAGE}", "--run-as-user=root"], ["--run-as-user 'root'", "numeric"]),
        ([f"--image={IMAGE}", "--run-as-user=-1"], ["--run-as-user '-1'"]),
        ([f"--image={IMAGE}", "--image-container-command=memcached,,-v"], ["--image-container-command"]),
        ([f"--image={IMAGE}", "--no-resource"], ["--image needs --resource and --controller"]),
        ([f"--image={IMAGE}", "--no-controller"], ["--image needs --resource and --controller"]),
        ([f"--image={IMAGE}", "--no-namespaced"], ["--image needs a namespaced kind"]),
        (["--plugins=deploy-image/v1-alpha"], ["--plugins deploy-image/v1-alpha needs --image"]),
        ([f"--image={IMAGE}", "--plugins=go/v4"], ["unknown plugin 'go/v4'"]),
        (["--image-container-port=11211"], ["--image-container-port needs --image"]),
        (["--run-as-user=1001"], ["--run-as-user needs --image"]),
    ],
)
def test_bad_flags_exit_2_and_write_nothing(
    pyop: RunPyop, project: Path, flags: list[str], fragments: list[str]
) -> None:
    before = snapshot(project)
    assert_one_line_error(pyop(*MEMCACHED, *flags, cwd=project), *fragments)
    assert snapshot(project) == before


@pytest.mark.parametrize(
    ("kind", "fragment"),
    [("Deployment", "would shadow a name the scaffolded controller imports"), ("Size", "variable 'size'")],
)
def test_kinds_that_would_shadow_the_controllers_names(
    pyop: RunPyop, project: Path, kind: str, fragment: str
) -> None:
    before = snapshot(project)
    args = ["create", "api", "--group", "cache", "--version", "v1", "--kind", kind, "--no-make"]
    assert_one_line_error(pyop(*args, f"--image={IMAGE}", cwd=project), fragment)
    assert snapshot(project) == before


def test_scaffolds_the_plugins_files_and_the_managers_image(pyop: RunPyop, project: Path) -> None:
    run = pyop(*MEMCACHED, *KUBEBUILDER_FLAGS, cwd=project)
    assert run.code == 0, run.err
    assert "memcached_controller.py already runs the image;" in run.out  # no "write the reconcile logic"
    assert "write the reconcile logic" not in run.out
    assert _manager_container(project)["env"] == [{"name": "MEMCACHED_IMAGE", "value": IMAGE}]

    types = (project / f"src/{PACKAGE}/api/v1alpha1/memcached_types.py").read_text()
    # kubebuilder v4.16's deploy-image types (issue 35): size optional, default 1, minimum 0
    expected = [
        "# +kubebuilder:default=1",
        "# +kubebuilder:validation:Minimum=0",
        "size: Int32 | None = None",
    ]
    for line in (*expected, "container_port: Int32", "conditions: list[Condition]"):
        assert line in types
    controller = (project / f"src/{PACKAGE}/controllers/memcached_controller.py").read_text()
    for line in (
        'FINALIZER = "cache.viper.run/finalizer"',
        'IMAGE_ENV = "MEMCACHED_IMAGE"',
        "run_as_user=1001,",
        'command=["memcached", "--memory-limit=64", "-o", "modern", "-v"],',
        'ports=[ContainerPort(container_port=memcached.spec.container_port, name="memcached")],',
        "# +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;"
        "delete",
        "# +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch",
        "# +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch",
        '.named("memcached").owns(Deployment)',
    ):
        assert line in controller, line
    sample = yaml.safe_load((project / "config/samples/cache_v1alpha1_memcached.yaml").read_text())
    assert sample["spec"] == {"size": 1, "containerPort": 11211}
    assert (project / "tests/test_memcached_controller.py").is_file()
    recorded = load_record((project / RECORD_FILE).read_text()).find("cache", "v1alpha1", "Memcached")
    assert recorded is not None
    env = [i for i in recorded.insertions if i.op == "env"]
    assert [(i.file, i.text) for i in env] == [("config/manager/manager.yaml", f"MEMCACHED_IMAGE={IMAGE}")]


def test_image_alone_selects_the_plugin_and_leaves_optional_parts_out(pyop: RunPyop, project: Path) -> None:
    run = pyop(*MEMCACHED, "--image", "quay.io/acme/cache@sha256:" + "a" * 64, cwd=project)
    assert run.code == 0, run.err
    controller = (project / f"src/{PACKAGE}/controllers/memcached_controller.py").read_text()
    assert (
        "run_as_user" not in controller and "ContainerPort" not in controller and "command=" not in controller
    )
    types = (project / f"src/{PACKAGE}/api/v1alpha1/memcached_types.py").read_text()
    assert "container_port" not in types
    sample = yaml.safe_load((project / "config/samples/cache_v1alpha1_memcached.yaml").read_text())
    assert sample["spec"] == {"size": 1}


def test_a_namespaced_project_keeps_its_env(pyop: RunPyop, tmp_path: Path) -> None:
    """`init --namespaced` gives the manager WATCH_NAMESPACE: the image goes next to it, and back out."""
    assert pyop(*AT_INIT, "--namespaced", "--license", "none", cwd=tmp_path).code == 0
    before = (tmp_path / "config/manager/manager.yaml").read_text()
    assert pyop(*MEMCACHED, f"--image={IMAGE}", cwd=tmp_path).code == 0
    names = [e["name"] for e in _manager_container(tmp_path)["env"]]  # type: ignore[index]
    assert names == ["MEMCACHED_IMAGE", "WATCH_NAMESPACE"]
    assert pyop("delete", "api", "--group", "cache", "--version", "v1alpha1", "--kind", "Memcached",
                "--no-make", cwd=tmp_path).code == 0  # fmt: skip
    assert (tmp_path / "config/manager/manager.yaml").read_text() == before


def test_delete_api_undoes_it_byte_for_byte(pyop: RunPyop, project: Path) -> None:
    before = snapshot(project)
    assert pyop(*MEMCACHED, *KUBEBUILDER_FLAGS, cwd=project).code == 0
    run = pyop("delete", "api", "--group", "cache", "--version", "v1alpha1", "--kind", "Memcached",
               "--no-make", cwd=project)  # fmt: skip
    assert run.code == 0, run.err
    assert snapshot(project) == before


def test_project_records_the_plugins_flags_as_kubebuilder_does(pyop: RunPyop, project: Path) -> None:
    """kubebuilder records each deploy-image kind's flags under PROJECT `plugins:` (issue 35, found by the
    kubebuilder oracle's with-plugins scenario); `delete api` takes the entry out, the key with the last."""
    assert pyop(*MEMCACHED, *KUBEBUILDER_FLAGS, cwd=project).code == 0
    busybox = ["create", "api", "--group", "cache", "--version", "v1alpha1", "--kind", "Busybox", "--no-make"]
    assert pyop(*busybox, "--image=busybox:1.36.1", cwd=project).code == 0
    plugins = yaml.safe_load((project / "PROJECT").read_text())["plugins"]
    assert plugins == {
        "deploy-image.go.kubebuilder.io/v1-alpha": {
            "resources": [
                {
                    "domain": "viper.run",
                    "group": "cache",
                    "kind": "Memcached",
                    "options": {
                        "containerCommand": "memcached,--memory-limit=64,-o,modern,-v",
                        "containerPort": "11211",
                        "image": IMAGE,
                        "runAsUser": "1001",
                    },
                    "version": "v1alpha1",
                },
                {
                    "domain": "viper.run",
                    "group": "cache",
                    "kind": "Busybox",
                    "options": {"image": "busybox:1.36.1"},
                    "version": "v1alpha1",
                },
            ]
        }
    }
    delete = ["delete", "api", "--group", "cache", "--version", "v1alpha1", "--no-make"]
    assert pyop(*delete, "--kind", "Memcached", cwd=project).code == 0
    plugins = yaml.safe_load((project / "PROJECT").read_text())["plugins"]
    assert [r["kind"] for r in plugins["deploy-image.go.kubebuilder.io/v1-alpha"]["resources"]] == ["Busybox"]
    assert pyop(*delete, "--kind", "Busybox", cwd=project).code == 0
    assert "plugins" not in yaml.safe_load((project / "PROJECT").read_text())


def test_force_with_another_image_replaces_the_value(pyop: RunPyop, project: Path) -> None:
    assert pyop(*MEMCACHED, f"--image={IMAGE}", cwd=project).code == 0
    assert pyop(*MEMCACHED, "--image=memcached:1.6.38", "--force", cwd=project).code == 0
    assert _manager_container(project)["env"] == [{"name": "MEMCACHED_IMAGE", "value": "memcached:1.6.38"}]


def test_manager_env_edits_find_the_manager_container() -> None:
    text = (
        "spec:\n  template:\n    spec:\n      containers:\n      - name: sidecar\n        image: x\n"
        "      - image: controller:latest\n        name: manager\n        ports: []\n"
    )
    added = deployimage.add_env(text, "A_IMAGE", "a:1")
    containers = yaml.safe_load(added)["spec"]["template"]["spec"]["containers"]
    assert containers[0] == {"name": "sidecar", "image": "x"}
    assert containers[1]["env"] == [{"name": "A_IMAGE", "value": "a:1"}]
    assert deployimage.remove_env(added, "A_IMAGE") == text
    assert deployimage.remove_env(text, "A_IMAGE") == text


def test_the_generated_project_passes_its_own_tests(pyop: RunPyop, project: Path) -> None:
    """Scaffold, `make manifests`, lint, and run the project's tests: the controller creates the
    Deployment with the owner reference, image and security context, reports Available, follows a new
    size and runs the finalizer on deletion, against the emulator with its workload controllers on."""
    from pyscaffold_op.gen import generate_manifests

    assert pyop(*MEMCACHED, *KUBEBUILDER_FLAGS, cwd=project).code == 0
    generate_manifests(project)
    crd = yaml.safe_load((project / "config/crd/bases/cache.viper.run_memcacheds.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["properties"]["size"] == {
        "default": 1,
        "description": "size defines the number of Memcached instances",
        "format": "int32",
        "minimum": 0,
        "type": "integer",
    }
    assert spec["required"] == ["containerPort"]
    for args in (["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]):
        lint = subprocess.run(
            [sys.executable, "-m", "ruff", *args], cwd=project, capture_output=True, text=True
        )
        assert lint.returncode == 0, lint.stdout + lint.stderr
    result = run_project_tests(project)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "3 passed" in result.stdout
