"""`pyop init`: every flag, the files it writes, and every error case (folder left byte-identical)."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from pyscaffold_op import __version__
from pyscaffold_op.errors import PyopError
from pyscaffold_op.runtime.manager import cmd

from .conftest import AT_INIT, PACKAGE, RunPyop, assert_one_line_error, snapshot

EXPECTED_FILES = {
    ".copier-answers.yml",
    ".dockerignore",
    ".github/workflows/lint.yml",
    ".github/workflows/test.yml",
    ".gitignore",
    "Dockerfile",
    "Makefile",
    "PROJECT",
    "README.md",
    "config/default/kustomization.yaml",
    "config/default/manager_metrics_patch.yaml",
    "config/default/cert_metrics_manager_patch.yaml",
    "config/default/metrics_service.yaml",
    "config/manager/kustomization.yaml",
    "config/manager/manager.yaml",
    "config/manifests/bases/programming-kubernetes.clusterserviceversion.yaml",
    "config/manifests/kustomization.yaml",
    "config/network-policy/allow-metrics-traffic.yaml",
    "config/network-policy/kustomization.yaml",
    "config/prometheus/kustomization.yaml",
    "config/prometheus/monitor.yaml",
    "config/prometheus/monitor_tls_patch.yaml",
    "config/rbac/kustomization.yaml",
    "config/rbac/leader_election_role.yaml",
    "config/rbac/leader_election_role_binding.yaml",
    "config/rbac/metrics_auth_role.yaml",
    "config/rbac/metrics_auth_role_binding.yaml",
    "config/rbac/metrics_reader_role.yaml",
    "config/rbac/role.yaml",
    "config/rbac/role_binding.yaml",
    "config/rbac/service_account.yaml",
    "config/scorecard/bases/config.yaml",
    "config/scorecard/kustomization.yaml",
    "config/scorecard/patches/basic.config.yaml",
    "config/scorecard/patches/olm.config.yaml",
    "hack/boilerplate.py.txt",
    "pyproject.toml",
    f"src/{PACKAGE}/__init__.py",
    f"src/{PACKAGE}/__main__.py",
    "tests/conftest.py",
    "tests/e2e/conftest.py",
    "tests/e2e/test_e2e.py",
    "tests/test_manager_setup.py",
    "wheels/README.md",
}


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def load(path: Path) -> list[dict[str, Any]]:
    return list(YAML(typ="safe").load_all(path.read_text()))


def test_init_writes_the_whole_project(pyop: RunPyop, tmp_path: Path) -> None:
    run = pyop(*AT_INIT, cwd=tmp_path)
    assert run.code == 0, run.err
    assert files(tmp_path) == EXPECTED_FILES
    assert "wrote Makefile" in run.out

    project = (tmp_path / "PROJECT").read_text()
    assert "layout:\n- python.pyop.io/v1\n" in project
    assert "projectName: programming-kubernetes\n" in project
    assert "repo: github.com/AbyssViper/programming-kubernetes\n" in project
    assert "domain: viper.run\n" in project

    default = (tmp_path / "config/default/kustomization.yaml").read_text()
    assert "namespace: programming-kubernetes-system\n" in default
    assert "namePrefix: programming-kubernetes-\n" in default
    assert "#- ../crd\n" in default

    main_py = (tmp_path / f"src/{PACKAGE}/__main__.py").read_text()
    # the standard flags are the runtime's run_manager's; __main__ is the project's part
    assert "return run_manager(\n        setup,\n        argv," in main_py
    assert "def setup(mgr: Manager, flags: ManagerFlags) -> None:" in main_py
    assert len(main_py.splitlines()) < 60
    help_text = cmd.manager_flag_parser("x").format_help()
    for flag in ("--metrics-bind-address", "--health-probe-bind-address", "--leader-elect", "--kubeconfig",
                 "--log-level", "--log-format", "--cache-sync-timeout", "--metrics-secure",
                 "--metrics-cert-path", "--webhook-port", "--webhook-cert-path"):  # fmt: skip
        assert flag in help_text
    defaults = cmd.parse_manager_flags([])
    assert defaults.metrics_bind_address == "0" and defaults.health_probe_bind_address == "127.0.0.1:8081"
    # controller-runtime's zap flag, as a kubebuilder user types it, is the same setting
    assert cmd.parse_manager_flags(["--zap-log-level=debug"]).log_level == "debug"
    # every generated manager can be sharded by a flag (scale the Deployment to scale reconciling)
    from pyscaffold_op.runtime.sharding.flags import sharding_options

    assert sharding_options(defaults) is None
    sharded = sharding_options(cmd.parse_manager_flags(["--sharding", "--shard-by=owner"]))
    assert sharded is not None and sharded.by == "owner"
    assert "# +pyop:scaffold:imports\n" in main_py and "    # +pyop:scaffold:controllers\n" in main_py
    assert re.search(r'LEADER_ELECTION_ID = "[0-9a-f]{8}\.viper\.run"', main_py)

    pyproject = (tmp_path / "pyproject.toml").read_text()
    major, minor = (int(part) for part in __version__.split(".")[:2])
    pins = f">={major}.{minor},<{major + 1}"
    assert f'"pyscaffold-op{pins}"' in pyproject and '"pytest-asyncio>=0.24"' in pyproject
    assert f'"pyscaffold-op[cli,envtest]{pins}"' in pyproject
    assert f"\ncliVersion: {__version__}\n" in (tmp_path / "PROJECT").read_text()
    assert 'asyncio_mode = "auto"' in pyproject and 'pythonpath = ["src"]' in pyproject
    assert 'license = "Apache-2.0"' in pyproject
    # pyop's fixtures come from its pytest11 entry point: the conftest only documents them
    conftest = (tmp_path / "tests/conftest.py").read_text()
    assert "pytest_plugins" not in conftest and "`pytest11` entry point" in conftest


def test_manager_deployment_is_hardened(pyop: RunPyop, tmp_path: Path) -> None:
    assert pyop(*AT_INIT, cwd=tmp_path).code == 0
    namespace, deployment = load(tmp_path / "config/manager/manager.yaml")
    assert namespace["kind"] == "Namespace"
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"] == {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    container = pod["containers"][0]
    assert container["command"] == ["python", "-m", PACKAGE]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": 8081}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": 8081}
    assert set(container["resources"]) == {"limits", "requests"}
    dockerfile = (tmp_path / "Dockerfile").read_text()
    assert dockerfile.count("FROM python:3.12-slim") == 2 and "USER 65532:65532" in dockerfile


def test_makefile_targets(pyop: RunPyop, tmp_path: Path) -> None:
    assert pyop(*AT_INIT, cwd=tmp_path).code == 0
    makefile = (tmp_path / "Makefile").read_text()
    targets = set(re.findall(r"(?m)^([a-z0-9-]+):", makefile))
    assert {"help", "manifests", "fmt", "lint", "test", "test-e2e", "envtest", "run", "docker-build",
            "docker-push", "build-installer", "install", "uninstall", "deploy",
            "undeploy"} <= targets  # fmt: skip
    assert "$(PYOP) generate manifests" in makefile
    assert f"$(PYTHON) -m {PACKAGE}" in makefile
    crds = "$(if $(wildcard config/crd/bases),--crds config/crd/bases)"  # none before the first create api
    assert f"$(PYOP) envtest serve $(ENVTEST_FLAGS) {crds}" in makefile
    assert "$(PYTHON) -m pytest tests/e2e -m e2e $(if $(ENVTEST),--envtest=$(ENVTEST))" in makefile
    assert "kustomize config/crd | $(APPLY) -f -" in makefile
    assert "APPLY = $(KUBECTL) apply --server-side --force-conflicts" in makefile
    assert re.search(r"(?m)^\t", makefile), "recipes must be indented with tabs"


def test_answers_file_is_machine_independent(pyop: RunPyop, tmp_path: Path) -> None:
    assert pyop(*AT_INIT, cwd=tmp_path).code == 0
    answers = YAML(typ="safe").load((tmp_path / ".copier-answers.yml").read_text())
    assert answers["_src_path"] == "pyscaffold-op:templates/init"
    # the template's revision: a digest of its files, the same wherever pyop is installed
    assert re.fullmatch(r"sha256-[0-9a-f]{16}", answers["_commit"])
    assert answers["domain"] == "viper.run" and answers["license"] == "apache2"
    assert str(tmp_path) not in (tmp_path / ".copier-answers.yml").read_text()


def test_project_name_and_owner(pyop: RunPyop, tmp_path: Path) -> None:
    run = pyop(*AT_INIT, "--project-name", "cnat", "--owner", "Abyss Viper", cwd=tmp_path)
    assert run.code == 0, run.err
    assert "namespace: cnat-system\n" in (tmp_path / "config/default/kustomization.yaml").read_text()
    assert "namePrefix: cnat-\n" in (tmp_path / "config/default/kustomization.yaml").read_text()
    assert "projectName: cnat\n" in (tmp_path / "PROJECT").read_text()
    assert (tmp_path / f"src/{PACKAGE}/__init__.py").read_text().startswith("# Copyright Abyss Viper.\n")
    assert (tmp_path / "hack/boilerplate.py.txt").read_text().startswith("# Copyright Abyss Viper.\n")


def test_default_project_name_comes_from_the_folder(pyop: RunPyop, tmp_path: Path) -> None:
    """Issue 27 (kubebuilder parity): the default project name was the repo's last element; kubebuilder
    takes the folder's name (lower-cased). pyop also turns '_' and '.' into '-'."""
    root = tmp_path / "My_Operator"
    root.mkdir()
    assert pyop("init", "--domain", "example.com", "--repo", "example.com/me/op-repo", cwd=root).code == 0
    assert "projectName: my-operator\n" in (root / "PROJECT").read_text()
    assert (root / "src/op_repo/__main__.py").is_file()
    bad = tmp_path / "my operator"
    bad.mkdir()
    run = pyop("init", "--domain", "example.com", "--repo", "example.com/me/op", cwd=bad)
    assert_one_line_error(run, "invalid project name 'my operator'", "the folder's name", "--project-name")
    assert not list(bad.iterdir())
    assert (
        pyop(
            "init", "--domain", "example.com", "--repo", "example.com/me/op", "--project-name", "op", cwd=bad
        ).code
        == 0
    )


def test_license_none(pyop: RunPyop, tmp_path: Path) -> None:
    assert pyop(*AT_INIT, "--license", "none", cwd=tmp_path).code == 0
    assert not (tmp_path / "hack").exists()
    assert "license" not in (tmp_path / "pyproject.toml").read_text()
    assert (tmp_path / f"src/{PACKAGE}/__main__.py").read_text().startswith('"""')


def test_namespaced(pyop: RunPyop, tmp_path: Path) -> None:
    assert pyop(*AT_INIT, "--namespaced", cwd=tmp_path).code == 0
    assert "namespaced: true\n" in (tmp_path / "PROJECT").read_text()
    (role,) = load(tmp_path / "config/rbac/role.yaml")
    (binding,) = load(tmp_path / "config/rbac/role_binding.yaml")
    assert role["kind"] == "Role" and role["metadata"]["namespace"] == "system"
    assert binding["kind"] == "RoleBinding" and binding["roleRef"]["kind"] == "Role"
    _, deployment = load(tmp_path / "config/manager/manager.yaml")
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [
        {"name": "WATCH_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
    ]
    run = pyop("create", "api", "--group", "g", "--version", "v1", "--kind", "At", "--no-make", cwd=tmp_path)
    assert run.code == 0, run.err
    controller = (tmp_path / f"src/{PACKAGE}/controllers/at_controller.py").read_text()
    assert controller.count(",namespace=programming-kubernetes-system\n") == 3


KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]
current-context: x
"""


BUILD_MANAGER = cmd.build_manager


def _manager_namespace(root: Path, monkeypatch: pytest.MonkeyPatch, watch: str | None) -> str | None:
    """The namespace the generated manager's cache is restricted to, with $WATCH_NAMESPACE = `watch`."""
    (root / "kubeconfig").write_text(KUBECONFIG)
    spec = importlib.util.spec_from_file_location(f"main_{watch}", root / f"src/{PACKAGE}/__main__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if watch is None:
        monkeypatch.delenv("WATCH_NAMESPACE", raising=False)
    else:
        monkeypatch.setenv("WATCH_NAMESPACE", watch)
    # the manager run_manager builds, caught before it starts
    built: list[Any] = []

    def build_and_stop(*args: Any, **kwargs: Any) -> Any:
        built.append(BUILD_MANAGER(*args, **kwargs))
        raise PyopError("built")

    monkeypatch.setattr(cmd, "build_manager", build_and_stop)
    assert module.main(["--kubeconfig", str(root / "kubeconfig")]) == 1
    return built[0].cache.namespace


def test_namespaced_manager_watches_only_watch_namespace(
    pyop: RunPyop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the Deployment sets WATCH_NAMESPACE; the manager must use it, or its Role forbids every watch
    assert pyop(*AT_INIT, "--namespaced", cwd=tmp_path).code == 0
    assert _manager_namespace(tmp_path, monkeypatch, "team-a") == "team-a"
    assert _manager_namespace(tmp_path, monkeypatch, None) is None  # `make run`: every namespace


def test_cluster_wide_manager_ignores_watch_namespace(
    pyop: RunPyop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert pyop(*AT_INIT, cwd=tmp_path).code == 0
    assert "WATCH_NAMESPACE" not in (tmp_path / f"src/{PACKAGE}/__main__.py").read_text()
    assert _manager_namespace(tmp_path, monkeypatch, "team-a") is None


def test_cluster_wide_by_default(pyop: RunPyop, tmp_path: Path) -> None:
    assert pyop(*AT_INIT, cwd=tmp_path).code == 0
    (role,) = load(tmp_path / "config/rbac/role.yaml")
    assert role["kind"] == "ClusterRole" and "namespace" not in role["metadata"]
    assert "namespaced" not in (tmp_path / "PROJECT").read_text()


def test_multigroup(pyop: RunPyop, tmp_path: Path) -> None:
    assert pyop(*AT_INIT, "--multigroup", cwd=tmp_path).code == 0
    assert "multigroup: true\n" in (tmp_path / "PROJECT").read_text()


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (
            ["--domain", "Viper.Run", "--repo", "github.com/a/b"],
            ["invalid domain 'Viper.Run'", "DNS-1123 subdomain"],
        ),
        (["--domain", "-x.io", "--repo", "github.com/a/b"], ["invalid domain '-x.io'"]),
        (["--domain", "", "--repo", "github.com/a/b"], ["invalid domain ''"]),
        (["--domain", "x.io", "--repo", "github.com/a/b c"], ["invalid repo", "no spaces"]),
        (["--domain", "x.io", "--repo", "https://github.com/a/b"], ["invalid repo", "no scheme"]),
        (["--domain", "x.io", "--repo", "github.com/a/class"], ["Python package 'class'", "identifier"]),
        (["--domain", "x.io", "--repo", "github.com/a/json"], ["Python package 'json'", "standard-library"]),
        (["--domain", "x.io", "--repo", "github.com/a/9lives"], ["invalid repo", "identifier"]),
        (["--domain", "x.io", "--repo", "github.com/a/yaml"], ["Python package 'yaml'", "installed module"]),
        (["--domain", "x.io", "--repo", "github.com/a/pydantic"], ["'pydantic'", "installed module"]),
        (
            ["--domain", "x.io", "--repo", "github.com/a/b", "--project-name", "Bad_Name"],
            ["invalid project name 'Bad_Name'", "DNS-1123 label"],
        ),
        (
            ["--domain", "x.io", "--repo", "github.com/a/b", "--project-name", "a" * 60],
            ["invalid project name", "at most 56"],
        ),
        (
            ["--domain", "x.io", "--repo", "github.com/a/b", "--license", "mit"],
            ["invalid license 'mit'", "apache2"],
        ),
        (
            ["--domain", "x.io", "--repo", "github.com/a/b", "--owner", "a\nb"],
            ["invalid owner", "single line"],
        ),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    pyop: RunPyop, tmp_path: Path, args: list[str], fragments: list[str]
) -> None:
    (tmp_path / "keep.txt").write_text("untouched\n")
    before = snapshot(tmp_path)
    assert_one_line_error(pyop("init", *args, cwd=tmp_path), *fragments)
    assert snapshot(tmp_path) == before


def test_a_package_shadowing_an_installed_library_is_refused_but_not_an_editable_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `src/` goes first on sys.path in `pyop generate` and `make run`: a package named like an installed
    # library (six, yaml) hides it from pyop's own dependencies (`generate --check` died in jsonschema)
    from pyscaffold_op.names import installed_module_path

    yaml_path = installed_module_path("yaml")
    assert yaml_path is not None and "site-packages" in yaml_path
    assert installed_module_path("no_such_module_anywhere") is None
    (tmp_path / "src" / "earlier_attempt").mkdir(parents=True)  # an editable install of an earlier project
    (tmp_path / "src" / "earlier_attempt" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    assert installed_module_path("earlier_attempt") is None


def test_init_twice_is_refused(pyop: RunPyop, initialized: Path) -> None:
    before = snapshot(initialized)
    assert_one_line_error(pyop(*AT_INIT, cwd=initialized), "PROJECT already exists")
    assert snapshot(initialized) == before


def test_init_inside_a_project_is_refused(pyop: RunPyop, initialized: Path) -> None:
    inner = initialized / "config"
    before = snapshot(initialized)
    assert_one_line_error(pyop(*AT_INIT, cwd=inner), "already holds a project")
    assert snapshot(initialized) == before


def test_init_never_overwrites_existing_files(pyop: RunPyop, tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("all:\n\techo mine\n")
    (tmp_path / "README.md").write_text("# mine\n")
    before = snapshot(tmp_path)
    assert_one_line_error(
        pyop(*AT_INIT, cwd=tmp_path), "Makefile already exists (and 1 more)", "never overwrites"
    )
    assert snapshot(tmp_path) == before


def test_a_file_where_a_folder_must_go(pyop: RunPyop, tmp_path: Path) -> None:
    (tmp_path / "config").write_text("not a folder\n")
    before = snapshot(tmp_path)
    assert_one_line_error(pyop(*AT_INIT, cwd=tmp_path), "not empty (config)")
    assert snapshot(tmp_path) == before


def test_a_folder_where_a_file_must_go(pyop: RunPyop, tmp_path: Path) -> None:
    (tmp_path / "Makefile").mkdir()
    before = snapshot(tmp_path)
    assert_one_line_error(pyop(*AT_INIT, cwd=tmp_path), "not empty (Makefile)")
    assert snapshot(tmp_path) == before


def test_init_in_a_folder_of_other_things_is_refused(pyop: RunPyop, tmp_path: Path) -> None:
    # Like kubebuilder: running init in, say, /tmp or a home folder is a mistake, not a project.
    (tmp_path / "notes.txt").write_text("x\n")
    (tmp_path / "scratch").mkdir()
    before = snapshot(tmp_path)
    assert_one_line_error(pyop(*AT_INIT, cwd=tmp_path), "not empty (notes.txt and 1 more)")
    assert snapshot(tmp_path) == before


def test_missing_required_flag_is_a_usage_error(pyop: RunPyop, tmp_path: Path) -> None:
    run = pyop("init", "--repo", "github.com/a/b", cwd=tmp_path)
    assert run.code == 2 and "--domain" in run.err
    assert list(tmp_path.iterdir()) == []


def test_unrelated_files_are_kept(pyop: RunPyop, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "LICENSE").write_text("license text\n")
    assert pyop(*AT_INIT, cwd=tmp_path).code == 0
    assert (tmp_path / "LICENSE").read_text() == "license text\n"
    assert (tmp_path / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"


def test_kubebuilders_init_flags_are_taken(pyop: RunPyop, tmp_path: Path) -> None:
    """generate.sh's init: `--plugins=go/v4`, no `--repo` (kubebuilder reads go.mod; here the folder's
    name names the repo and the package), `--license apache2 --owner ...`."""
    root = tmp_path / "project-v4"
    root.mkdir()
    run = pyop("init", "--plugins=go/v4", "--domain", "testproject.org", "--license", "apache2",
               "--owner", "The Kubernetes authors", cwd=root)  # fmt: skip
    assert run.code == 0, run.err
    project = YAML(typ="safe").load((root / "PROJECT").read_text())
    assert (project["repo"], project["projectName"]) == ("project-v4", "project-v4")
    assert (root / "src/project_v4/__main__.py").is_file()
    assert "Copyright" in (root / "hack/boilerplate.py.txt").read_text()
    assert "The Kubernetes authors" in (root / "hack/boilerplate.py.txt").read_text()
    assert "Apache License" in (root / "hack/boilerplate.py.txt").read_text()


def test_another_base_plugin_is_refused(pyop: RunPyop, tmp_path: Path) -> None:
    run = pyop("init", "--plugins=go/v3", "--domain", "example.org", cwd=tmp_path)
    assert_one_line_error(run, "unknown plugin 'go/v3'", "go/v4")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_name_that_makes_no_package_asks_for_repo(pyop: RunPyop, tmp_path: Path) -> None:
    root = tmp_path / "9lives"
    root.mkdir()
    run = pyop("init", "--domain", "example.org", cwd=root)
    assert_one_line_error(run, "invalid repo '9lives'", "no --repo was given: the folder's name stood in")
    assert list(root.iterdir()) == []


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_gitignore_keeps_what_make_helm_and_build_installer_write(initialized: Path) -> None:
    """Issue 35: the .gitignore ignored dist/, where `make build-installer` and `make helm` write the
    install.yaml and the chart kubebuilder projects commit; git itself judges."""
    subprocess.run(["git", "init", "-q"], cwd=initialized, check=True)
    paths = ["dist/install.yaml", "dist/chart/Chart.yaml", "dist/project-0.1.0.whl", "dev.kubeconfig"]
    run = subprocess.run(
        ["git", "check-ignore", *paths], cwd=initialized, capture_output=True, text=True, check=False
    )
    assert run.stdout.split() == ["dist/project-0.1.0.whl", "dev.kubeconfig"]
