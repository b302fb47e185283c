"""The pytest plugin generated projects use: fixtures envtest, kubeconfig, client, CRDs from config/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import CRDS

pytest_plugins = ["pytester"]


@pytest.mark.slow
def test_plugin_fixtures(pytester: pytest.Pytester) -> None:
    bases = pytester.path / "config" / "crd" / "bases"
    bases.mkdir(parents=True)
    shutil.copy(next(Path(CRDS).glob("*.yaml")), bases)
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest('pytest_plugins = ["pyscaffold_op.envtest.pytest_plugin"]\n')
    pytester.makepyfile(
        """
        import httpx2
        from pathlib import Path

        async def test_env(envtest, kubeconfig):
            assert Path(kubeconfig).read_text().count(envtest.url) == 1
            async with httpx2.AsyncClient(base_url=envtest.url) as http:
                r = await http.get("/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/default/ats")
                assert r.status_code == 200

        async def test_kubelet_default(envtest):
            assert envtest.kubelet is not None

        async def test_client(client, envtest):
            assert client is not None

        async def test_workloads_off_by_default(envtest):
            assert envtest.workloads is None
        """
    )
    pytester.makepyfile(
        test_opt_in="""
        import pytest
        from pyscaffold_op.envtest import Workloads
        from pyscaffold_op.testing import eventually

        @pytest.fixture
        def envtest_workloads():
            return Workloads()

        async def test_default_service_account(envtest):
            async def made():
                return envtest.store.find(("", "serviceaccounts"), "default", "default") is not None

            assert await eventually(made)
        """
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("skipped", 0) == 5, result.stdout.str()
    assert outcomes.get("passed", 0) >= 4


@pytest.mark.slow
def test_plugin_envtest_authorization_rbac(pytester: pytest.Pytester) -> None:
    """Overriding `envtest_authorization` with "RBAC" makes `envtest` enforce the stored RBAC objects."""
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest('pytest_plugins = ["pyscaffold_op.envtest.pytest_plugin"]\n')
    pytester.makepyfile(
        """
        import pytest
        from pyscaffold_op.runtime import new_client
        from pyscaffold_op.runtime.client.errors import ApiError
        from pyscaffold_op.models.core_v1 import ConfigMap

        @pytest.fixture
        def envtest_authorization():
            return "RBAC"

        async def test_a_user_without_a_binding_is_forbidden(envtest, client):
            assert envtest.authorization == "RBAC"
            await client.list(ConfigMap, namespace="default")  # the admin certificate: system:masters
            alice = new_client(envtest.config_for(envtest.add_user("alice")))
            try:
                with pytest.raises(ApiError) as err:
                    await alice.list(ConfigMap, namespace="default")
                assert err.value.code == 403
            finally:
                await alice.close()
        """
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


@pytest.mark.slow
def test_plugin_shows_structured_log_fields_in_pytest_output(pytester: pytest.Pytester) -> None:
    """A failing test's captured log keeps the fields (the error of a "Reconciler error")."""
    pytester.makeconftest('pytest_plugins = ["pyscaffold_op.envtest.pytest_plugin"]\n')
    pytester.makepyfile(
        """
        import logging

        def test_fails():
            logging.getLogger("pyscaffold_op.runtime.controller").error(
                "Reconciler error", extra={"controller": "memcached", "error": "409 Conflict: stale"}
            )
            assert False
        """
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Reconciler error controller=memcached error=409 Conflict: stale*"])
