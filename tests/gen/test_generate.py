# ruff: noqa: E501 - marker comments and expected schemas read best on one line
"""End to end: PROJECT + API types + controllers -> config/crd/bases and config/rbac/role.yaml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pyscaffold_op.apiextensions.crdvalidation import check_crd
from pyscaffold_op.cli import main
from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen import generate_manifests

from .conftest import AT_TYPES

CRD = Path("config/crd/bases/programming-kubernetes.viper.run_ats.yaml")
ROLE = Path("config/rbac/role.yaml")


def test_at_project_crd_and_role(at_project) -> None:
    root = at_project.root
    changed = generate_manifests(root)
    assert changed == [root / CRD, root / ROLE]
    text = (root / CRD).read_text()
    assert text.startswith("---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n")
    crd = yaml.safe_load(text)
    assert crd["metadata"]["name"] == "ats.programming-kubernetes.viper.run"
    assert crd["spec"]["names"] == {"kind": "At", "listKind": "AtList", "plural": "ats", "singular": "at"}
    assert crd["spec"]["scope"] == "Namespaced"
    (version,) = crd["spec"]["versions"]
    assert version["name"] == "v1alpha1" and version["served"] and version["storage"]
    assert version["subresources"] == {"status": {}}
    assert [c["name"] for c in version["additionalPrinterColumns"]] == ["Schedule", "Command", "Phase", "Age"]
    assert version["additionalPrinterColumns"][3] == {
        "jsonPath": ".metadata.creationTimestamp",
        "name": "Age",
        "type": "date",
    }
    schema = version["schema"]["openAPIV3Schema"]
    assert schema["properties"]["metadata"] == {"type": "object"}
    assert schema["properties"]["apiVersion"]["type"] == "string"
    assert "APIVersion defines the versioned schema" in schema["properties"]["apiVersion"]["description"]
    spec = schema["properties"]["spec"]
    assert spec["required"] == ["command", "schedule"]
    assert spec["properties"]["schedule"] == {
        "description": "When to run the command, an RFC 3339 date-time.",
        "format": "date-time",
        "type": "string",
    }
    assert spec["properties"]["command"]["minLength"] == 1
    status = schema["properties"]["status"]
    assert status["properties"]["phase"]["enum"] == ["PENDING", "RUNNING", "DONE"]
    assert "nullable" not in status["properties"]["phase"]
    conditions = status["properties"]["conditions"]
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["items"]["required"] == ["lastTransitionTime", "message", "reason", "status", "type"]
    assert check_crd(crd) == []

    role = list(yaml.safe_load_all((root / ROLE).read_text()))
    assert role[0]["kind"] == "ClusterRole" and role[0]["metadata"] == {"name": "manager-role"}
    assert role[0]["rules"][0] == {
        "apiGroups": [""],
        "resources": ["pods"],
        "verbs": ["create", "delete", "get", "list", "watch"],
    }
    assert '- ""\n' in (root / ROLE).read_text()


def test_idempotent_and_files_untouched(at_project) -> None:
    root = at_project.root
    generate_manifests(root)
    before = {p: p.stat().st_mtime_ns for p in (root / CRD, root / ROLE)}
    assert generate_manifests(root) == []
    assert {p: p.stat().st_mtime_ns for p in before} == before


# a sample the API server would prune (`comand`) and then refuse (no `command`)
BAD_SAMPLE = """\
apiVersion: programming-kubernetes.viper.run/v1alpha1
kind: At
metadata:
  name: bad
spec:
  schedule: "2026-12-02T15:00:00Z"
  comand: typo
"""


def test_check_mode_reports_stale_files_and_writes_nothing(at_project) -> None:
    root = at_project.root
    assert generate_manifests(root, check=True) == [root / CRD, root / ROLE]
    assert not (root / CRD).exists()
    generate_manifests(root)
    assert generate_manifests(root, check=True) == []
    (root / CRD).write_text("---\n")
    assert generate_manifests(root, check=True) == [root / CRD]


def test_check_mode_validates_samples(at_project) -> None:
    root = at_project.root
    at_project.sample(
        "programming-kubernetes_v1alpha1_at.yaml",
        """\
        apiVersion: programming-kubernetes.viper.run/v1alpha1
        kind: At
        metadata:
          name: at-sample
        spec:
          schedule: "2026-12-02T15:00:00Z"
          command: echo hello
        """,
    )
    at_project.sample("kustomization.yaml", "resources:\n- programming-kubernetes_v1alpha1_at.yaml\n")
    generate_manifests(root)
    assert generate_manifests(root, check=True) == []
    at_project.sample(
        "bad.yaml",
        BAD_SAMPLE,
    )
    with pytest.raises(GenerateError) as err:
        generate_manifests(root, check=True)
    assert "unknown field 'spec.comand' would be silently dropped" in str(err.value)
    assert "spec.command: Required value" in str(err.value)


def test_generate_warns_about_invalid_samples_and_still_writes(at_project, monkeypatch, capsys) -> None:
    """`make manifests` while the types change: the samples that no longer fit are named on stderr
    (the API server would refuse or prune them), the manifests are written, the exit status is 0."""
    at_project.sample(
        "bad.yaml",
        BAD_SAMPLE,
    )
    problems: list[str] = []
    written = generate_manifests(at_project.root, sample_problems=problems)
    assert at_project.root / CRD in written
    assert problems == [
        "bad.yaml (At bad): unknown field 'spec.comand' would be silently dropped by the API server",
        "bad.yaml (At bad): spec.command: Required value",
    ]
    monkeypatch.chdir(at_project.root)
    with pytest.raises(SystemExit) as done:
        main(["generate", "manifests"])
    assert done.value.code == 0
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [f"warning: config/samples/{problem}" for problem in problems]
    assert "--check fails on them" in err[2]


def test_cli_generate_and_check(at_project, monkeypatch, capsys) -> None:
    monkeypatch.chdir(at_project.root)
    with pytest.raises(SystemExit) as done:
        main(["generate", "manifests"])
    assert done.value.code == 0
    assert "wrote config/crd/bases/programming-kubernetes.viper.run_ats.yaml" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        main(["generate", "crd", "--check"])
    assert done.value.code == 0
    (at_project.root / ROLE).unlink()
    with pytest.raises(SystemExit) as done:
        main(["generate", "rbac", "--check"])
    assert done.value.code == 2
    assert "out of date" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        main(["generate", "rbac"])
    assert done.value.code == 0
    assert (at_project.root / ROLE).exists()


def test_cli_error_is_one_line_exit_2(project, monkeypatch, capsys) -> None:
    builder = project()
    builder.api(
        "demo",
        "v1",
        "Loop",
        "loop_types",
        """\
        from __future__ import annotations
        from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel

        class Node(KubeModel):
            children: list[Node] = []

        class Loop(CustomResource):
            gvk = GroupVersionKind("demo.example.com", "v1", "Loop")
            spec: Node
        """,
    )
    monkeypatch.chdir(builder.root)
    with pytest.raises(SystemExit) as done:
        main(["generate", "crd"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Node.children" in err and "recursive model Node" in err


def test_no_project_file(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["generate", "manifests"])
    assert done.value.code == 2
    assert "no PROJECT file" in capsys.readouterr().err


def test_same_package_name_in_two_projects(project, tmp_path) -> None:
    """Modules of one project must not leak into the next one with the same package name."""
    first = project("demo")
    first.api("demo", "v1", "Widget", "widget_types", _kind("Widget", "size: int = 1"))
    other_root = tmp_path / "other"
    other_root.mkdir()
    from .conftest import ProjectBuilder

    second = ProjectBuilder(other_root, "demo")
    second.api("demo", "v1", "Widget", "widget_types", _kind("Widget", "color: str = 'red'"))
    generate_manifests(first.root)
    generate_manifests(second.root)
    one = yaml.safe_load((first.root / "config/crd/bases/demo.example.com_widgets.yaml").read_text())
    two = yaml.safe_load((second.root / "config/crd/bases/demo.example.com_widgets.yaml").read_text())
    spec = "spec"
    assert "size" in one[spec]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert (
        "color" in two[spec]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    )
    assert not any(name == "demo" or name.startswith("demo.") for name in sys.modules)


def _kind(kind: str, field: str, version: str = "v1", extra_markers: str = "") -> str:
    return f'''\
from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel


class {kind}Spec(KubeModel):
    {field}


{extra_markers}class {kind}(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "{version}", "{kind}")
    spec: {kind}Spec = {kind}Spec()
'''


def test_multi_version_kind_one_crd(project) -> None:
    builder = project()
    builder.api("demo", "v1alpha1", "Widget", "widget_types", _kind("Widget", "size: int = 1", "v1alpha1"))
    builder.api(
        "demo", "v1", "Widget", "widget_types",
        _kind("Widget", "size: int = 2", "v1", "# +kubebuilder:storageversion\n"),
    )  # fmt: skip
    generate_manifests(builder.root)
    crd = yaml.safe_load((builder.root / "config/crd/bases/demo.example.com_widgets.yaml").read_text())
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    assert list(versions) == ["v1", "v1alpha1"]
    assert versions["v1"]["storage"] and not versions["v1alpha1"]["storage"]
    assert (
        versions["v1"]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]["default"]
        == 2
    )
    assert check_crd(crd) == []


def test_multi_version_needs_exactly_one_storage_version(project) -> None:
    builder = project()
    builder.api("demo", "v1alpha1", "Widget", "widget_types", _kind("Widget", "size: int = 1", "v1alpha1"))
    builder.api("demo", "v1", "Widget", "widget_types", _kind("Widget", "size: int = 2", "v1"))
    with pytest.raises(
        GenerateError, match=r"exactly one must be marked \+kubebuilder:storageversion"
    ) as err:
        generate_manifests(builder.root)
    # the message tells the user what to do, and where
    assert "add the line `# +kubebuilder:storageversion` directly above `class Widget`" in str(err.value)
    assert "api/v1alpha1/widget_types.py" in str(err.value) and "api/v1/widget_types.py" in str(err.value)
    marker = "# +kubebuilder:storageversion\n"
    builder.api(
        "demo", "v1alpha1", "Widget", "widget_types", _kind("Widget", "a: int = 1", "v1alpha1", marker)
    )
    builder.api("demo", "v1", "Widget", "widget_types", _kind("Widget", "a: int = 1", "v1", marker))
    with pytest.raises(GenerateError, match=r"marked: v1, v1alpha1\); keep the marker on one of"):
        generate_manifests(builder.root)


def test_import_error_names_the_users_file_and_line(project) -> None:
    builder = project()
    source = (
        "from pyscaffold_op.apimachinery import KubeModel\n\n\nclass Spec(KubeModel):\n    size: Sizes = 1\n"
    )
    builder.api("demo", "v1", "Widget", "widget_types", source)
    with pytest.raises(
        GenerateError, match=r"NameError: name 'Sizes' is not defined \(at .*widget_types\.py:5\)$"
    ):
        generate_manifests(builder.root)


def test_import_error_names_module(project) -> None:
    builder = project()
    builder.api("demo", "v1", "Widget", "widget_types", "import not_a_module_anywhere\n")
    with pytest.raises(
        GenerateError, match=r"cannot import demo\.api\.v1\.widget_types: ModuleNotFoundError"
    ):
        generate_manifests(builder.root)


def test_kind_in_project_but_not_in_code(project) -> None:
    builder = project()
    builder.api("demo", "v1", "Widget", "widget_types", "X = 1\n")
    with pytest.raises(GenerateError, match=r"PROJECT lists Widget"):
        generate_manifests(builder.root)


def test_help_does_not_import_heavy_dependencies() -> None:
    code = (
        "import sys; from pyscaffold_op.cli import app; "
        "heavy = [m for m in ('datamodel_code_generator', 'openapi_schema_validator', 'pyscaffold_op.gen.schema', "
        "'jsonschema', 'cel_expr_python') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_generating_a_project_without_rules_imports_no_cel(at_project) -> None:
    """`pyop generate manifests` on the at project (patterns, defaults, no CEL rule): the CEL rules,
    compiler and library stay unimported; the generation still wrote its CRD."""
    at_project.write_project()
    code = (
        "import sys; from pyscaffold_op.console import main\n"
        "try:\n    main(['generate', 'manifests'])\nexcept SystemExit as stop:\n    assert not stop.code\n"
        "cel = ('pyscaffold_op.apiextensions.rules', 'pyscaffold_op.apiextensions.cel', "
        "'pyscaffold_op.apiextensions.cellibs', 'cel_expr_python')\n"
        "print([m for m in cel if m in sys.modules], 'pyscaffold_op.apiextensions.patterns' in sys.modules)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=at_project.root, capture_output=True, text=True, check=True
    )
    assert run.stdout.strip().splitlines()[-1] == "[] True"
    assert list((at_project.root / "config/crd/bases").glob("*_ats.yaml"))


def test_at_types_source_is_valid_python() -> None:
    compile(AT_TYPES, "at_types.py", "exec")


def test_multigroup_project(project) -> None:
    builder = project(multigroup=True)
    builder.api(
        "ships",
        "v1",
        "Frigate",
        "frigate_types",
        _kind("Frigate", "size: int = 1").replace("demo.example.com", "ships.example.com"),
    )
    builder.api(
        "sea",
        "v1beta1",
        "Wave",
        "wave_types",
        _kind("Wave", "height: int = 1", "v1beta1").replace("demo.example.com", "sea.example.com"),
    )
    changed = generate_manifests(builder.root)
    names = sorted(p.name for p in changed)
    assert names == ["role.yaml", "sea.example.com_waves.yaml", "ships.example.com_frigates.yaml"]


def test_invalid_default_fails_before_writing(project) -> None:
    builder = project()
    builder.api(
        "demo",
        "v1",
        "Widget",
        "widget_types",
        _kind("Widget", "size: int = Field(default=-1, ge=0)").replace(
            "from pyscaffold_op", "from pydantic import Field\nfrom pyscaffold_op", 1
        ),
    )
    with pytest.raises(
        GenerateError,
        match=r"would be rejected: .*default\.size: Invalid value: -1: size in body should be greater than or equal to 0",
    ):
        generate_manifests(builder.root)
    assert not (builder.root / "config").exists()


@pytest.mark.parametrize(
    ("rule", "compiler"),
    [
        ("self.size ==", "ERROR: <input>:1:13: Syntax error: mismatched input '<EOF>'"),
        ("self.size.startWith('a')", "ERROR: <input>:1:20: undeclared reference to 'startWith'"),
    ],
)
def test_rule_that_does_not_compile_is_refused(
    project, monkeypatch, capsys, rule: str, compiler: str
) -> None:
    builder = project()
    marker = f'# +kubebuilder:validation:XValidation:rule="{rule}",message="m"\n'
    builder.api("demo", "v1", "Widget", "widget_types", _kind("Widget", "size: int = 1", "v1", marker))
    monkeypatch.chdir(builder.root)
    with pytest.raises(SystemExit) as done:
        main(["generate", "manifests"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        "openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: "
        f'apiextensions.ValidationRule{{Rule:"{rule}", Message:"m", ' in err
    )
    assert f": compilation failed: {compiler}" in err
    assert not (builder.root / "config" / "crd").exists()


LIBRARY_RULES = [
    "quantity(self.spec.memory).isLessThan(quantity('64Gi')) && sign(quantity(self.spec.memory)) == 1",
    "isURL('https://example.com/x') && ip('10.0.0.1').family() == 4 && url('/a').getHost() == ''",
    "cidr('10.0.0.0/8').containsIP('10.1.2.3') && semver('1.2.3').isLessThan(semver('v1.3', true))",
]


def test_rules_calling_the_kubernetes_libraries_are_accepted(project) -> None:
    builder = project()
    markers = "".join(
        f'# +kubebuilder:validation:XValidation:rule="{r}",message="m"\n' for r in LIBRARY_RULES
    )
    builder.api("demo", "v1", "Widget", "widget_types", _kind("Widget", 'memory: str = "1Gi"', "v1", markers))
    generate_manifests(builder.root)
    crd = yaml.safe_load((builder.root / "config/crd/bases/demo.example.com_widgets.yaml").read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert [v["rule"] for v in schema["x-kubernetes-validations"]] == LIBRARY_RULES


def test_sample_of_an_unknown_version(at_project) -> None:
    at_project.sample(
        "old.yaml", "apiVersion: programming-kubernetes.viper.run/v1\nkind: At\nmetadata:\n  name: a\n"
    )
    with pytest.raises(
        GenerateError, match=r"old\.yaml: no CRD serves At in programming-kubernetes\.viper\.run/v1"
    ):
        generate_manifests(at_project.root, check=True)


def test_generation_restores_what_it_pauses(at_project) -> None:
    """The generator pauses the garbage collector while it imports a project; it is back afterwards,
    also when the generation fails."""
    import gc

    generate_manifests(at_project.root)
    assert gc.isenabled()
    (at_project.root / "PROJECT").write_text("domain: [unclosed\n")
    with pytest.raises(Exception, match="PROJECT"):
        generate_manifests(at_project.root)
    assert gc.isenabled()
