"""The simulated kubelet's tiny sh (controllers/shell.py) and what it makes of containers' commands:
what a script prints, when, and how it ends (issues 36 and 39), as busybox sh would."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest import Environment, KubeletSimulator
from pyscaffold_op.envtest.controllers.containerenv import command_line, container_env, expand
from pyscaffold_op.envtest.controllers.shell import run, run_until
from pyscaffold_op.testing import eventually

ENV = {"FIELD": "value", "HOSTNAME": "pod-1", "EMPTY": ""}


@pytest.mark.parametrize(
    ("script", "printed", "code"),
    [
        ("echo FIELD=$FIELD", "FIELD=value\n", 0),
        (
            'echo "FIELD=${FIELD}" "${MISSING:-fallback}" "${EMPTY:-empty}" "${EMPTY-set}"',
            "FIELD=value fallback empty \n",
            0,
        ),
        ("echo 'single $FIELD' \"double $FIELD\"", "single $FIELD double value\n", 0),
        ("echo -n a; echo b; echo -e 'c\\td'", "ab\nc\td\n", 0),
        ("echo 'a\\nb'", "a\\nb\n", 0),  # busybox echo: no escapes without -e
        ("i=0; while [ $i -lt 3 ]; do echo $i; i=$((i + 1)); done", "0\n1\n2\n", 0),
        ("for x in a b 'c d'; do echo \"<$x>\"; done", "<a>\n<b>\n<c d>\n", 0),
        ("for i in $(seq 1 3); do printf '%s-%02d\\n' item $i; done", "item-01\nitem-02\nitem-03\n", 0),
        ('x=$(echo a b); echo "[$x]" [${#x}]', "[a b] [3]\n", 0),
        ("echo `hostname`", "pod-1\n", 0),
        ("false || echo recovered && echo and; ! true; echo $?", "recovered\nand\n1\n", 0),
        ('if [ -z "$NOPE" ]; then echo empty; elif true; then echo no; else echo set; fi', "empty\n", 0),
        ("echo hidden > /dev/null; echo hidden 1>/tmp/x; echo shown 2>&1; echo err >&2", "shown\nerr\n", 0),
        ("echo a; exit 3; echo never", "a\n", 3),
        ("sh -c 'echo inner $0 $1; exit 4' zero one", "inner zero one\n", 4),
        ("for i in 1 2 3; do [ $i = 2 ] && continue; [ $i = 3 ] && break; echo $i; done", "1\n", 0),
        ("echo $((7 / 2)) $((7 % 3)) $((2 * (3 + 4))) $((1 < 2))", "3 1 14 1\n", 0),
        ("echo 'unterminated", "sh: syntax error: unterminated quoted string\n", 2),
        ("false", "", 1),
        ("exec echo replaced; echo never", "replaced\n", 0),
    ],
)
def test_scripts(script: str, printed: str, code: int) -> None:
    result = run_until(script, ENV, 30)
    assert "".join(text for _at, text in result.output) == printed
    assert result.exit_code == code


def test_time_is_the_scripts_own() -> None:
    # the lightkube e2e suite's Pod: a line every 5 s, forever
    events = run("while true;do echo 'this is a test';sleep 5; done", ENV)
    first = [next(events) for _ in range(3)]
    assert first == [(0.0, "this is a test\n"), (5.0, "this is a test\n"), (10.0, "this is a test\n")]
    done = run_until("echo start; sleep 2; echo end", ENV, 30)
    assert done.output == [(0.0, "start\n"), (2.0, "end\n")] and (done.exit_code, done.seconds) == (0, 2.0)
    assert run_until("echo start; sleep 3600", ENV, 30).exit_code is None  # still running at the horizon
    assert run_until("while :; do :; done", ENV, 30).exit_code is None  # a busy loop never ends


def test_the_kubelets_expansion_and_environment() -> None:
    # $(VAR) is expanded by the kubelet before any shell sees the command; $$ is a $
    assert expand("$(A)-$(B)-$$(A)-$(seq 1 3)", {"A": "1"}) == "1-$(B)-$(A)-$(seq 1 3)"
    pod: dict[str, Any] = {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u", "labels": {"app": "x"}},
        "spec": {"nodeName": "n1", "serviceAccountName": "default"},
        "status": {"podIP": "10.0.0.5"},
    }
    container = {
        "name": "c",
        "command": ["sh", "-c"],
        "args": ["echo $(GREETING) $NAME"],
        "env": [
            {"name": "WHO", "value": "world"},
            {"name": "GREETING", "value": "hello-$(WHO)"},
            {"name": "NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
            {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
            {"name": "COLOR", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "color"}}},
        ],
        "envFrom": [{"prefix": "CFG_", "configMapRef": {"name": "cfg"}}],
    }

    def lookup(kind: str, ns: str, name: str) -> dict[str, Any] | None:
        return {"data": {"color": "green"}} if (kind, ns, name) == ("configmaps", "ns", "cfg") else None

    env = container_env(pod, container, lookup)
    assert (env["GREETING"], env["NAME"], env["APP"], env["CPU"]) == ("hello-world", "p", "x", "8")
    assert (env["COLOR"], env["CFG_color"], env["HOSTNAME"]) == ("green", "green", "p")
    assert command_line(pod, container, env) == ["sh", "-c", "echo hello-world $NAME"]
    assert "COLOR" not in container_env(pod, container)  # no lookup: ConfigMap references stay unset


async def test_logs_as_a_cluster_prints_them() -> None:
    async with (
        Environment(kubelet=KubeletSimulator(pending_seconds=0.01)) as env,
        httpx2.AsyncClient(base_url=env.url, timeout=10) as http,
    ):
        await http.post(
            "/api/v1/namespaces/default/configmaps",
            json={"metadata": {"name": "cfg"}, "data": {"v": "value"}},
        )

        def pod(name: str, script: str, **extra: Any) -> dict[str, Any]:
            container = {"name": "main", "image": "busybox", "args": ["/bin/sh", "-c", script], **extra}
            return {"metadata": {"name": name}, "spec": {"containers": [container], "restartPolicy": "Never"}}

        await http.post(
            "/api/v1/namespaces/default/pods",
            json=pod(
                "vars",
                "echo FIELD=$FIELD",
                env=[{"name": "FIELD", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "v"}}}],
            ),
        )
        await http.post(
            "/api/v1/namespaces/default/pods",
            json=pod("loop", "while true;do echo 'this is a test';sleep 5; done"),
        )

        async def logs(name: str) -> str | None:
            r = await http.get(f"/api/v1/namespaces/default/pods/{name}/log")
            return r.text if r.status_code == 200 and r.text else None

        assert await eventually(lambda: logs("vars")) == "FIELD=value\n"
        assert await eventually(lambda: logs("loop")) == "this is a test\n"  # the first line at once

        async def first_followed_line() -> str:
            async with http.stream(
                "GET", "/api/v1/namespaces/default/pods/loop/log", params={"follow": "true"}
            ) as r:
                async for line in r.aiter_lines():
                    return line
            return ""

        assert await asyncio.wait_for(first_followed_line(), 5) == "this is a test"
