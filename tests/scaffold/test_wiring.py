"""What `make run` runs is what the scaffold promises (issue 35): after any sequence of `create api`,
`create webhook` and `delete` commands, the project's own `tests/test_manager_setup.py` (the manager
`python -m <package>` builds with the project's `setup`) finds a handler for every webhook path of
config/webhook/manifests.yaml, the conversion endpoint of every converted CRD, and a controller for
every controller PROJECT lists.

The sequences cover what kubebuilder's reference projects run (tests/scaffold/test_kubebuilder_replay.py
runs them whole, slower, with `make all`): webhooks on several versions of a kind, a conversion hub
and spokes, named controllers, custom webhook paths, plurals, cluster scope, server-side apply,
built-in and external kinds, deploy-image, multigroup projects with one kind in two groups, and
`delete webhook`/`delete api` undoing the wiring.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pyscaffold_op.dev.oracles import missing_reason, oracle_bin

from .conftest import RunPyop

pytestmark = [pytest.mark.slow]

CRONJOB = ["--group", "batch", "--kind", "CronJob"]
CERT_MANAGER = [
    "--external-api-path=github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
    "--external-api-domain=io",
    "--external-api-module=github.com/cert-manager/cert-manager@v1.21.1",
]
MEMCACHED = [
    "create api --group example.com --version v1alpha1 --kind Memcached --image=memcached:1.6.26-alpine3.19 "
    "--image-container-command=memcached,--memory-limit=64,-o,modern,-v --image-container-port=11211 "
    "--run-as-user=1001 --plugins=deploy-image/v1-alpha",
    "create api --group example.com --version v1alpha1 --kind Busybox --image=busybox:1.36.1 "
    "--plugins=deploy-image/v1-alpha",
    "create webhook --group example.com --version v1alpha1 --kind Memcached --programmatic-validation",
]
WORDPRESS = [  # a conversion webhook alone: the hub registers /convert, no admission webhook
    "create api --group example.com --version v1 --kind Wordpress",
    "create api --group example.com --version v2 --kind Wordpress --controller=false --resource=true",
    "create webhook --group example.com --version v1 --kind Wordpress --conversion --spoke v2",
]

# issue 35's reproduction: kubebuilder's CronJob tutorial and its multiversion sequel
MULTIVERSION = [
    "init --domain tutorial.kubebuilder.io --repo tutorial.kubebuilder.io/project",
    "create api --group batch --version v1 --kind CronJob --resource --controller",
    "create webhook --group batch --version v1 --kind CronJob --defaulting --programmatic-validation",
    "create api --group batch --version v2 --kind CronJob --resource --controller=false",
    "create webhook --group batch --version v1 --kind CronJob --conversion --spoke v2",
    "create webhook --group batch --version v2 --kind CronJob --defaulting --programmatic-validation",
]

SCENARIOS: dict[str, list[str]] = {
    "multiversion": MULTIVERSION,
    "single-group": [
        "init --domain testproject.org --repo example.com/single",
        "create api --group crew --version v1 --kind Captain --controller-name=captain",
        "create api --group crew --version v1 --kind Captain --controller=true --resource=false "
        "--controller-name=captain-backup",
        "create webhook --group crew --version v1 --kind Captain --defaulting",
        "create webhook --group crew --version v1 --kind Captain --programmatic-validation",
        "create api --group crew --version v1 --kind FirstMate",
        "create api --group crew --version v2 --kind FirstMate --controller=false --resource=true",
        "create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v2",
        "create webhook --group crew --version v2 --kind FirstMate --defaulting",
        "create api --group crew --version v1 --kind Sailor",
        "create webhook --group crew --version v1 --kind Sailor --defaulting "
        "--defaulting-path=/custom-mutate-sailor",
        "create webhook --group crew --version v1 --kind Sailor --programmatic-validation "
        "--validation-path=/custom-validate-sailor",
        "create api --group crew --version v1 --kind Admiral --plural=admirales --namespaced=false",
        "create webhook --group crew --version v1 --kind Admiral --plural=admirales --defaulting",
        "create api --group crew --version v1 --kind Navigator --ssa",
        "create api --group cert-manager --version v1 --kind Certificate --controller=true --resource=false "
        + " ".join(CERT_MANAGER),
        "create webhook --group cert-manager --version v1 --kind Issuer --defaulting "
        + " ".join(CERT_MANAGER),
        "create api --group apps --version v1 --kind Deployment --controller=true --resource=false",
        "create webhook --group core --version v1 --kind Pod --defaulting",
        "create webhook --group apps --version v1 --kind Deployment --defaulting --programmatic-validation",
    ],
    "multigroup": [
        "init --multigroup --domain testproject.org --repo example.com/multi",
        "create api --group foo --version v1 --kind Bar",
        "create webhook --group foo --version v1 --kind Bar --defaulting",
        # another version: webhooks are named m<kind>-<version>.kb.io (kubebuilder's names), so Bar v1 of
        # both groups would clash in config/webhook/manifests.yaml
        "create api --group fiz --version v1beta1 --kind Bar",
        "create webhook --group fiz --version v1beta1 --kind Bar --defaulting --programmatic-validation",
        "create api --group ship --version v1 --kind Destroyer --namespaced=false",
        "create webhook --group ship --version v1 --kind Destroyer --defaulting",
        "create api --group foo.policy --version v1 --kind HealthCheckPolicy",
        "create webhook --group foo.policy --version v1 --kind HealthCheckPolicy --programmatic-validation",
        "create api --group apps --version v1 --kind Deployment --controller=true --resource=false",
        "create webhook --group core --version v1 --kind Pod --programmatic-validation",
        "create api --group cert-manager --version v1 --kind Certificate --controller=true --resource=false "
        + " ".join(CERT_MANAGER),
        *MEMCACHED,
        *WORDPRESS,
    ],
    "namespaced": [
        "init --namespaced --domain testproject.org --repo example.com/namespaced",
        *MEMCACHED,
        *WORDPRESS,
    ],
    "deleted": [
        *MULTIVERSION,
        "delete webhook --group batch --version v1 --kind CronJob --defaulting",
        "delete webhook --group batch --version v2 --kind CronJob --programmatic-validation",
        "create api --group batch --version v1 --kind Job",
        "create webhook --group batch --version v1 --kind Job --defaulting",
        "create api --group batch --version v1 --kind Schedule",
        "create webhook --group batch --version v1 --kind Schedule --defaulting --programmatic-validation",
        "delete webhook --group batch --version v1 --kind Job",
        "delete api --group batch --version v1 --kind Job",
    ],
}


def _run_setup_tests(root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_manager_setup.py"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **env},
    )


def scaffold(pyop: RunPyop, root: Path, commands: list[str]) -> None:
    """Run the commands as typed, then `make manifests`, which the project's `make test` runs first."""
    root.mkdir()
    for line in commands:
        args = line.split()
        if args[0] in ("create", "delete"):
            args.append("--no-make")
        run = pyop(*args, cwd=root)
        assert run.code == 0, f"pyop {line}: exit {run.code}\n{run.err}"
    run = pyop("generate", "manifests", cwd=root)
    assert run.code == 0, run.err


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_manager_of_make_run_serves_what_the_project_declares(
    pyop: RunPyop, tmp_path: Path, name: str
) -> None:
    root = tmp_path / name
    scaffold(pyop, root, SCENARIOS[name])
    run = _run_setup_tests(root)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "2 passed" in run.stdout


@pytest.mark.oracle
def test_the_wiring_test_passes_on_kube_apiserver(pyop: RunPyop, tmp_path: Path) -> None:
    """The generated test needs nothing only the emulator has: it passes in real mode too."""
    apiserver, etcd = oracle_bin("kube-apiserver"), oracle_bin("etcd")
    if apiserver is None or etcd is None:
        pytest.skip(missing_reason("kube-apiserver" if apiserver is None else "etcd"))
    root = tmp_path / "multiversion"
    scaffold(pyop, root, MULTIVERSION)
    run = _run_setup_tests(root, PYOP_ENVTEST="real", PYOP_ENVTEST_ASSETS=str(apiserver.parent))
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "2 passed" in run.stdout
