"""The plugin's suite-scoped environment: one server and one CRD install for the session, a fresh
namespace per test, and the header line that names the server."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import CRDS

pytest_plugins = ["pytester"]

SUITE_TESTS = """
import pytest
from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.models.apiextensions_v1 import CustomResourceDefinition
from pyscaffold_op.models.core_v1 import ConfigMap, Namespace
from pyscaffold_op.runtime import NotFound, new_client
from pyscaffold_op.testing import eventually

SEEN = []

async def crd_uids(env):
    client = new_client(env.config)
    try:
        return [crd.metadata.uid for crd in await client.list(CustomResourceDefinition)]
    finally:
        await client.close()

async def test_first(envtest_suite, envtest_namespace, suite_client):
    SEEN.append((id(envtest_suite), envtest_namespace, await crd_uids(envtest_suite)))
    made = await suite_client.create(ConfigMap(metadata=ObjectMeta(name="mine"), data={"a": "1"}))
    assert made.metadata.namespace == envtest_namespace
    assert envtest_namespace.startswith("test-first-")

async def test_second_sees_a_fresh_namespace_on_the_same_server(
    envtest_suite, envtest_namespace, suite_client
):
    first_env, first_ns, first_crds = SEEN[0]
    assert id(envtest_suite) == first_env and envtest_namespace != first_ns
    with pytest.raises(NotFound):
        await suite_client.get(ConfigMap, "mine")
    client = new_client(envtest_suite.config)
    try:
        async def gone_or_terminating():
            try:
                ns = await client.get(Namespace, first_ns)
            except NotFound:
                return True
            return ns.metadata.deletion_timestamp is not None
        assert await eventually(gone_or_terminating)
        # the CRD was installed once, for the session: the same object
        assert first_crds and await crd_uids(envtest_suite) == first_crds
    finally:
        await client.close()
"""


def _project(pytester: pytest.Pytester) -> None:
    bases = pytester.path / "config" / "crd" / "bases"
    bases.mkdir(parents=True)
    shutil.copy(next(Path(CRDS).glob("*.yaml")), bases)
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")


@pytest.mark.slow
def test_the_suite_environment_is_one_server_with_a_namespace_per_test(pytester: pytest.Pytester) -> None:
    _project(pytester)
    pytester.makepyfile(test_suite=SUITE_TESTS)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=2)


def test_the_header_names_the_emulator(pytester: pytest.Pytester) -> None:
    from pyscaffold_op import __version__

    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--envtest=emulator")
    result.stdout.fnmatch_lines([f"envtest: emulator (pyop {__version__})"])


@pytest.mark.oracle
def test_the_header_names_the_real_servers_version_and_folder(pytester: pytest.Pytester) -> None:
    from pyscaffold_op.dev.oracles import missing_reason, oracle_bin

    apiserver = oracle_bin("kube-apiserver")
    if apiserver is None:
        pytest.skip(missing_reason("kube-apiserver"))
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYOP_ENVTEST_ASSETS", str(apiserver.parent))
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--envtest=real")
    result.stdout.fnmatch_lines([f"envtest: kube-apiserver v1.* + etcd at {apiserver.parent}"])
