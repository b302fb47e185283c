"""Run one of Go's envtest suites against a fresh emulator, as a Go developer would against a cluster:
controller-runtime's envtest with `USE_EXISTING_CLUSTER=true` and `KUBECONFIG` starts no binaries, it
installs the suite's CRDs and webhook configurations into the server and runs the specs.

The binaries are built by `make oracles` (hack/oracles/gosuites.sh) into `<oracles bin>/gosuites/`; each
runs in its package folder (the suites read `./testdata`, `../../config/crd/bases`). Ginkgo's JSON
report gives every spec's state and failure."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscaffold_op.dev.oracles import oracle_bin

# suite -> the binary under <oracles bin>, relative
SUITES: dict[str, str] = {
    "controller-runtime/pkg/client": "gosuites/controller-runtime/pkg/client/client.test",
    "controller-runtime/pkg/cache": "gosuites/controller-runtime/pkg/cache/cache.test",
    "controller-runtime/pkg/envtest": "gosuites/controller-runtime/pkg/envtest/envtest.test",
    "cronjob/internal/controller": "gosuites/cronjob/internal/controller/controller.test",
    "cronjob/internal/webhook/v1": "gosuites/cronjob/internal/webhook/v1/webhook.test",
}
TIMEOUT = 900  # seconds a suite may take before it is killed (each takes seconds on the emulator)


@dataclass
class SuiteRun:
    suite: str
    tls: bool
    passed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # spec -> its failure message
    skipped: int = 0
    seconds: float = 0.0
    output: str = ""

    @property
    def ran(self) -> int:
        return len(self.passed) + len(self.failed)


def binary(suite: str) -> Path | None:
    return oracle_bin(SUITES[suite])


def spec_name(report: dict[str, Any]) -> str:
    """A spec's full text, as Ginkgo prints it: the containers' texts then its own; a suite node
    (BeforeSuite, AfterSuite) by its type."""
    parts = [*(report.get("ContainerHierarchyTexts") or []), report.get("LeafNodeText") or ""]
    text = " ".join(p for p in parts if p)
    return text or f"[{report.get('LeafNodeType', 'node')}]"


def parse_report(path: Path, run: SuiteRun) -> None:
    for suite in json.loads(path.read_text()):
        run.seconds += (suite.get("RunTime") or 0) / 1e9
        for spec in suite.get("SpecReports") or []:
            state = spec.get("State")
            name = spec_name(spec)
            if state == "passed":
                if spec.get("LeafNodeType") == "It":
                    run.passed.append(name)
            elif state in ("failed", "panicked", "aborted", "timedout", "interrupted"):
                failure = spec.get("Failure") or {}
                run.failed[name] = str(failure.get("Message") or state).strip()
            elif state in ("skipped", "pending"):
                run.skipped += 1


def run_suite(suite: str, kubeconfig: Path, *, tls: bool) -> SuiteRun:
    """Run `suite`'s binary against the server `kubeconfig` names; every spec's outcome."""
    exe = binary(suite)
    assert exe is not None, suite
    run = SuiteRun(suite, tls)
    with tempfile.TemporaryDirectory(prefix="pyop-gosuite-") as tmp:
        report = Path(tmp) / "report.json"
        env = {**os.environ, "USE_EXISTING_CLUSTER": "true", "KUBECONFIG": str(kubeconfig)}
        env.pop("KUBEBUILDER_ASSETS", None)
        proc = subprocess.run(
            [str(exe), f"-ginkgo.json-report={report}", "-ginkgo.no-color", f"-test.timeout={TIMEOUT}s"],
            cwd=exe.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT + 60,
            check=False,
        )
        run.output = (proc.stdout + proc.stderr)[-20000:]
        if report.exists():
            parse_report(report, run)
        elif proc.returncode != 0:
            run.failed["[suite did not report]"] = run.output[-2000:]
    return run
