# Copyright The Kubernetes authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""The manager `make run` starts (`python -m project`), assembled by this project's own `setup`.

The other tests register the controller or the webhooks they test themselves; these check what `setup`
registers, which is what runs in a cluster: a handler for every webhook path of
config/webhook/manifests.yaml, the conversion endpoint of every CRD in config/crd/bases that asks for
one, and a controller for every controller PROJECT lists. `pyop create api` and `pyop create webhook`
add their registrations to `setup`; keep them there when you edit it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from pyscaffold_op.project import load_project
from pyscaffold_op.runtime import Manager, parse_manager_flags
from pyscaffold_op.runtime.manager.cmd import build_manager

from project.__main__ import LEADER_ELECTION_ID, setup

ROOT = Path(__file__).resolve().parents[1]


def documents(path: Path) -> list[dict[str, Any]]:
    """The YAML documents of `path` (none when the file is not there)."""
    if not path.is_file():
        return []
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def called_paths() -> set[str]:
    """The paths of Service webhook-service the API server calls: admission webhooks, CRD conversion."""
    paths: set[str] = set()
    for configuration in documents(ROOT / "config" / "webhook" / "manifests.yaml"):
        for webhook in configuration.get("webhooks", []):
            paths.add(webhook["clientConfig"]["service"]["path"])
    for crd_file in sorted((ROOT / "config" / "crd" / "bases").glob("*.yaml")):
        for crd in documents(crd_file):
            conversion = crd["spec"].get("conversion", {})
            if conversion.get("strategy") == "Webhook":
                paths.add(conversion["webhook"]["clientConfig"]["service"]["path"])
    return paths


def manager_of_make_run(kubeconfig: str, cert_dir: Path) -> Manager:
    """The manager `python -m project` builds: `make run`'s flags (none), but for the API server and
    the ports and folder a test must not share with a running `make run`."""
    flags = parse_manager_flags(
        [
            "--kubeconfig",
            kubeconfig,
            "--health-probe-bind-address",
            "0",
            "--webhook-port",
            "0",
            "--webhook-cert-path",
            str(cert_dir),
        ]
    )
    return build_manager(flags, setup, leader_election_id=LEADER_ELECTION_ID)


async def test_setup_serves_every_webhook_the_api_server_calls(kubeconfig: str, tmp_path: Path) -> None:
    mgr = manager_of_make_run(kubeconfig, tmp_path)
    missing = called_paths() - set(mgr.webhook_server.paths())
    assert not missing, f"setup() registers no webhook at {sorted(missing)}"


async def test_setup_runs_a_controller_for_every_controller_in_project(kubeconfig: str, tmp_path: Path) -> None:
    mgr = manager_of_make_run(kubeconfig, tmp_path)
    listed = Counter(
        (resource.qualified_group(), resource.kind)
        for resource in load_project(ROOT).resources
        for _ in resource.controller_names()
    )
    running = Counter(controller.group_kind for controller in mgr.controllers if controller.group_kind)
    missing = listed - running
    assert not missing, f"setup() registers no controller for {sorted(missing)} (group, kind)"
