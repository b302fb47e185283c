"""`pyop create api`: every flag, the files and edits it makes, and every error case."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
import yaml
from ruamel.yaml import YAML

from .conftest import AT_API, PACKAGE, RunPyop, assert_one_line_error, snapshot

API = f"src/{PACKAGE}/api/v1alpha1"
MAIN = f"src/{PACKAGE}/__main__.py"


def api_args(
    *extra: str, group: str = "programming-kubernetes", version: str = "v1alpha1", kind: str = "At"
) -> list[str]:
    return ["create", "api", "--group", group, "--version", version, "--kind", kind, "--no-make", *extra]


def safe_load(path: Path) -> object:
    return YAML(typ="safe").load(path.read_text())


def test_create_api_writes_types_controller_samples_rbac_and_tests(pyop: RunPyop, initialized: Path) -> None:
    run = pyop(*AT_API, cwd=initialized)
    assert run.code == 0, run.err
    for relpath in (
        f"{API}/__init__.py",
        f"{API}/groupversion_info.py",
        f"{API}/at_types.py",
        f"src/{PACKAGE}/api/__init__.py",
        f"src/{PACKAGE}/controllers/__init__.py",
        f"src/{PACKAGE}/controllers/at_controller.py",
        "tests/test_at_controller.py",
        "config/samples/programming-kubernetes_v1alpha1_at.yaml",
        "config/samples/kustomization.yaml",
        "config/rbac/at_admin_role.yaml",
        "config/rbac/at_editor_role.yaml",
        "config/rbac/at_viewer_role.yaml",
        "config/crd/kustomization.yaml",
    ):
        assert (initialized / relpath).is_file(), relpath
        assert f"wrote {relpath}" in run.out

    types = (initialized / f"{API}/at_types.py").read_text()
    assert "class AtSpec(KubeModel):" in types and "class AtStatus(KubeModel):" in types
    assert (
        "# +kubebuilder:object:root=true\n# +kubebuilder:subresource:status\nclass At(CustomResource):"
        in types
    )
    assert 'gvk = GroupVersionKind(GROUP, VERSION, "At")' in types and 'plural = "ats"' in types
    assert "namespaced = True" in types
    assert (
        'GROUP = "programming-kubernetes.viper.run"'
        in (initialized / f"{API}/groupversion_info.py").read_text()
    )
    init = (initialized / f"{API}/__init__.py").read_text()
    assert f"from {PACKAGE}.api.v1alpha1.at_types import At, AtSpec, AtStatus\n" in init
    assert '    "At",\n    "AtSpec",\n    "AtStatus",\n' in init

    controller = (initialized / f"src/{PACKAGE}/controllers/at_controller.py").read_text()
    group = "programming-kubernetes.viper.run"
    assert (
        f"# +kubebuilder:rbac:groups={group},resources=ats,verbs=get;list;watch;create;update;patch;delete"
        in controller
    )
    assert f"# +kubebuilder:rbac:groups={group},resources=ats/status,verbs=get;update;patch" in controller
    assert f"# +kubebuilder:rbac:groups={group},resources=ats/finalizers,verbs=update" in controller
    assert "def setup_with_manager(self, mgr: Manager) -> None:" in controller
    assert 'mgr.builder().for_(At).named("at").complete(self)' in controller
    assert "namespace=request.namespace" in controller

    main_py = (initialized / MAIN).read_text()
    assert (
        f"from {PACKAGE}.controllers.at_controller import AtReconciler\n\n# +pyop:scaffold:imports" in main_py
    )
    assert 'recorder=mgr.get_event_recorder("at-controller"),\n    ).setup_with_manager(mgr)\n' in main_py

    assert safe_load(initialized / "config/samples/kustomization.yaml") == {
        "resources": ["programming-kubernetes_v1alpha1_at.yaml"]
    }
    sample = safe_load(initialized / "config/samples/programming-kubernetes_v1alpha1_at.yaml")
    assert sample["apiVersion"] == "programming-kubernetes.viper.run/v1alpha1" and sample["kind"] == "At"
    assert safe_load(initialized / "config/crd/kustomization.yaml") == {
        "resources": ["bases/programming-kubernetes.viper.run_ats.yaml"]
    }
    rbac = safe_load(initialized / "config/rbac/kustomization.yaml")
    assert rbac["resources"][-3:] == ["at_admin_role.yaml", "at_editor_role.yaml", "at_viewer_role.yaml"]
    rbac_text = (initialized / "config/rbac/kustomization.yaml").read_text()
    assert rbac_text.endswith("- at_viewer_role.yaml\n# +pyop:scaffold:rbac-roles\n")
    assert "# All RBAC will be applied under this service account in\n" in rbac_text
    default = safe_load(initialized / "config/default/kustomization.yaml")
    assert default["resources"][0] == "../crd"
    editor = safe_load(initialized / "config/rbac/at_editor_role.yaml")
    assert editor["rules"][0]["verbs"] == ["create", "delete", "get", "list", "patch", "update", "watch"]
    assert safe_load(initialized / "config/rbac/at_admin_role.yaml")["rules"][0]["verbs"] == ["*"]

    project = safe_load(initialized / "PROJECT")
    assert project["resources"] == [
        {
            "api": {"crdVersion": "v1", "namespaced": True},
            "controller": True,
            "domain": "viper.run",
            "group": "programming-kubernetes",
            "kind": "At",
            "path": f"{PACKAGE}.api.v1alpha1",
            "version": "v1alpha1",
        }
    ]


def test_second_kind_and_version_keep_everything_sorted(pyop: RunPyop, with_api: Path) -> None:
    assert pyop(*api_args(kind="Alpha"), cwd=with_api).code == 0
    assert pyop(*api_args(kind="Bee", version="v1"), cwd=with_api).code == 0
    init = (with_api / f"{API}/__init__.py").read_text()
    assert init.index("alpha_types") < init.index("at_types") < init.index("groupversion_info")
    assert init.index('"Alpha",') < init.index('"At",')
    assert (with_api / f"src/{PACKAGE}/api/v1/bee_types.py").is_file()
    main_py = (with_api / MAIN).read_text()
    assert (
        main_py.index("alpha_controller") < main_py.index("at_controller") < main_py.index("bee_controller")
    )
    assert main_py.count(".setup_with_manager(mgr)") == 3
    crd = safe_load(with_api / "config/crd/kustomization.yaml")
    assert crd["resources"] == [
        "bases/programming-kubernetes.viper.run_ats.yaml",
        "bases/programming-kubernetes.viper.run_alphas.yaml",
        "bases/programming-kubernetes.viper.run_bees.yaml",
    ]
    assert [r["kind"] for r in safe_load(with_api / "PROJECT")["resources"]] == ["At", "Alpha", "Bee"]


def test_no_controller(pyop: RunPyop, initialized: Path) -> None:
    main_before = (initialized / MAIN).read_text()
    assert pyop(*api_args("--no-controller"), cwd=initialized).code == 0
    assert (initialized / f"{API}/at_types.py").is_file()
    assert not (initialized / f"src/{PACKAGE}/controllers").exists()
    assert not (initialized / "tests/test_at_controller.py").exists()
    assert (initialized / MAIN).read_text() == main_before
    assert "controller" not in safe_load(initialized / "PROJECT")["resources"][0]  # kubebuilder omits false


def test_no_resource_adds_a_controller_to_an_existing_api(pyop: RunPyop, initialized: Path) -> None:
    assert pyop(*api_args("--no-controller"), cwd=initialized).code == 0
    types_before = (initialized / f"{API}/at_types.py").read_bytes()
    run = pyop(*api_args("--no-resource", "--controller"), cwd=initialized)
    assert run.code == 0, run.err
    assert (initialized / f"{API}/at_types.py").read_bytes() == types_before
    assert (initialized / f"src/{PACKAGE}/controllers/at_controller.py").is_file()
    assert "AtReconciler(" in (initialized / MAIN).read_text()
    (resource,) = safe_load(initialized / "PROJECT")["resources"]
    assert resource["controller"] is True and resource["api"] == {"crdVersion": "v1", "namespaced": True}


def test_a_later_controller_creates_the_sample_or_builds_one_without_it(
    pyop: RunPyop, initialized: Path
) -> None:
    assert pyop(*api_args("--no-controller"), cwd=initialized).code == 0
    assert pyop(*api_args("--no-resource", "--controller"), cwd=initialized).code == 0
    test = (initialized / "tests/test_at_controller.py").read_text()
    assert "at = load_sample(At, SAMPLE)" in test and "ObjectMeta" not in test
    # the user removed the sample: the test builds the object itself
    (initialized / "config/samples/programming-kubernetes_v1alpha1_at.yaml").unlink()
    assert pyop(*api_args("--no-resource", "--controller", "--force"), cwd=initialized).code == 0
    test = (initialized / "tests/test_at_controller.py").read_text()
    assert "load_sample" not in test and 'ObjectMeta(name="at-sample", namespace=namespace)' in test
    compile(test, "test_at_controller.py", "exec")


def test_no_resource_controller_follows_the_recorded_scope_and_plural(
    pyop: RunPyop, initialized: Path
) -> None:
    # the types were made cluster-scoped with a custom plural; the later controller must match them
    assert (
        pyop(*api_args("--no-controller", "--cluster-scoped", "--plural", "atjobs"), cwd=initialized).code
        == 0
    )
    run = pyop(*api_args("--no-resource", "--controller"), cwd=initialized)
    assert run.code == 0, run.err
    controller = (initialized / f"src/{PACKAGE}/controllers/at_controller.py").read_text()
    assert "self.client.get(At, request.name)" in controller
    assert "resources=atjobs," in controller and "resources=ats" not in controller
    assert 'namespace="default"' not in (initialized / "tests/test_at_controller.py").read_text()
    (resource,) = safe_load(initialized / "PROJECT")["resources"]
    assert resource["api"]["namespaced"] is False and resource["plural"] == "atjobs"


def test_cluster_scoped_kind_in_a_namespaced_project_warns_about_rbac(pyop: RunPyop, tmp_path: Path) -> None:
    # the manager of `init --namespaced` has only a Role: a cluster-scoped kind's controller is forbidden
    from .conftest import AT_INIT

    assert pyop(*AT_INIT, "--namespaced", cwd=tmp_path).code == 0
    run = pyop(*api_args("--cluster-scoped"), cwd=tmp_path)
    assert run.code == 0, run.err
    (warning,) = run.err.strip().splitlines()
    assert warning.startswith("warning: At is cluster-scoped but this project's manager is namespaced")
    assert "ClusterRole and ClusterRoleBinding" in warning
    run = pyop(*api_args(kind="Job"), cwd=tmp_path)  # a namespaced kind: no warning
    assert run.code == 0 and run.err == ""


def test_cluster_scoped(pyop: RunPyop, initialized: Path) -> None:
    assert pyop(*api_args("--cluster-scoped"), cwd=initialized).code == 0
    types = (initialized / f"{API}/at_types.py").read_text()
    assert "namespaced = False" in types and "# +kubebuilder:resource:scope=Cluster\nclass At(" in types
    controller = (initialized / f"src/{PACKAGE}/controllers/at_controller.py").read_text()
    assert "self.client.get(At, request.name)" in controller
    assert 'namespace="default"' not in (initialized / "tests/test_at_controller.py").read_text()
    assert safe_load(initialized / "PROJECT")["resources"][0]["api"]["namespaced"] is False


def test_plural(pyop: RunPyop, initialized: Path) -> None:
    assert pyop(*api_args("--plural", "atjobs"), cwd=initialized).code == 0
    assert 'plural = "atjobs"' in (initialized / f"{API}/at_types.py").read_text()
    assert safe_load(initialized / "PROJECT")["resources"][0]["plural"] == "atjobs"
    assert "resources=atjobs," in (initialized / f"src/{PACKAGE}/controllers/at_controller.py").read_text()
    assert (
        "bases/programming-kubernetes.viper.run_atjobs.yaml"
        in (initialized / "config/crd/kustomization.yaml").read_text()
    )


@pytest.mark.parametrize(
    ("kind", "plural"), [("Policy", "policies"), ("Ingress", "ingresses"), ("Bus", "buses")]
)
def test_plural_is_computed_like_kubebuilder(
    pyop: RunPyop, initialized: Path, kind: str, plural: str
) -> None:
    assert pyop(*api_args(kind=kind), cwd=initialized).code == 0
    assert f'plural = "{plural}"' in (initialized / f"{API}/{kind.lower()}_types.py").read_text()
    assert "plural" not in safe_load(initialized / "PROJECT")["resources"][0]


def test_force_overwrites_and_does_not_duplicate(pyop: RunPyop, with_api: Path) -> None:
    types = with_api / f"{API}/at_types.py"
    types.write_text(types.read_text() + "\n# my edit\n")
    before = snapshot(with_api)
    assert_one_line_error(pyop(*api_args(), cwd=with_api), "already exists", "--force")
    assert snapshot(with_api) == before
    run = pyop(*api_args("--force"), cwd=with_api)
    assert run.code == 0, run.err
    assert "# my edit" not in types.read_text()
    assert (with_api / MAIN).read_text().count("AtReconciler(") == 1
    assert (with_api / f"{API}/__init__.py").read_text().count('"At",') == 1
    assert (with_api / "config/rbac/kustomization.yaml").read_text().count("at_admin_role.yaml") == 1
    assert len(safe_load(with_api / "PROJECT")["resources"]) == 1


def test_existing_files_clash_without_force(pyop: RunPyop, initialized: Path) -> None:
    controller = initialized / f"src/{PACKAGE}/controllers/at_controller.py"
    controller.parent.mkdir(parents=True)
    controller.write_text("# somebody else's controller\n")
    before = snapshot(initialized)
    assert_one_line_error(pyop(*api_args(), cwd=initialized), "at_controller.py already exists", "--force")
    assert snapshot(initialized) == before


def test_multigroup_layout(pyop: RunPyop, tmp_path: Path) -> None:
    assert (
        pyop(
            "init", "--domain", "example.com", "--repo", "example.com/x/ship", "--multigroup", cwd=tmp_path
        ).code
        == 0
    )
    assert pyop(*api_args(group="crew", version="v1", kind="Captain"), cwd=tmp_path).code == 0
    assert pyop(*api_args(group="sea-creatures", version="v1beta1", kind="Captain"), cwd=tmp_path).code == 0
    assert (tmp_path / "src/ship/api/crew/v1/captain_types.py").is_file()
    assert (tmp_path / "src/ship/api/sea_creatures/v1beta1/captain_types.py").is_file()
    assert (tmp_path / "src/ship/api/crew/__init__.py").is_file()
    assert (tmp_path / "src/ship/controllers/crew/captain_controller.py").is_file()
    assert (tmp_path / "src/ship/controllers/sea_creatures/captain_controller.py").is_file()
    assert (tmp_path / "tests/test_crew_captain_controller.py").is_file()
    assert (tmp_path / "config/rbac/crew_captain_admin_role.yaml").is_file()
    assert (tmp_path / "config/samples/sea-creatures_v1beta1_captain.yaml").is_file()
    main_py = (tmp_path / "src/ship/__main__.py").read_text()
    assert (
        "from ship.controllers.crew.captain_controller import CaptainReconciler as CrewCaptainReconciler"
        in main_py
    )
    assert "SeaCreaturesCaptainReconciler(" in main_py
    assert (
        'named("sea-creatures-captain")'
        in (tmp_path / "src/ship/controllers/sea_creatures/captain_controller.py").read_text()
    )
    paths = [r["path"] for r in safe_load(tmp_path / "PROJECT")["resources"]]
    assert paths == ["ship.api.crew.v1", "ship.api.sea_creatures.v1beta1"]


needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


@needs_make
def test_multigroup_groups_sharing_a_package_are_refused(pyop: RunPyop, tmp_path: Path) -> None:
    # net-infra and net.infra both map to api/net_infra/: the second kind would get the first group's GROUP
    from .conftest import AT_INIT

    assert pyop(*AT_INIT, "--multigroup", cwd=tmp_path).code == 0
    assert pyop(*api_args(group="net.infra", kind="Router"), cwd=tmp_path).code == 0
    before = snapshot(tmp_path)
    run = pyop(*api_args(group="net-infra", kind="Switch"), cwd=tmp_path)
    assert_one_line_error(run, "cannot add group 'net-infra'", "api/net_infra/", "'net.infra'")
    assert snapshot(tmp_path) == before
    assert pyop(*api_args(group="net.infra", kind="Switch"), cwd=tmp_path).code == 0  # same group: fine


def test_multigroup_foo_and_foo_policy_are_two_packages(pyop: RunPyop, tmp_path: Path) -> None:
    """Issue 27 (kubebuilder parity, its multigroup project): `foo` after `foo.policy` was refused (both
    were api/foo/). A group's package is the whole group made an identifier (kubebuilder: api/foo/ and
    api/foo.policy/), and its controller and helper roles are named after the whole group
    (`foo.policy-healthcheckpolicy-admin-role`, as kubebuilder names them)."""
    from .conftest import AT_INIT

    assert pyop(*AT_INIT, "--multigroup", cwd=tmp_path).code == 0
    assert pyop(*api_args(group="foo.policy", kind="HealthCheckPolicy"), cwd=tmp_path).code == 0
    run = pyop(*api_args(group="foo", kind="Bar"), cwd=tmp_path)
    assert run.code == 0, run.err
    paths = [r["path"] for r in safe_load(tmp_path / "PROJECT")["resources"]]
    assert paths == [f"{PACKAGE}.api.foo_policy.v1alpha1", f"{PACKAGE}.api.foo.v1alpha1"]
    src = tmp_path / f"src/{PACKAGE}"
    assert (src / "api/foo_policy/v1alpha1/healthcheckpolicy_types.py").is_file()
    assert (src / "api/foo/v1alpha1/bar_types.py").is_file()
    controller = (src / "controllers/foo_policy/healthcheckpolicy_controller.py").read_text()
    assert 'named("foo.policy-healthcheckpolicy")' in controller
    role = safe_load(tmp_path / "config/rbac/foo_policy_healthcheckpolicy_admin_role.yaml")
    assert role["metadata"]["name"] == "foo.policy-healthcheckpolicy-admin-role"
    main_py = (src / "__main__.py").read_text()
    assert "FooPolicyHealthCheckPolicyReconciler(" in main_py and "FooBarReconciler(" in main_py


def test_multigroup_a_dotted_groups_recorded_package_is_kept(pyop: RunPyop, tmp_path: Path) -> None:
    """A project whose dotted group got the package of its first label (an earlier pyop) keeps it for
    the group's new kinds: PROJECT records where the group's kinds are."""
    from .conftest import AT_INIT

    assert pyop(*AT_INIT, "--multigroup", cwd=tmp_path).code == 0
    project = tmp_path / "PROJECT"
    assert pyop(*api_args(group="foo.policy", kind="HealthCheckPolicy"), cwd=tmp_path).code == 0
    src = tmp_path / f"src/{PACKAGE}"
    (src / "api/foo_policy").rename(src / "api/foo")
    (src / "controllers/foo_policy").rename(src / "controllers/foo")
    project.write_text(project.read_text().replace(".api.foo_policy.v1alpha1", ".api.foo.v1alpha1"))
    run = pyop(*api_args(group="foo.policy", kind="RateLimit"), cwd=tmp_path)
    assert run.code == 0, run.err
    assert (src / "api/foo/v1alpha1/ratelimit_types.py").is_file()
    assert (src / "controllers/foo/ratelimit_controller.py").is_file()


@pytest.mark.parametrize(("group", "module"), [("9net", "9net"), ("import", "import"), ("class", "class")])
def test_multigroup_group_must_make_a_python_package(
    pyop: RunPyop, tmp_path: Path, group: str, module: str
) -> None:
    # `--group 9net` wrote api/9net/v1/, which no import statement can name
    from .conftest import AT_INIT

    assert pyop(*AT_INIT, "--multigroup", cwd=tmp_path).code == 0
    before = snapshot(tmp_path)
    run = pyop(*api_args(group=group, kind="Router"), cwd=tmp_path)
    assert_one_line_error(run, f"invalid group {group!r}", f"api/{module}/", "valid identifier")
    assert snapshot(tmp_path) == before


def test_make_runs_make_manifests(pyop: RunPyop, initialized: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The Makefile's `manifests` recipe is `$(PYOP) generate manifests`; PYOP comes from the environment.
    monkeypatch.setenv("PYOP", "touch made-by-make; true")
    run = pyop(*AT_API[:-1], "--make", cwd=initialized)
    assert run.code == 0, run.err
    assert (initialized / "made-by-make").is_file()


@needs_make
def test_make_uses_this_installation_of_pyop(
    pyop: RunPyop, initialized: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without PYOP set and without `pyop` on PATH, `make manifests` still runs this pyop's generator."""
    monkeypatch.delenv("PYOP", raising=False)
    monkeypatch.setenv("PATH", str(Path(shutil.which("make") or "/usr/bin/make").parent))
    run = pyop(*AT_API[:-1], cwd=initialized)
    assert run.code == 0, run.err
    assert (initialized / "config/crd/bases/programming-kubernetes.viper.run_ats.yaml").is_file()


@needs_make
def test_make_is_the_default(pyop: RunPyop, initialized: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYOP", "touch made-by-make; true")
    assert pyop(*AT_API[:-1], cwd=initialized).code == 0
    assert (initialized / "made-by-make").is_file()


@needs_make
def test_failing_make_keeps_the_files_and_exits_1(
    pyop: RunPyop, initialized: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYOP", "false")
    run = pyop(*AT_API[:-1], cwd=initialized)
    assert run.code == 1
    assert "`make manifests` failed" in run.err
    assert (initialized / f"{API}/at_types.py").is_file()


def test_make_missing_keeps_the_files_and_exits_1(
    pyop: RunPyop, initialized: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyscaffold_op.scaffold.make as make_module

    monkeypatch.setattr(make_module.shutil, "which", lambda name: None)
    run = pyop(*AT_API[:-1], cwd=initialized)
    assert run.code == 1 and "no make on PATH (use --no-make)" in run.err
    assert (initialized / f"{API}/at_types.py").is_file()


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (["--group", "Crew"], ["invalid group 'Crew'", "DNS-1123 subdomain"]),
        (["--group", "crew_x"], ["invalid group 'crew_x'"]),
        (["--group", "", "--resource"], ["invalid group ''", "needs a group"]),
        (["--group", ""], ["no built-in models for core/v1alpha1"]),
        (["--group", "", "--no-resource"], ["no built-in models for core/v1alpha1"]),
        (["--version", "1"], ["invalid version '1'", "v<N>"]),
        (["--version", "v1alpha"], ["invalid version 'v1alpha'"]),
        (["--version", "v0"], ["invalid version 'v0'"]),
        (["--version", "V1"], ["invalid version 'V1'"]),
        (["--kind", "at"], ["invalid kind 'at'", "CamelCase"]),
        (["--kind", "At-Job"], ["invalid kind 'At-Job'"]),
        (["--kind", "1At"], ["invalid kind '1At'"]),
        (["--kind", "Class"], ["invalid kind 'Class'", "keyword"]),
        (["--kind", "Time"], ["invalid kind 'Time'", "built-in module 'time'"]),
        (["--kind", "Sys"], ["invalid kind 'Sys'", "built-in module 'sys'"]),
        (["--kind", "Any"], ["invalid kind 'Any'", "variable 'any' would shadow"]),
        (["--kind", "Log"], ["invalid kind 'Log'", "variable 'log' would shadow"]),
        (["--kind", "Request"], ["invalid kind 'Request'", "shadow"]),
        (["--plural", "Ats"], ["invalid plural 'Ats'", "DNS-1123 label"]),
        (
            ["--kind", "Status", "--plural", "status"],
            ["invalid plural 'status' for a namespaced kind", "--plural statuses"],
        ),
        (["--plural", "finalize"], ["invalid plural 'finalize'", "subresource of the Namespace"]),
        (["--plural", "a.ts"], ["invalid plural 'a.ts'"]),
        (["--no-resource", "--no-controller"], ["nothing to scaffold"]),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(
    pyop: RunPyop, initialized: Path, extra: list[str], fragments: list[str]
) -> None:
    args = [
        "create",
        "api",
        "--group",
        "programming-kubernetes",
        "--version",
        "v1alpha1",
        "--kind",
        "At",
        "--no-make",
    ]
    before = snapshot(initialized)
    assert_one_line_error(pyop(*args, *extra, cwd=initialized), *fragments)
    assert snapshot(initialized) == before


def test_kind_status_works_with_a_plural_or_cluster_scoped(pyop: RunPyop, initialized: Path) -> None:
    assert pyop(*api_args("--plural", "statuses", kind="Status"), cwd=initialized).code == 0
    assert pyop(*api_args("--cluster-scoped", kind="Finalize"), cwd=initialized).code == 0


@pytest.mark.parametrize("kind", ["Site", "Queue", "Operator", "Resource", "Json", "Logging"])
def test_a_kind_named_like_a_standard_library_module_is_fine(
    pyop: RunPyop, initialized: Path, kind: str
) -> None:
    # its modules are <kind>_types.py and <kind>_controller.py: they shadow nothing (kubebuilder allows them)
    run = pyop(*api_args(kind=kind), cwd=initialized)
    assert run.code == 0, run.err
    assert (initialized / f"{API}/{kind.lower()}_types.py").is_file()


def test_a_second_group_needs_multigroup(pyop: RunPyop, with_api: Path) -> None:
    before = snapshot(with_api)
    # (`batch`, like kubebuilder's other core groups, means the built-in kinds: see test_other_api.py)
    run = pyop(*api_args(group="ship", kind="Frigate"), cwd=with_api)
    assert_one_line_error(run, "cannot add group 'ship'", "'programming-kubernetes'", "--multigroup")
    assert snapshot(with_api) == before


def test_outside_a_project(pyop: RunPyop, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x\n")
    before = snapshot(tmp_path)
    assert_one_line_error(pyop(*AT_API, cwd=tmp_path), "no PROJECT file", "pyop init")
    assert snapshot(tmp_path) == before


def test_from_a_subfolder_of_the_project(pyop: RunPyop, initialized: Path) -> None:
    assert pyop(*AT_API, cwd=initialized / "config" / "rbac").code == 0
    assert (initialized / f"{API}/at_types.py").is_file()


def test_malformed_project_file(pyop: RunPyop, initialized: Path) -> None:
    (initialized / "PROJECT").write_text("domain: [unclosed\n")
    before = snapshot(initialized)
    assert_one_line_error(pyop(*AT_API, cwd=initialized), "cannot read", "PROJECT")
    assert snapshot(initialized) == before


def test_existing_api_without_force(pyop: RunPyop, with_api: Path) -> None:
    before = snapshot(with_api)
    assert_one_line_error(pyop(*AT_API, cwd=with_api), "Kind=At already exists in PROJECT", "--force")
    assert snapshot(with_api) == before


def test_existing_controller_without_force(pyop: RunPyop, with_api: Path) -> None:
    before = snapshot(with_api)
    assert_one_line_error(pyop(*api_args("--no-resource"), cwd=with_api), "controller", "already exists")
    assert snapshot(with_api) == before


def test_a_second_version_of_a_kind_with_a_controller_says_no_controller(
    pyop: RunPyop, with_api: Path
) -> None:
    before = snapshot(with_api)
    assert_one_line_error(
        pyop(*api_args(version="v1beta1"), cwd=with_api),
        "kind At of group programming-kubernetes already has a controller (for version v1alpha1)",
        "--no-controller",
        "--force",
    )
    assert snapshot(with_api) == before
    run = pyop(*api_args("--no-controller", version="v1beta1"), cwd=with_api)
    assert run.code == 0, run.err
    assert (with_api / f"src/{PACKAGE}/api/v1beta1/at_types.py").is_file()
    # before `make manifests` fails on it, say that one version must be the storage version
    (note,) = run.err.strip().splitlines()
    assert note.startswith("note: kind At now has versions v1alpha1, v1beta1: mark exactly one")
    assert "`# +kubebuilder:storageversion` above `class At`" in note


def test_no_resource_without_types(pyop: RunPyop, initialized: Path) -> None:
    before = snapshot(initialized)
    assert_one_line_error(
        pyop(*api_args("--no-resource"), cwd=initialized), "at_types.py is missing", "--resource"
    )
    assert snapshot(initialized) == before


def test_missing_scaffold_marker(pyop: RunPyop, initialized: Path) -> None:
    main_py = initialized / MAIN
    main_py.write_text(main_py.read_text().replace("    # +pyop:scaffold:controllers\n", ""))
    before = snapshot(initialized)
    assert_one_line_error(pyop(*AT_API, cwd=initialized), "+pyop:scaffold:controllers", "__main__.py")
    assert snapshot(initialized) == before


def test_broken_kustomization(pyop: RunPyop, initialized: Path) -> None:
    (initialized / "config/rbac/kustomization.yaml").write_text("resources: [unclosed\n")
    before = snapshot(initialized)
    assert_one_line_error(pyop(*AT_API, cwd=initialized), "config/rbac/kustomization.yaml", "not valid YAML")
    assert snapshot(initialized) == before


def test_a_main_module_that_does_not_parse(pyop: RunPyop, initialized: Path) -> None:
    """The edited file cannot be formatted: one line naming it, nothing written."""
    main_py = initialized / MAIN
    main_py.write_text(main_py.read_text().replace("def setup(", "def setup((", 1))
    before = snapshot(initialized)
    assert_one_line_error(pyop(*AT_API, cwd=initialized), "cannot format", "__main__.py")
    assert snapshot(initialized) == before


def test_missing_main_module(pyop: RunPyop, initialized: Path) -> None:
    (initialized / MAIN).unlink()
    before = snapshot(initialized)
    assert_one_line_error(pyop(*AT_API, cwd=initialized), "__main__.py", "missing")
    assert snapshot(initialized) == before


def test_failure_while_moving_files_rolls_everything_back(
    pyop: RunPyop, initialized: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure in the middle of the apply step (disk full, permissions) restores the original tree."""
    real_replace = os.replace
    calls = {"n": 0}

    def flaky_replace(src: os.PathLike[str] | str, dst: os.PathLike[str] | str) -> None:
        calls["n"] += 1
        if calls["n"] == 12:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    before = snapshot(initialized)
    monkeypatch.setattr(os, "replace", flaky_replace)
    with pytest.raises(OSError, match="No space left"):
        from pyscaffold_op.dev.regen import AT_API as OPTIONS
        from pyscaffold_op.scaffold.api import create_api

        create_api(OPTIONS, initialized)
    monkeypatch.setattr(os, "replace", real_replace)
    assert calls["n"] > 12
    assert snapshot(initialized) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into read-only folders")
def test_read_only_project_rolls_back(pyop: RunPyop, initialized: Path) -> None:
    config = initialized / "config"
    config.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        before = snapshot(initialized)
        run = pyop(*AT_API, cwd=initialized)
        assert run.code != 0
        assert snapshot(initialized) == before
    finally:
        config.chmod(stat.S_IRWXU)


def test_a_new_version_of_an_existing_kind_succeeds_and_leaves_make_manifests_for_later(
    pyop: RunPyop, with_api: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27 (kubebuilder parity): `create api --version v2` of an existing kind exited 1, because
    `make manifests` fails while no version is the storage version. kubebuilder exits 0; so does pyop,
    saying why it did not run make manifests."""
    monkeypatch.setenv("PATH", "/nonexistent")  # make would fail: it must not run
    args = ["create", "api", "--group", "programming-kubernetes", "--version", "v1", "--kind", "At"]
    run = pyop(*args, "--no-controller", cwd=with_api)
    assert run.code == 0, run.err
    assert "note: `make manifests` not run: it fails until one version is the storage version" in run.err
    assert f"wrote src/{PACKAGE}/api/v1/at_types.py" in run.out


def test_storage_version_missing_is_false_once_one_version_is_marked(pyop: RunPyop, with_api: Path) -> None:
    from pyscaffold_op.project import load_project
    from pyscaffold_op.scaffold.api import storage_version_missing
    from pyscaffold_op.scaffold.inputs import ApiOptions

    args = ["create", "api", "--group", "programming-kubernetes", "--version", "v1", "--kind", "At"]
    assert pyop(*args, "--no-controller", "--no-make", cwd=with_api).code == 0
    options = ApiOptions(group="programming-kubernetes", version="v1", kind="At")
    assert storage_version_missing(options, load_project(with_api), with_api)
    types = with_api / API / "at_types.py"
    types.write_text(types.read_text().replace("class At(", "# +kubebuilder:storageversion\nclass At(", 1))
    assert not storage_version_missing(options, load_project(with_api), with_api)


def test_a_second_controller_for_a_kind_needs_no_force(pyop: RunPyop, initialized: Path) -> None:
    """Issue 27 (kubebuilder parity, its project-v4): `--controller-name captain-backup` for a kind
    that has a controller needed --force. Like kubebuilder, another name adds a controller, recorded
    in PROJECT's `controllers:`; the same name again, or none, is refused without --force."""
    captain = ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", "--no-make"]
    assert pyop(*captain, "--controller-name=captain", cwd=initialized).code == 0
    assert pyop(*captain, "--force", cwd=initialized).code == 0
    run = pyop(*captain, "--no-resource", "--controller-name=captain-backup", cwd=initialized)
    assert run.code == 0, run.err
    project = yaml.safe_load((initialized / "PROJECT").read_text())
    (resource,) = project["resources"]
    assert resource["controllers"] == [{"name": "captain"}, {"name": "captain-backup"}]
    assert "controller" not in resource
    controllers = initialized / f"src/{PACKAGE}/controllers"
    assert {p.name for p in controllers.glob("*_controller.py")} == {
        "captain_controller.py",
        "captain_backup_controller.py",
    }
    main = (initialized / f"src/{PACKAGE}/__main__.py").read_text()
    assert "CaptainReconciler(" in main and "CaptainBackupReconciler(" in main
    before = snapshot(initialized)
    again = pyop(*captain, "--no-resource", "--controller-name=captain-backup", cwd=initialized)
    assert_one_line_error(again, "a controller named 'captain-backup' already exists")
    unnamed = pyop(*captain, "--no-resource", cwd=initialized)
    assert_one_line_error(unnamed, "already exists", "--controller-name to add another")
    assert snapshot(initialized) == before
    # a named controller added to a kind whose controller has no name lists both
    sailor = ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Sailor", "--no-make"]
    assert pyop(*sailor, cwd=initialized).code == 0
    assert pyop(*sailor, "--no-resource", "--controller-name=sailor-backup", cwd=initialized).code == 0
    project = yaml.safe_load((initialized / "PROJECT").read_text())
    assert project["resources"][1]["controllers"] == [{"name": "sailor"}, {"name": "sailor-backup"}]
    # and `delete api` takes both controllers out
    delete = ["delete", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", "--no-make"]
    assert pyop(*delete, cwd=initialized).code == 0
    assert not list(controllers.glob("captain*"))
    assert "Captain" not in (initialized / f"src/{PACKAGE}/__main__.py").read_text()


def test_namespaced_project_helper_roles_are_roles(pyop: RunPyop, tmp_path: Path) -> None:
    """Issue 27 (kubebuilder parity): with `init --namespaced` the admin/editor/viewer roles stayed
    ClusterRoles; kubebuilder writes Roles (in the manager's namespace, by kustomize). `edit
    --namespaced` turns an existing API's into Roles, and back (test_edit compares it with init)."""
    from .conftest import AT_INIT

    namespaced = tmp_path / "namespaced"
    namespaced.mkdir()
    assert pyop(*AT_INIT, "--namespaced", cwd=namespaced).code == 0
    assert pyop(*api_args(), cwd=namespaced).code == 0
    for role in ("admin", "editor", "viewer"):
        assert safe_load(namespaced / f"config/rbac/at_{role}_role.yaml")["kind"] == "Role"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert pyop(*AT_INIT, cwd=plain).code == 0
    assert pyop(*api_args(), cwd=plain).code == 0
    assert safe_load(plain / "config/rbac/at_admin_role.yaml")["kind"] == "ClusterRole"
    assert pyop("edit", "--namespaced", "--no-make", cwd=plain).code == 0
    assert safe_load(plain / "config/rbac/at_viewer_role.yaml")["kind"] == "Role"
    assert pyop("delete", "api", *api_args()[2:], cwd=plain).code == 0  # the record followed the edit
