"""Go's own envtest suites as judges of the emulator (issue 40): controller-runtime's `pkg/client`,
`pkg/cache` and `pkg/envtest` tests and kubebuilder's CronJob tutorial suites, unedited, each against a
fresh emulator in bare mode (envtest's bare kube-apiserver) with `USE_EXISTING_CLUSTER=true`, over
HTTP and over TLS. Every spec must pass, or be listed in `EXPECTED` with the reason kube-apiserver
confirms (the same spec fails against it too).

The binaries come from `make oracles` (hack/oracles/gosuites.sh); without them the tests skip ("is not
installed"), which fails a CI run."""

from __future__ import annotations

import pytest

from pyscaffold_op.dev.oracles import missing_reason
from pyscaffold_op.envtest import Environment
from tests.gosuites.runner import SUITES, binary, run_suite

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

# suite -> spec -> why it fails on the emulator as on kube-apiserver (none so far: shrink, never grow
# silently)
EXPECTED: dict[str, dict[str, str]] = {}

# what each suite must at least run, so a suite that stops early (a failed BeforeSuite, a build of
# another version) cannot pass by running nothing
AT_LEAST = {
    "controller-runtime/pkg/client": 300,
    "controller-runtime/pkg/cache": 250,
    "controller-runtime/pkg/envtest": 25,
    "cronjob/internal/controller": 1,
    "cronjob/internal/webhook/v1": 8,
}


@pytest.mark.parametrize("tls", [False, True], ids=["http", "tls"])
@pytest.mark.parametrize("suite", list(SUITES))
def test_go_suite_passes_against_the_emulator(suite: str, tls: bool) -> None:
    if binary(suite) is None:
        pytest.skip(missing_reason(SUITES[suite]))
    env = Environment(bare=True, tls=tls).start_in_thread()
    try:
        run = run_suite(suite, env.kubeconfig_path, tls=tls)
    finally:
        env.stop()
    expected = EXPECTED.get(suite, {})
    unexpected = {name: why for name, why in run.failed.items() if name not in expected}
    assert not unexpected, f"{suite} ({'TLS' if tls else 'HTTP'}): {len(unexpected)} failed:\n" + "\n".join(
        f"- {name}: {why[:400]}" for name, why in unexpected.items()
    )
    assert run.ran >= AT_LEAST[suite], f"{suite} ran {run.ran} specs:\n{run.output[-3000:]}"
