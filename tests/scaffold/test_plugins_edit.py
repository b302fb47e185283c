"""`pyop edit --plugins=grafana.kubebuilder.io/v1-alpha` and `autoupdate.kubebuilder.io/v1-alpha`.

The Grafana files are judged by the real kubebuilder (the same plugin run on a kubebuilder PROJECT,
byte for byte) and by a pyop manager's own /metrics: every metric a dashboard queries is scraped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from pyscaffold_op.dev.oracles import REPO_ROOT, missing_reason, oracle_bin
from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.core_v1 import ConfigMap
from pyscaffold_op.runtime import Client, Manager, ManagerOptions, Request
from pyscaffold_op.runtime.servers.metrics import controller_runtime_metrics
from pyscaffold_op.scaffold.grafana import CONFIG_FILE, CUSTOM_DASHBOARD, custom_metrics
from pyscaffold_op.scaffold.templates import templates_dir
from pyscaffold_op.testing import eventually

from .conftest import RunPyop, assert_one_line_error

GRAFANA = "grafana.kubebuilder.io/v1-alpha"
AUTOUPDATE = "autoupdate.kubebuilder.io/v1-alpha"
CUSTOM_CONFIG = """\
---
customMetrics:
  - metric: foo_bar
    unit: none
    type: histogram
  - metric: memcached_reconcile_seconds
    type: histogram
  - metric: build_info
    type: gauge
  - metric: requests_total
    type: Counter
  - metric: no_type_so_skipped
  - metric: up_ratio
    expr: sum(up{job=\\"$job\\"})
"""


def _plugins(root: Path) -> dict[str, Any]:
    return yaml.safe_load((root / "PROJECT").read_text()).get("plugins", {})


def _files(root: Path, top: str) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / top).rglob("*")) if p.is_file()
    }


def test_grafana_writes_the_dashboards_and_records_the_plugin(pyop: RunPyop, initialized: Path) -> None:
    run = pyop("edit", "--plugins=grafana.kubebuilder.io/v1-alpha", cwd=initialized)
    assert run.code == 0, run.err
    assert set(_files(initialized, "grafana")) == {
        "grafana/controller-runtime-metrics.json",
        "grafana/controller-resources-metrics.json",
        CONFIG_FILE,
    }
    assert _plugins(initialized) == {GRAFANA: {}}
    for name in ("controller-runtime-metrics.json", "controller-resources-metrics.json"):
        json.loads((initialized / "grafana" / name).read_text())


def test_custom_metrics_config_makes_a_dashboard_when_run_again(pyop: RunPyop, initialized: Path) -> None:
    assert pyop("edit", "--plugins", "grafana/v1-alpha", cwd=initialized).code == 0
    (initialized / CONFIG_FILE).write_text(CUSTOM_CONFIG)
    assert pyop("edit", "--plugins", "grafana", cwd=initialized).code == 0
    assert (initialized / CONFIG_FILE).read_text() == CUSTOM_CONFIG  # the user's config is kept
    dashboard = json.loads((initialized / CUSTOM_DASHBOARD).read_text())
    panels = {p["title"]: (p["targets"][0]["expr"], p["fieldConfig"]["defaults"]["unit"], p["type"])
              for p in dashboard["panels"]}  # fmt: skip
    assert panels == {
        "foo_bar (histogram)": (
            "histogram_quantile(0.90, sum by(instance, le) "
            '(rate(foo_bar{job="$job", namespace="$namespace"}[5m])))',
            "none",
            "timeseries",
        ),
        "memcached_reconcile_seconds (histogram)": (
            "histogram_quantile(0.90, sum by(instance, le) "
            '(rate(memcached_reconcile_seconds{job="$job", namespace="$namespace"}[5m])))',
            "s",
            "timeseries",
        ),
        "build_info (gauge)": ("build_info", "none", "table"),
        "requests_total (Counter)": (
            'sum(rate(requests_total{job="$job", namespace="$namespace"}[5m])) by (instance, pod)',
            "none",
            "timeseries",
        ),
        "up_ratio ()": ('sum(up{job="$job"})', "percent", "timeseries"),
    }
    assert _plugins(initialized) == {GRAFANA: {}}


def test_a_broken_custom_metrics_config_is_one_error(pyop: RunPyop, initialized: Path) -> None:
    (initialized / CONFIG_FILE).parent.mkdir(parents=True)
    (initialized / CONFIG_FILE).write_text("customMetrics: {metric: x}\n")
    assert_one_line_error(pyop("edit", "--plugins=grafana", cwd=initialized), "customMetrics must be a list")


def test_unknown_plugins_are_refused(pyop: RunPyop, initialized: Path) -> None:
    assert_one_line_error(
        pyop("edit", "--plugins=grafana,nope/v1", cwd=initialized), "unknown plugin 'nope/v1'", "grafana"
    )
    assert _plugins(initialized) == {}


def test_autoupdate_writes_a_pyop_upgrade_workflow(pyop: RunPyop, initialized: Path) -> None:
    run = pyop("edit", "--plugins=autoupdate.kubebuilder.io/v1-alpha", cwd=initialized)
    assert run.code == 0, run.err
    workflow = yaml.safe_load((initialized / ".github/workflows/auto_update.yml").read_text())
    job = workflow["jobs"]["auto-update"]
    assert job["permissions"] == {"contents": "write", "issues": "write"}
    script = job["steps"][-1]["run"]
    assert "pyop upgrade" in script and "gh issue create" in script
    assert "git checkout HEAD -- .github/workflows" in script  # kubebuilder's --restore-path
    assert _plugins(initialized) == {AUTOUPDATE: {}}


@pytest.mark.oracle
def test_grafana_files_and_record_equal_kubebuilders(
    pyop: RunPyop, initialized: Path, tmp_path: Path
) -> None:
    kubebuilder = oracle_bin("kubebuilder")
    if kubebuilder is None:
        pytest.skip(missing_reason("kubebuilder"))
    theirs = tmp_path / "kubebuilder"
    (theirs / "grafana/custom-metrics").mkdir(parents=True)
    # cliVersion: kubebuilder's autoupdate plugin needs it, as `alpha update` does
    project = {"cliVersion": "4.16.0", "domain": "example.org", "layout": ["go.kubebuilder.io/v4"]}
    project["projectName"] = "mini"
    (theirs / "PROJECT").write_text(yaml.safe_dump({**project, "repo": "example.org/mini", "version": "3"}))
    (theirs / CONFIG_FILE).write_text(CUSTOM_CONFIG)
    (initialized / CONFIG_FILE).parent.mkdir(parents=True)
    (initialized / CONFIG_FILE).write_text(CUSTOM_CONFIG)
    for command in ([str(kubebuilder), "edit", f"--plugins={GRAFANA}"],):
        done = subprocess.run(command, cwd=theirs, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
    assert pyop("edit", f"--plugins={GRAFANA}", cwd=initialized).code == 0
    assert _files(initialized, "grafana") == _files(theirs, "grafana")
    assert _plugins(initialized) == _plugins(theirs)
    done = subprocess.run(
        [str(kubebuilder), "edit", f"--plugins={AUTOUPDATE}"], cwd=theirs, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert pyop("edit", f"--plugins={AUTOUPDATE}", cwd=initialized).code == 0
    assert _plugins(initialized) == _plugins(theirs)


_QUERY_KEYS = ("expr", "query", "definition")


def _queries(node: Any) -> list[str]:
    """Every PromQL string of a dashboard: panel targets and template variables."""
    if isinstance(node, dict):
        out: list[str] = []
        for key, value in node.items():
            out += [value] if key in _QUERY_KEYS and isinstance(value, str) else _queries(value)
        return out
    if isinstance(node, list):
        return [q for value in node for q in _queries(value)]
    return []


# a metric is a name before a selector or a range (`x{...}`, `x[5m]`) or label_values' first argument
_METRIC = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*[{\[])|(?<=label_values\()[a-zA-Z_:][a-zA-Z0-9_:]*")


def dashboard_metrics() -> dict[str, set[str]]:
    """Every metric each shipped dashboard's queries name."""
    out: dict[str, set[str]] = {}
    for path in sorted((templates_dir() / "grafana").glob("*.json")):
        names: set[str] = set()
        for query in _queries(json.loads(path.read_text())):
            found = _METRIC.findall(query)
            assert found, f"{path.name}: no metric found in {query!r}"
            names.update(found)
        out[path.name] = names
    return out


async def test_every_metric_a_dashboard_queries_is_in_a_pyop_managers_scrape(
    envtest: Environment, client: Client
) -> None:
    wanted = dashboard_metrics()
    assert set(wanted) == {"controller-runtime-metrics.json", "controller-resources-metrics.json"}
    mgr = Manager(
        envtest.config, ManagerOptions(metrics_bind_address="127.0.0.1:0", health_probe_bind_address="0")
    )
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    mgr.builder().for_(ConfigMap).complete(reconcile)
    async with mgr.running():
        await client.create(
            ConfigMap.model_validate({"metadata": {"name": "scraped", "namespace": "default"}})
        )
        await eventually(lambda: any(r.name == "scraped" for r in seen))
        assert mgr.metrics_address is not None
        host, port = mgr.metrics_address
        async with httpx2.AsyncClient() as http:
            scrape = await http.get(f"http://{host}:{port}/metrics")
    assert scrape.status_code == 200
    series = {
        line.split("{")[0].split(" ")[0] for line in scrape.text.splitlines() if line and line[0] != "#"
    }
    for dashboard, names in wanted.items():
        assert names <= series, f"{dashboard}: not in the scrape: {sorted(names - series)}"
    # and they are controller-runtime's own names (the runtime's table, which tests/runtime/
    # test_metrics_set.py checks against controller-runtime v0.24.1), or the process collector's
    families = set(controller_runtime_metrics())
    for name in set().union(*wanted.values()):
        assert re.sub(r"_(bucket|sum|count)$", "", name) in families or name.startswith("process_"), name


def test_custom_metrics_rules_are_kubebuilders() -> None:
    items = custom_metrics(CUSTOM_CONFIG)
    assert [i.metric for i in items] == [
        "foo_bar",
        "memcached_reconcile_seconds",
        "build_info",
        "requests_total",
        "up_ratio",
    ]
    assert custom_metrics("customMetrics:\n") == []


def _workflow_script(root: Path) -> str:
    workflow = yaml.safe_load((root / ".github/workflows/auto_update.yml").read_text())
    script: str = workflow["jobs"]["auto-update"]["steps"][-1]["run"]
    return script


def _stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("conflicts", [False, True])
def test_the_autoupdate_script_pushes_a_branch_and_opens_an_issue(
    pyop: RunPyop, initialized: Path, tmp_path: Path, conflicts: bool
) -> None:
    """The workflow's last step, run as GitHub would run it (bash -e), with `pyop upgrade` and `gh`
    stubbed and the push redirected to a local bare repository."""
    root = initialized
    assert pyop("edit", "--plugins=autoupdate", cwd=root).code == 0
    remote = tmp_path / "remote.git"
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    gitconfig = tmp_path / "gitconfig"
    env = {
        **os.environ,
        "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}",
        "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GH_TOKEN": "token",
        "GITHUB_REPOSITORY": "owner/operator",
    }

    def git(*args: str, cwd: Path = root) -> str:
        done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
        return done.stdout

    git("init", "--bare", "-q", str(remote), cwd=tmp_path)
    git("config", "--global", "user.name", "test")
    git("config", "--global", "user.email", "test@example.org")
    git(
        "config",
        "--global",
        f"url.{remote}.insteadOf",
        "https://x-access-token:token@github.com/owner/operator.git",
    )
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "scaffold")
    # `pyop upgrade` as the newest pyop would run it: a new template revision, a changed file
    stderr = "conflict in Makefile" if conflicts else ""
    _stub(
        stubs,
        "pyop",
        f"""
sed -i 's/^_commit: .*/_commit: sha256-new/' .copier-answers.yml
echo '# upgraded' >> Makefile
echo '.github change the update must not keep' >> .github/workflows/test.yml
{f'echo "{stderr}" >&2; exit 1' if conflicts else "exit 0"}
""",
    )
    _stub(
        stubs,
        "gh",
        f"""
if [ "$1" = repo ]; then echo main; exit 0; fi
printf '%s\\n' "$@" > {tmp_path}/gh-args
cp "${{@: -1}}" {tmp_path}/issue.md
""",
    )
    before = git("rev-parse", "HEAD").strip()
    old = yaml.safe_load((root / ".copier-answers.yml").read_text())["_commit"]
    run = subprocess.run(
        ["bash", "-e", "-c", _workflow_script(root)], cwd=root, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
    branch = f"pyop-update-from-{old}-to-sha256-new"
    pushed = git("--git-dir", str(remote), "log", "--format=%P %s", branch, cwd=tmp_path).splitlines()
    assert pushed[0] == f"{before} Upgrade the scaffold with pyop upgrade (template {old} -> sha256-new)"
    changed = git("--git-dir", str(remote), "diff", "--name-only", before, branch, cwd=tmp_path).split()
    # the workflows kept as they were, upgrade.err not committed
    assert sorted(changed) == [".copier-answers.yml", "Makefile"]
    args = (tmp_path / "gh-args").read_text().splitlines()
    assert args[:4] == ["issue", "create", "--title", f"pyop upgrade: template {old} -> sha256-new"]
    issue = (tmp_path / "issue.md").read_text()
    assert f"https://github.com/owner/operator/compare/main...{branch}?expand=1" in issue
    assert ("conflict in Makefile" in issue) == conflicts


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_autoupdate_script_stops_when_the_project_is_up_to_date(
    pyop: RunPyop, initialized: Path, tmp_path: Path
) -> None:
    root = initialized
    assert pyop("edit", "--plugins=autoupdate", cwd=root).code == 0
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig"), "PYTHONPATH": str(REPO_ROOT)}
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    _stub(stubs, "pyop", f'exec "{sys.executable}" -m pyscaffold_op "$@"\n')  # the real one
    _stub(stubs, "gh", "exit 3\n")  # must not be called
    env["PATH"] = f"{stubs}{os.pathsep}{env['PATH']}"
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "s"],
    ):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    run = subprocess.run(
        ["bash", "-e", "-c", _workflow_script(root)], cwd=root, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "up to date" in run.stdout
    assert subprocess.run(
        ["git", "branch", "--list"], cwd=root, env=env, capture_output=True, text=True
    ).stdout.split() == ["*", "main"]
