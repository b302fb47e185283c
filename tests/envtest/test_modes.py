"""The three things `envtest` can run (emulator, real, cluster) are one choice, spelled the same in
`Environment(mode=...)`, `PYOP_ENVTEST`, `pytest --envtest` and the plugin's markers."""

from __future__ import annotations

import pytest

from pyscaffold_op.envtest import Environment, KubeletSimulator, PodOutcome, Workloads
from pyscaffold_op.envtest.cluster import Cluster
from pyscaffold_op.envtest.controlplane import ControlPlane
from pyscaffold_op.envtest.modes import LABELS, MODES
from pyscaffold_op.envtest.realmode import EmulatorOnly
from pyscaffold_op.testing import FakeClock

pytest_plugins = ["pytester"]


def test_the_mode_picks_the_plane() -> None:
    assert Environment().real is None and Environment().mode == "emulator"
    real = Environment(mode="real")
    assert real.real is not None and type(real.real.plane) is ControlPlane
    assert Environment(real=True).mode == "real"  # the older spelling
    cluster = Environment(mode="cluster")
    assert cluster.real is not None and isinstance(cluster.real.plane, Cluster)


@pytest.mark.parametrize("kwargs", [{"mode": "kind"}, {"mode": "cluster", "real": True}, {"mode": ""}])
def test_an_unknown_mode_is_refused_by_name(kwargs: dict[str, object]) -> None:
    if kwargs == {"mode": ""}:  # empty is "not given": the emulator
        assert Environment(**kwargs).mode == "emulator"  # type: ignore[arg-type]
        return
    with pytest.raises(ValueError, match="expected one of emulator, real, cluster"):
        Environment(**kwargs)  # type: ignore[arg-type]


async def test_cluster_mode_refuses_only_what_it_cannot_be_told() -> None:
    """The cluster runs Pods and the real controllers: the default simulators ask for what it does;
    a rule of your own or a fake clock for the controllers cannot be given to it."""
    env = Environment(mode="cluster", kubelet=KubeletSimulator(rule=lambda pod: PodOutcome(0)))
    with pytest.raises(EmulatorOnly, match=r"^cluster mode \(.*\): a KubeletSimulator rule"):
        await env.start()
    env = Environment(mode="cluster", workloads=Workloads(clock=FakeClock()))
    with pytest.raises(EmulatorOnly, match="a clock that drives the workload controllers"):
        await env.start()
    for poke in (Environment(mode="cluster").drop_watches, lambda: Environment(mode="cluster").policy):
        with pytest.raises(EmulatorOnly, match=r"^cluster mode"):
            poke()


def test_the_plugin_and_the_environment_share_one_list() -> None:
    assert MODES == ("emulator", "real", "cluster") and set(LABELS) == {"real", "cluster"}


def test_markers_skip_per_mode(pytester: pytest.Pytester) -> None:
    """`needs_cluster` runs on the emulator and in cluster mode, `emulator_only` on the emulator only;
    each skip names the mode."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest('pytest_plugins = ["pyscaffold_op.envtest.pytest_plugin"]\n')
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.needs_cluster("a kubelet runs the Pod")
        def test_cluster_part():
            pass

        @pytest.mark.emulator_only("fault injection")
        def test_emulator_part():
            pass
        """
    )
    expected = {
        "emulator": (2, 0, ""),
        "real": (0, 2, "real mode (kube-apiserver + etcd): a kubelet runs the Pod"),
        "cluster": (
            1,
            1,
            "cluster mode (kube-apiserver, kube-controller-manager, kube-scheduler, kwok): fault",
        ),
    }
    for mode, (passed, skipped, reason) in expected.items():
        result = pytester.runpytest_inprocess("-q", "-rs", "-p", "no:cacheprovider", f"--envtest={mode}")
        result.assert_outcomes(passed=passed, skipped=skipped)
        if reason:
            assert reason in result.stdout.str()


def test_an_unknown_pyop_envtest_value_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest('pytest_plugins = ["pyscaffold_op.envtest.pytest_plugin"]\n')
    pytester.makepyfile(
        "from pyscaffold_op.envtest.pytest_plugin import envtest_mode\n\n"
        "def test_x(request):\n    envtest_mode(request.config)\n"
    )
    monkeypatch.setenv("PYOP_ENVTEST", "kind")
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    assert (
        "PYOP_ENVTEST=kind: expected one of emulator, real, cluster"
        in result.stdout.str() + result.stderr.str()
    )
