"""`pyop create webhook`: the files, the edits, the error contract, and a generated project whose own
tests show the emulator calling its webhooks over HTTPS (defaulting, validation, conversion)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import PACKAGE, RunPyop, assert_one_line_error, run_project_tests, snapshot

KUBECTL = shutil.which("kubectl")
AT = ["--group", "programming-kubernetes", "--version", "v1alpha1", "--kind", "At"]


def with_src(root: Path) -> str:
    """PYTHONPATH for a project's manager: its src/, then the one this test runs with (pyop's checkout)."""
    return os.pathsep.join(p for p in (str(root / "src"), os.environ.get("PYTHONPATH", "")) if p)


def test_writes_the_webhook_and_turns_on_kustomize(pyop: RunPyop, with_api: Path) -> None:
    run = pyop(
        "create", "webhook", *AT, "--defaulting", "--programmatic-validation", "--no-make", cwd=with_api
    )
    assert run.code == 0, run.err
    webhook = with_api / f"src/{PACKAGE}/webhooks/v1alpha1/at_webhook.py"
    text = webhook.read_text()
    assert (
        "# +kubebuilder:webhook:path=/mutate-programming-kubernetes-viper-run-v1alpha1-at,mutating=true"
        in text
    )
    assert "name=vat-v1alpha1.kb.io" in text and "def setup_at_webhook_with_manager(mgr: object)" in text
    assert (with_api / "tests/test_at_webhook.py").is_file()
    main = (with_api / f"src/{PACKAGE}/__main__.py").read_text()
    # the flags are run_manager's; the server takes them from `flags` in setup()
    server = "mgr.webhook_server = WebhookServer(port=flags.webhook_port, cert_dir=flags.webhook_cert_path"
    assert server in main and "from pyscaffold_op.runtime.webhook import WebhookServer\n" in main
    assert "setup_at_webhook_with_manager(mgr)" in main
    project = yaml.safe_load((with_api / "PROJECT").read_text())
    assert project["resources"][0]["webhooks"] == {
        "defaulting": True,
        "validation": True,
        "webhookVersion": "v1",
    }
    default = yaml.safe_load((with_api / "config/default/kustomization.yaml").read_text())
    assert {"../webhook", "../certmanager"} <= set(default["resources"])
    assert {"path": "manager_webhook_patch.yaml", "target": {"kind": "Deployment"}} in default["patches"]
    injected = [r["targets"][0]["select"]["kind"] for r in default["replacements"]]
    assert injected.count("MutatingWebhookConfiguration") == 2 and injected.count("Certificate") == 2
    for path in (
        "config/webhook/service.yaml",
        "config/certmanager/issuer.yaml",
        "config/certmanager/certificate-webhook.yaml",
        "config/network-policy/allow-webhook-traffic.yaml",
    ):
        assert (with_api / path).is_file(), path  # fmt: skip
    network = yaml.safe_load((with_api / "config/network-policy/kustomization.yaml").read_text())
    assert "allow-webhook-traffic.yaml" in network["resources"]
    # a second run is refused without --force, and changes nothing
    before = snapshot(with_api)
    again = pyop("create", "webhook", *AT, "--defaulting", "--no-make", cwd=with_api)
    assert_one_line_error(again, "defaulting webhook", "already exists", "--force")
    assert snapshot(with_api) == before
    forced = pyop("create", "webhook", *AT, "--defaulting", "--force", "--no-make", cwd=with_api)
    assert forced.code == 0, forced.err
    assert (with_api / f"src/{PACKAGE}/__main__.py").read_text().count(
        "setup_at_webhook_with_manager(mgr)"
    ) == 1


def test_custom_paths(pyop: RunPyop, with_api: Path) -> None:
    run = pyop(
        "create",
        "webhook",
        *AT,
        "--defaulting",
        "--defaulting-path",
        "/default-at",
        "--no-make",
        cwd=with_api,
    )
    assert run.code == 0, run.err
    text = (with_api / f"src/{PACKAGE}/webhooks/v1alpha1/at_webhook.py").read_text()
    assert "path=/default-at," in text and 'with_defaulter_custom_path("/default-at")' in text


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ([], ("nothing to scaffold",)),
        (["--programmatic-validation", "--spoke", "v2"], ("--spoke is only for --conversion",)),
        (["--conversion"], ("--conversion needs at least one --spoke",)),
        (["--conversion", "--spoke", "v1alpha1"], ("cannot be its own spoke",)),
        (["--conversion", "--spoke", "v2"], ("--spoke v2: no API", "create api")),
        (["--validation-path", "/v"], ("nothing to scaffold",)),
        (["--defaulting", "--defaulting-path", "no-slash"], ("must be a URL path",)),
        (
            ["--defaulting", "--validation-path", "/v"],
            ("--validation-path is only for --programmatic-validation",),
        ),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    pyop: RunPyop, with_api: Path, args: list[str], fragments: tuple[str, ...]
) -> None:
    before = snapshot(with_api)
    assert_one_line_error(pyop("create", "webhook", *AT, *args, "--no-make", cwd=with_api), *fragments)
    assert snapshot(with_api) == before


def test_a_kind_without_api_is_refused(pyop: RunPyop, with_api: Path) -> None:
    before = snapshot(with_api)
    run = pyop("create", "webhook", "--group", "programming-kubernetes", "--version", "v1", "--kind", "At",
               "--defaulting", "--no-make", cwd=with_api)  # fmt: skip
    assert_one_line_error(run, "no API programming-kubernetes/v1, Kind=At", "create api")
    assert snapshot(with_api) == before


CONVERSION_TEST = '''\
"""Written by pyop's own test: an object created as v1 reads back as v2 through the /convert webhook."""

import asyncio

from pyscaffold_op.runtime.webhook import WebhookServer

from cron.webhooks.v1.cronjob_webhook import setup_cron_job_webhook_with_manager


async def test_v1_reads_back_as_v2(webhook_server: WebhookServer, kubeconfig: str) -> None:
    setup_cron_job_webhook_with_manager(webhook_server)

    async def kubectl(*args: str, stdin: str = "") -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            "kubectl", "--kubeconfig", kubeconfig, *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await proc.communicate(stdin.encode())
        return proc.returncode or 0, out.decode(), err.decode()

    v1 = "apiVersion: cron.example.com/v1\\nkind: CronJob\\nmetadata: {name: c}\\nspec: {foo: bar}\\n"
    code, _, err = await kubectl("create", "-f", "-", stdin=v1)
    assert code == 0, err
    jsonpath = "jsonpath={.apiVersion} {.spec.foo}"
    code, out, err = await kubectl("get", "cronjobs.v2.cron.example.com", "c", "-o", jsonpath)
    assert code == 0, err
    assert out == "cron.example.com/v2 bar"
'''


@pytest.mark.slow
@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_generated_project_tests_call_the_webhooks(tmp_path: Path) -> None:
    root = tmp_path / "cron"
    root.mkdir()

    def pyop(*args: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "pyscaffold_op", *args], cwd=root, check=True, capture_output=True
        )

    pyop("init", "--domain", "example.com", "--repo", "github.com/ex/cron")
    pyop("create", "api", "--group", "cron", "--version", "v1", "--kind", "CronJob", "--no-make")
    pyop("create", "webhook", "--group", "cron", "--version", "v1", "--kind", "CronJob", "--defaulting",
         "--programmatic-validation", "--no-make")  # fmt: skip
    pyop(
        "create",
        "api",
        "--group",
        "cron",
        "--version",
        "v2",
        "--kind",
        "CronJob",
        "--no-controller",
        "--no-make",
    )
    pyop(
        "create",
        "webhook",
        "--group",
        "cron",
        "--version",
        "v1",
        "--kind",
        "CronJob",
        "--conversion",
        "--spoke",
        "v2",
    )  # fmt: skip  (this one runs make manifests)
    assert (root / "config/webhook/manifests.yaml").is_file()
    crd = yaml.safe_load((root / "config/crd/bases/cron.example.com_cronjobs.yaml").read_text())
    assert crd["spec"]["conversion"]["strategy"] == "Webhook"
    assert [v["name"] for v in crd["spec"]["versions"] if v["storage"]] == ["v1"]
    for check in (["check", "."], ["format", "--check", "."]):
        lint = subprocess.run(
            [sys.executable, "-m", "ruff", *check], cwd=root, capture_output=True, text=True
        )
        assert lint.returncode == 0, lint.stdout + lint.stderr
    built = subprocess.run([KUBECTL, "kustomize", "config/default"], cwd=root, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    docs = list(yaml.safe_load_all(built.stdout))
    kinds = {d["kind"] for d in docs}
    assert {
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "Certificate",
        "Issuer",
    } <= kinds
    mutating = next(d for d in docs if d["kind"] == "MutatingWebhookConfiguration")
    assert mutating["metadata"]["annotations"] == {
        "cert-manager.io/inject-ca-from": "cron-system/cron-serving-cert"
    }
    assert mutating["webhooks"][0]["clientConfig"]["service"]["name"] == "cron-webhook-service"
    crd = next(d for d in docs if d["kind"] == "CustomResourceDefinition")
    assert crd["metadata"]["annotations"] == {
        "cert-manager.io/inject-ca-from": "cron-system/cron-serving-cert",
        "pyop.io/version": crd["metadata"]["annotations"]["pyop.io/version"],  # the generator's
    }
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["namespace"] == "cron-system"
    cert = next(
        d for d in docs if d["kind"] == "Certificate" and d["metadata"]["name"] == "cron-serving-cert"
    )
    assert cert["spec"]["dnsNames"][0] == "cron-webhook-service.cron-system.svc"
    (root / "tests/test_conversion.py").write_text(CONVERSION_TEST)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(root / "src"), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
        ),
    }
    tests = run_project_tests(root, env)
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert "7 passed" in tests.stdout


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_make_run_against_envtest_serve_converts_for_kubectl(tmp_path: Path) -> None:
    """The issue's "done": v1 written, v2 read through the manager's /convert webhook, with the
    manager run as `make run` runs it and the emulator as `pyop envtest serve`."""
    import time

    root = tmp_path / "cron"
    root.mkdir()

    def pyop(*args: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "pyscaffold_op", *args], cwd=root, check=True, capture_output=True
        )

    pyop("init", "--domain", "example.com", "--repo", "github.com/ex/cron")
    pyop("create", "api", "--group", "cron", "--version", "v1", "--kind", "CronJob", "--no-make")
    pyop(
        "create",
        "api",
        "--group",
        "cron",
        "--version",
        "v2",
        "--kind",
        "CronJob",
        "--no-controller",
        "--no-make",
    )
    pyop("create", "webhook", "--group", "cron", "--version", "v1", "--kind", "CronJob", "--conversion",
         "--spoke", "v2")  # fmt: skip
    certs, kubeconfig, port = tmp_path / "certs", tmp_path / "kubeconfig", _free_port()
    serve = subprocess.Popen(
        [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--no-kubelet",
         "--crds", "config/crd/bases", "--kubeconfig-out", str(kubeconfig),
         "--webhook-service", f"system/webhook-service=https://127.0.0.1:{port}",
         "--webhook-ca", str(certs / "ca.crt")],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    manager = None
    try:
        deadline = time.monotonic() + 60
        while not kubeconfig.is_file() and serve.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # waiting for the emulator to write its kubeconfig (it serves by then)
        assert kubeconfig.is_file(), serve.stderr.read() if serve.poll() is not None and serve.stderr else ""
        manager = subprocess.Popen(
            [sys.executable, "-m", "cron", "--kubeconfig", str(kubeconfig),
             "--health-probe-bind-address", "0",
             "--webhook-port", str(port), "--webhook-cert-path", str(certs)],
            cwd=root, env={**os.environ, "PYTHONPATH": with_src(root)},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

        def kubectl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
            assert KUBECTL is not None
            return subprocess.run(
                [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
                input=stdin, capture_output=True, text=True, timeout=60,
            )  # fmt: skip

        v1 = "apiVersion: cron.example.com/v1\nkind: CronJob\nmetadata: {name: c}\nspec: {foo: bar}\n"
        assert kubectl("create", "-f", "-", stdin=v1).returncode == 0
        deadline = time.monotonic() + 60  # the manager starting up (imports, certificates) is the wait
        while True:
            got = kubectl(
                "get", "cronjobs.v2.cron.example.com", "c", "-o", "jsonpath={.apiVersion} {.spec.foo}"
            )
            if got.returncode == 0 or time.monotonic() > deadline or manager.poll() is not None:
                break
            time.sleep(0.2)
        assert got.returncode == 0, got.stderr + (manager.stderr.read() if manager.poll() is not None else "")
        assert got.stdout == "cron.example.com/v2 bar"
        assert (certs / "ca.crt").is_file()
    finally:
        for proc in (manager, serve):
            if proc is not None:
                proc.terminate()
                proc.wait(10)


@pytest.mark.slow
@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_readme_no_cluster_recipe_calls_the_webhooks(tmp_path: Path) -> None:
    """Issue 27: after `create webhook`, the README's "Run it with no cluster" (make envtest, make install
    run, kubectl apply -k config/samples/) calls the admission webhooks and converts for kubectl."""
    import signal
    import time

    root = tmp_path / "cron"
    root.mkdir()

    def pyop(*args: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "pyscaffold_op", *args], cwd=root, check=True, capture_output=True
        )

    pyop("init", "--domain", "example.com", "--repo", "github.com/ex/cron")
    pyop("create", "api", "--group", "cron", "--version", "v1", "--kind", "CronJob", "--no-make")
    pyop("create", "api", "--group", "cron", "--version", "v2", "--kind", "CronJob", "--no-controller",
         "--no-make")  # fmt: skip
    pyop("create", "webhook", "--group", "cron", "--version", "v1", "--kind", "CronJob", "--defaulting",
         "--programmatic-validation", "--conversion", "--spoke", "v2")  # fmt: skip
    readme = (root / "README.md").read_text()
    assert "make envtest ENVTEST_KUBECONFIG=/tmp/cron-kubeconfig" in readme
    # the README's commands, with a free port and folders of this test (other runs share the host)
    certs, kubeconfig, port = tmp_path / "certs", tmp_path / "kubeconfig", _free_port()
    tools = [f"PYTHON={sys.executable}", f"PYOP={sys.executable} -m pyscaffold_op"]
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    serve = subprocess.Popen(
        ["make", "-s", "envtest", *tools, f"ENVTEST_KUBECONFIG={kubeconfig}",
         f"WEBHOOK_URL=https://127.0.0.1:{port}", f"WEBHOOK_CA={certs}/ca.crt"],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    manager = None
    try:
        deadline = time.monotonic() + 60
        while not kubeconfig.is_file() and serve.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert kubeconfig.is_file(), serve.stdout.read() if serve.poll() is not None and serve.stdout else ""
        args = f"--health-probe-bind-address=127.0.0.1:0 --webhook-port={port} --webhook-cert-path={certs}"
        manager = subprocess.Popen(
            ["make", "-s", "install", "run", *tools, f"ARGS={args}"],
            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip

        def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
            assert KUBECTL is not None
            return subprocess.run(
                [KUBECTL, *args], cwd=root, env=env, capture_output=True, text=True, timeout=60
            )

        deadline = time.monotonic() + 60  # the manager starting up (imports, certificates) is the wait
        while True:
            applied = kubectl("apply", "-k", "config/samples/")
            if applied.returncode == 0 or time.monotonic() > deadline or manager.poll() is not None:
                break
            time.sleep(0.3)
        assert applied.returncode == 0, applied.stderr
        got = kubectl("get", "cronjobs.v2.cron.example.com", "cronjob-sample", "-o",
                      "jsonpath={.apiVersion} {.spec.foo}")  # fmt: skip
        assert (got.returncode, got.stdout) == (0, "cron.example.com/v2 foo"), got.stderr  # defaulted
    finally:
        for proc in (manager, serve):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


def _replace_foo(root: Path, kind_lower: str, fields: str) -> None:
    types = next((root / "src").rglob(f"{kind_lower}_types.py"))
    text = types.read_text()
    start = text.index("    foo: str | None = None")
    end = text.index('"""', text.index('"""', start) + 3) + 4  # the field, its docstring, the newline
    types.write_text(text[:start] + fields + text[end:])


def test_webhook_examples_use_foo_only_while_the_spec_has_it(pyop: RunPyop, with_api: Path) -> None:
    from pyscaffold_op.scaffold.webhook import keeps_scaffolded_foo

    types = next((with_api / "src").rglob("at_types.py"))
    assert keeps_scaffolded_foo(types, "At")
    assert not keeps_scaffolded_foo(types, "Other")  # another kind's Spec
    assert not keeps_scaffolded_foo(with_api / "missing.py", "At")
    _replace_foo(with_api, "at", "    foo: int = 0\n")  # the user's own `foo`, not the example's
    assert not keeps_scaffolded_foo(types, "At")
    _replace_foo_back = types.read_text().replace("    foo: int = 0\n", "    schedule: str\n")
    types.write_text(_replace_foo_back)
    run = pyop(
        "create", "webhook", *AT, "--defaulting", "--programmatic-validation", "--no-make", cwd=with_api
    )
    assert run.code == 0, run.err
    for written in (f"src/{PACKAGE}/webhooks/v1alpha1/at_webhook.py", "tests/test_at_webhook.py"):
        text = (with_api / written).read_text()
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        assert "foo" not in code, written  # only comments show an example field
    test = (with_api / "tests/test_at_webhook.py").read_text()
    assert "config/samples/programming-kubernetes_v1alpha1_at.yaml" in test
    assert (with_api / "config/samples/programming-kubernetes_v1alpha1_at.yaml").is_file()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_generated_webhook_tests_pass_after_the_user_wrote_the_spec(tmp_path: Path) -> None:
    """The kubebuilder order: write the types, then create the webhooks. The scaffolded webhook and
    its tests must not use the `foo` example field the user has removed; the tests send the sample."""
    root = tmp_path / "mem"
    root.mkdir()

    def pyop(*args: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "pyscaffold_op", *args], cwd=root, check=True, capture_output=True
        )

    kind = ["--group", "cache", "--version", "v1alpha1", "--kind", "Memcached"]
    pyop("init", "--domain", "example.com", "--repo", "github.com/ex/mem")
    pyop("create", "api", *kind, "--no-make")
    _replace_foo(root, "memcached", '    size: int\n    """How many memcached Pods."""\n')
    sample = root / "config/samples/cache_v1alpha1_memcached.yaml"
    sample.write_text(sample.read_text().replace("spec: {}", "spec:\n  size: 2"))
    pyop("create", "webhook", *kind, "--defaulting", "--programmatic-validation")
    for check in (["check", "."], ["format", "--check", "."]):
        lint = subprocess.run(
            [sys.executable, "-m", "ruff", *check], cwd=root, capture_output=True, text=True
        )
        assert lint.returncode == 0, lint.stdout + lint.stderr
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(root / "src"), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
        ),
    }
    pytest_cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--log-level=DEBUG",
        "tests/test_memcached_webhook.py",
    ]

    def project_tests() -> subprocess.CompletedProcess[str]:
        return subprocess.run(pytest_cmd, cwd=root, capture_output=True, text=True, env=env)

    tests = project_tests()
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert "2 passed" in tests.stdout
    # a sample that misses a required field fails the tests, naming the sample
    sample.write_text(sample.read_text().replace("spec:\n  size: 2", "spec: {}"))
    tests = project_tests()
    assert tests.returncode == 1 and "cache_v1alpha1_memcached.yaml: the sample is not a valid Memcached" in (
        tests.stdout
    )


def test_a_bad_debug_log_call_in_a_webhook_fails_the_projects_tests(pyop: RunPyop, with_api: Path) -> None:
    """Issue 27: the scaffolded webhook once logged with `extra={"name": ...}` (a reserved LogRecord key),
    and every admission failed under `make run`; the project's tests missed it because they logged at
    WARNING. The generated pyproject runs pytest with `log_level = "DEBUG"`, so every log call executes,
    and such a call, even at debug level, fails the test that reaches it."""
    assert pyop("create", "webhook", *AT, "--defaulting", "--no-make", cwd=with_api).code == 0
    assert pyop("generate", "manifests", cwd=with_api).code == 0
    pyproject = (with_api / "pyproject.toml").read_text()
    assert 'log_level = "DEBUG"' in pyproject
    webhook = with_api / f"src/{PACKAGE}/webhooks/v1alpha1/at_webhook.py"
    good = webhook.read_text()
    call = 'log.info("defaulting At %s", at.metadata.name)'
    assert call in good
    bad = 'log.debug("defaulting", extra={"name": at.metadata.name})'
    webhook.write_text(good.replace(call, bad))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(with_api / "src"), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
        ),
    }
    tests = run_project_tests(with_api, env)
    assert tests.returncode == 1, tests.stdout[-3000:]
    assert "Attempt to overwrite 'name' in LogRecord" in tests.stdout
    webhook.write_text(good)
    tests = run_project_tests(with_api, env)
    assert tests.returncode == 0, tests.stdout[-3000:]


def test_an_unknown_webhook_service_names_the_envtest_serve_flags() -> None:
    """Issue 27: the emulator's error for a webhook Service it was not told about named a Python API
    (env.webhook_service_url) to a user who started it with `pyop envtest serve`."""
    from pyscaffold_op.envtest.admission.webhookclient import CallError, ServiceRegistry

    config = {"service": {"namespace": "system", "name": "webhook-service", "path": "/convert"}}
    with pytest.raises(CallError) as err:
        ServiceRegistry().resolve(config, 10)
    assert "--webhook-service system/webhook-service=https://HOST:PORT" in str(err.value)
    assert "--webhook-ca" in str(err.value) and "make envtest" in str(err.value)


def test_the_readme_says_make_deploy_needs_cert_manager_once_there_are_webhooks(with_api: Path) -> None:
    readme = (with_api / "README.md").read_text()
    deploy = readme[readme.index("### Deploy to a cluster") : readme.index("### Uninstall")]
    assert "Once the project has webhooks" in deploy and "cert-manager.yaml" in deploy
    assert "make envtest ENVTEST_KUBECONFIG=" in readme


def test_a_later_webhook_type_keeps_the_custom_path_of_the_first(pyop: RunPyop, with_api: Path) -> None:
    """Issue 27 (kubebuilder parity): `--programmatic-validation` after `--defaulting --defaulting-path`
    re-rendered the webhook file with the default mutate path (exit 0, the configuration pointing at the
    wrong path)."""
    first = ("create", "webhook", *AT, "--defaulting", "--defaulting-path", "/default-at", "--no-make")
    assert pyop(*first, cwd=with_api).code == 0
    run = pyop("create", "webhook", *AT, "--programmatic-validation", "--no-make", cwd=with_api)
    assert run.code == 0, run.err
    text = (with_api / f"src/{PACKAGE}/webhooks/v1alpha1/at_webhook.py").read_text()
    assert "path=/default-at," in text and 'with_defaulter_custom_path("/default-at")' in text
    assert "path=/validate-programming-kubernetes-viper-run-v1alpha1-at," in text
    assert "with_validator_custom_path" not in text


@pytest.mark.parametrize("flags", [("--defaulting",), ("--programmatic-validation",)])
def test_a_single_webhook_types_test_has_no_unused_imports(
    pyop: RunPyop, with_api: Path, flags: tuple[str, ...]
) -> None:
    """Issue 27: a defaulting-only webhook's test imported pytest and Invalid unused: `make lint` failed."""
    assert pyop("create", "webhook", *AT, *flags, "--no-make", cwd=with_api).code == 0
    lint = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "concise", "src", "tests"],
        cwd=with_api, capture_output=True, text=True,
    )  # fmt: skip
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_webhooks_on_two_versions_of_a_kind_each_keep_their_test(pyop: RunPyop, with_api: Path) -> None:
    """Issue 27 (kubebuilder parity): webhooks on a second version of a kind overwrote the first
    version's test file, and the tests registered one version's handlers while the API server calls
    every version's (matchPolicy Equivalent): 3 of 4 failed with 404s. Each version's webhooks get their
    own test, and every test serves the kind's webhooks of all versions."""
    v2 = ["--group", "programming-kubernetes", "--version", "v2", "--kind", "At"]
    assert pyop("create", "api", *v2, "--no-controller", "--no-make", cwd=with_api).code == 0
    both = ("--defaulting", "--programmatic-validation", "--no-make")
    assert pyop("create", "webhook", *AT, *both, cwd=with_api).code == 0
    first = (with_api / "tests/test_at_webhook.py").read_text()
    run = pyop("create", "webhook", *v2, *both, cwd=with_api)
    assert run.code == 0, run.err
    assert (with_api / "tests/test_at_webhook.py").read_text() == first
    second = (with_api / "tests/test_at_v2_webhook.py").read_text()
    assert f"from {PACKAGE}.api.v2 import At, AtSpec" in second
    types = with_api / f"src/{PACKAGE}/api/v1alpha1/at_types.py"
    marked = types.read_text().replace("\nclass At(", "\n# +kubebuilder:storageversion\nclass At(", 1)
    types.write_text(marked)
    assert pyop("generate", "manifests", cwd=with_api).code == 0
    env = {**os.environ, "PYTHONPATH": str(with_api / "src")}
    tests = run_project_tests(with_api, env)
    assert tests.returncode == 0, tests.stdout[-3000:]
    # a later `create webhook --force` of v1 keeps its test's name; deleting v2's leaves v1's passing
    assert pyop("create", "webhook", *AT, *both, "--force", cwd=with_api).code == 0
    assert not (with_api / "tests/test_at_v1alpha1_webhook.py").exists()
    run = pyop("delete", "webhook", *v2, cwd=with_api)
    assert run.code == 0, run.err
    assert not (with_api / "tests/test_at_v2_webhook.py").exists()
    assert (with_api / "tests/test_at_webhook.py").is_file()
    assert pyop("generate", "manifests", cwd=with_api).code == 0
    tests = run_project_tests(with_api, env)
    assert tests.returncode == 0, tests.stdout[-3000:]


def test_setup_registers_the_webhooks_of_every_version(pyop: RunPyop, with_api: Path) -> None:
    """Issue 35: every version's webhook module has `setup_<kind>_webhook_with_manager`, and `create
    webhook` took the second version's for the first's, so `make run` served v1's webhooks only and
    the API server's calls of v2's got 404 (every create of the kind failed). The second is imported
    under an alias; `delete webhook` takes it out again, however ruff wrapped the import."""
    v2 = ["--group", "programming-kubernetes", "--version", "v2", "--kind", "At"]
    assert pyop("create", "api", *v2, "--no-controller", "--no-make", cwd=with_api).code == 0
    both = ("--defaulting", "--programmatic-validation", "--no-make")
    assert pyop("create", "webhook", *AT, *both, cwd=with_api).code == 0
    main = with_api / f"src/{PACKAGE}/__main__.py"
    with_v1 = main.read_text()
    assert pyop("create", "webhook", *v2, *both, cwd=with_api).code == 0
    text = main.read_text()
    assert "    setup_at_webhook_with_manager(mgr)\n    setup_at_v2_webhook_with_manager(mgr)\n" in text
    from pyscaffold_op.scaffold.pysource import imported_names

    module = f"{PACKAGE}.webhooks.v2.at_webhook"
    imported = imported_names(text)["setup_at_v2_webhook_with_manager"]
    assert imported == (module, "setup_at_webhook_with_manager")
    # once more with --force: registered once
    assert pyop("create", "webhook", *v2, *both, "--force", cwd=with_api).code == 0
    assert main.read_text() == text
    run = pyop("delete", "webhook", *v2, "--no-make", cwd=with_api)
    assert run.code == 0, run.err
    assert main.read_text() == with_v1


CHAINED = """def setup_at_webhook_with_manager(mgr: object) -> None:
    webhook_managed_by(mgr).for_(At).with_defaulter(AtCustomDefaulter()).with_validator(
        AtCustomValidator()
    ).complete()
"""


def test_conversion_is_added_to_the_chained_builder_the_docs_teach(pyop: RunPyop, with_api: Path) -> None:
    """Issue 35: `create webhook --conversion` on a webhook file whose setup is the one-line chain of
    docs/webhooks.md §2 failed with "`builder.complete()` is missing"."""
    both = ("--defaulting", "--programmatic-validation", "--no-make")
    assert pyop("create", "webhook", *AT, *both, cwd=with_api).code == 0
    webhook = with_api / f"src/{PACKAGE}/webhooks/v1alpha1/at_webhook.py"
    text = webhook.read_text()
    start = text.index("def setup_at_webhook_with_manager")
    webhook.write_text(text[:start] + CHAINED)
    v2 = ["--group", "programming-kubernetes", "--version", "v2", "--kind", "At"]
    assert pyop("create", "api", *v2, "--no-controller", "--no-make", cwd=with_api).code == 0
    run = pyop("create", "webhook", *AT, "--conversion", "--spoke", "v2", "--no-make", cwd=with_api)
    assert run.code == 0, run.err
    text = webhook.read_text()
    assert "    ).with_spokes(AtV2).complete()\n" in text
    assert f"from {PACKAGE}.api.v2 import At as AtV2\n" in text
    assert pyop("generate", "manifests", cwd=with_api).code == 0
    from pyscaffold_op.runtime.webhook import WebhookServer

    sys.path.insert(0, str(with_api / "src"))
    try:
        module = __import__(f"{PACKAGE}.webhooks.v1alpha1.at_webhook", fromlist=["x"])
        server = WebhookServer()
        module.setup_at_webhook_with_manager(server)
        assert "/convert" in server.paths()
    finally:
        sys.path.remove(str(with_api / "src"))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def test_the_server_is_added_beside_a_wrapped_runtime_import(pyop: RunPyop, with_api: Path) -> None:
    """A `__main__.py` whose runtime import ruff wrapped (the user imported more from it): the webhook
    server's import goes after the whole statement, not inside its brackets."""
    main = with_api / f"src/{PACKAGE}/__main__.py"
    wrapped = "from pyscaffold_op.runtime import (\n    Manager,\n    ManagerFlags,\n    run_manager,\n)\n"
    main.write_text(
        main.read_text().replace(
            "from pyscaffold_op.runtime import Manager, ManagerFlags, run_manager\n", wrapped
        )
    )
    run = pyop("create", "webhook", *AT, "--defaulting", "--no-make", cwd=with_api)
    assert run.code == 0, run.err
    compile(main.read_text(), str(main), "exec")
    assert "mgr.webhook_server = WebhookServer(" in main.read_text()


def test_splice_before_call_finds_the_call_however_it_is_wrapped() -> None:
    from pyscaffold_op.errors import ProjectError
    from pyscaffold_op.scaffold import pysource

    text = "def f(m):\n    b = g(m).h(\n        x()\n    ).complete()\n"
    out = pysource.splice_before_call(text, "f", "complete", ".s(Y)", where="w.py")
    assert out == "def f(m):\n    b = g(m).h(\n        x()\n    ).s(Y).complete()\n"
    with pytest.raises(ProjectError, match=r"no `.complete\(\)` calls in f"):
        pysource.splice_before_call("def f(m):\n    pass\n", "f", "complete", ".s(Y)", where="w.py")
    with pytest.raises(ProjectError, match="`def g` is missing"):
        pysource.splice_before_call(text, "g", "complete", ".s(Y)", where="w.py")


def test_a_wrapped_import_is_found_and_removed_whole() -> None:
    from pyscaffold_op.scaffold import pysource

    long = "from pkg.webhooks.v2.cronjob_webhook import setup_cron_job_webhook_with_manager as setup_v2"
    wrapped = (
        "from pkg.webhooks.v2.cronjob_webhook import (\n"
        "    setup_cron_job_webhook_with_manager as setup_v2,\n"
        ")\n"
    )
    text = f"import os\n{wrapped}\nx = [\n    'a',\n]\n"
    assert pysource.remove_statement(text, long) == "import os\n\nx = [\n    'a',\n]\n"
    lines = text.splitlines(keepends=True)
    assert pysource.find_reformatted(lines, long + "\n") == (1, 4)
    # a list's closing bracket is not a wrapped statement's: it stays
    assert pysource.remove_statement(text, "'a',") == f"import os\n{wrapped}\nx = [\n]\n"


def test_plural_is_kubebuilders_flag_and_must_match_project(pyop: RunPyop, with_api: Path) -> None:
    """Issue 27 (kubebuilder parity): `create webhook --plural=admirales` (kubebuilder's reference
    project) failed with "No such option". The plural PROJECT records is accepted; another is refused."""
    admiral = ["--group", "programming-kubernetes", "--version", "v1alpha1", "--kind", "Admiral"]
    make = ("--no-make",)
    assert (
        pyop("create", "api", *admiral, "--plural=admirales", "--cluster-scoped", *make, cwd=with_api).code
        == 0
    )
    before = snapshot(with_api)
    run = pyop("create", "webhook", *admiral, "--plural=admirals", "--defaulting", *make, cwd=with_api)
    assert_one_line_error(run, "--plural admirals", "'admirales'")
    assert snapshot(with_api) == before
    assert_one_line_error(
        pyop("create", "webhook", *admiral, "--plural=Admirales", "--defaulting", *make, cwd=with_api),
        "invalid plural 'Admirales'",
    )
    run = pyop("create", "webhook", *admiral, "--plural=admirales", "--defaulting", *make, cwd=with_api)
    assert run.code == 0, run.err
    text = (with_api / f"src/{PACKAGE}/webhooks/v1alpha1/admiral_webhook.py").read_text()
    assert "resources=admirales" in text
    run = pyop("create", "webhook", *AT, "--plural=ats", "--defaulting", *make, cwd=with_api)
    assert run.code == 0, run.err


POD = ["--group", "core", "--version", "v1", "--kind", "Pod"]
DEPLOYMENT = ["--group", "apps", "--version", "v1", "--kind", "Deployment"]


def test_webhooks_for_built_in_kinds_as_kubebuilder_scaffolds_them(pyop: RunPyop, initialized: Path) -> None:
    """Issue 27: kubebuilder scaffolds webhooks for core kinds without `create api` (PROJECT records them
    `core: true`); the webhook uses the typed built-in model, its markers name the core group `""`
    (`/mutate--v1-pod`), and its test passes against the emulator."""
    root = initialized
    run = pyop("create", "webhook", *POD, "--defaulting", "--programmatic-validation", "--no-make", cwd=root)
    assert run.code == 0, run.err
    run = pyop("create", "webhook", *DEPLOYMENT, "--defaulting", "--no-make", cwd=root)
    assert run.code == 0, run.err
    pod = (root / f"src/{PACKAGE}/webhooks/v1/pod_webhook.py").read_text()
    assert "from pyscaffold_op.models.core_v1 import Pod\n" in pod
    assert (
        "# +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=fail,sideEffects=None,"
        'groups="",resources=pods,verbs=create;update,versions=v1,name=mpod-v1.kb.io,' in pod
    )
    assert "path=/validate--v1-pod,mutating=false" in pod
    deployment = (root / f"src/{PACKAGE}/webhooks/v1/deployment_webhook.py").read_text()
    assert "from pyscaffold_op.models.apps_v1 import Deployment\n" in deployment
    assert "path=/mutate-apps-v1-deployment," in deployment
    assert "groups=apps,resources=deployments," in deployment
    project = yaml.safe_load((root / "PROJECT").read_text())
    assert project["resources"] == [
        {
            "core": True,
            "group": "core",
            "kind": "Pod",
            "path": "k8s.io/api/core/v1",
            "version": "v1",
            "webhooks": {"defaulting": True, "validation": True, "webhookVersion": "v1"},
        },
        {
            "core": True,
            "group": "apps",
            "kind": "Deployment",
            "path": "k8s.io/api/apps/v1",
            "version": "v1",
            "webhooks": {"defaulting": True, "webhookVersion": "v1"},
        },
    ]  # fmt: skip  (kubebuilder v4.16's PROJECT for the same commands)
    assert pyop("generate", "manifests", cwd=root).code == 0
    docs = list(yaml.safe_load_all((root / "config/webhook/manifests.yaml").read_text()))
    rules = {
        hook["clientConfig"]["service"]["path"]: hook["rules"][0]
        for doc in docs
        for hook in doc["webhooks"]
    }  # fmt: skip
    assert set(rules) == {"/mutate--v1-pod", "/validate--v1-pod", "/mutate-apps-v1-deployment"}
    assert rules["/mutate--v1-pod"]["apiGroups"] == [""] and rules["/mutate--v1-pod"]["resources"] == ["pods"]
    assert rules["/mutate-apps-v1-deployment"]["apiGroups"] == ["apps"]
    for check in (["check", "."], ["format", "--check", "."]):
        ruff = [sys.executable, "-m", "ruff", *check]
        lint = subprocess.run(ruff, cwd=root, capture_output=True, text=True)
        assert lint.returncode == 0, lint.stdout + lint.stderr
    tests = run_project_tests(root, {**os.environ, "PYTHONPATH": with_src(root)})
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert "5 passed" in tests.stdout
    # deleting a built-in kind's last webhook drops the entry `create webhook` recorded
    assert pyop("delete", "webhook", *DEPLOYMENT, "--defaulting", "--no-make", cwd=root).code == 0
    assert [r["kind"] for r in yaml.safe_load((root / "PROJECT").read_text())["resources"]] == ["Pod"]
    assert not (root / f"src/{PACKAGE}/webhooks/v1/deployment_webhook.py").exists()


def test_a_built_in_kinds_controller_and_webhooks_share_its_entry(pyop: RunPyop, initialized: Path) -> None:
    root = initialized
    run = pyop("create", "api", *POD, "--no-resource", "--controller", "--no-make", cwd=root)
    assert run.code == 0, run.err
    run = pyop("create", "webhook", *POD, "--defaulting", "--no-make", cwd=root)
    assert run.code == 0, run.err
    [pod] = yaml.safe_load((root / "PROJECT").read_text())["resources"]
    assert pod["controller"] is True and pod["webhooks"] == {"defaulting": True, "webhookVersion": "v1"}


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--group", "core", "--version", "v1", "--kind", "Pdo", "--defaulting"], ("'Pdo'", "core/v1")),
        ([*DEPLOYMENT, "--conversion", "--spoke", "v2"], ("--conversion", "built-in kind")),
        ([*POD, "--defaulting", "--plural", "podz"], ("--plural podz", "'pods'")),
    ],
)
def test_bad_built_in_webhooks_are_one_line_and_change_nothing(
    pyop: RunPyop, initialized: Path, args: list[str], fragments: tuple[str, ...]
) -> None:
    before = snapshot(initialized)
    assert_one_line_error(pyop("create", "webhook", *args, "--no-make", cwd=initialized), *fragments)
    assert snapshot(initialized) == before
