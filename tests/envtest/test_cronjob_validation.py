"""CronJob schedule and time zone validation in the default run (the oracle-marked conformance corpus,
tests/conformance/scenarios/cronjobs.py, judges the same texts against kube-apiserver v1.37; the
expectations here are what the real server answered there)."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest.registry.cronjobs import schedule_error

PATH = "/apis/batch/v1/namespaces/default/cronjobs"


def cronjob(name: str, **spec: Any) -> dict[str, Any]:
    pod = {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {"schedule": "0 0 * * *", "jobTemplate": {"spec": {"template": {"spec": pod}}}, **spec},
    }


@pytest.mark.parametrize(
    ("schedule", "error"),
    [
        ("0 0 * * *", None),
        ("*/15 9-17 * * MON-fri", None),
        ("@every 1h30m", None),
        ("*/5 * *", "expected exactly 5 fields, found 3: [*/5 * *]"),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("0 0 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("*/-1 * * * *", "negative number (-1) not allowed: -1"),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
        ("@every 5x", 'failed to parse duration @every 5x: time: unknown unit "x" in duration "5x"'),
        ("CRON_TZ=UTC", "invalid schedule format: runtime error: slice bounds out of range [:-1]"),
    ],
)
def test_schedule_parsed_as_robfig_cron(schedule: str, error: str | None) -> None:
    assert schedule_error(schedule) == error


async def test_bad_schedule_and_time_zone_are_refused_with_the_servers_words(
    http: httpx2.AsyncClient,
) -> None:
    schedule = "TZ=UTC 61 * * * *"
    r = await http.post(PATH, json=cronjob("bad", schedule=schedule, timeZone="Mars/Olympus"))
    assert r.status_code == 422
    assert [c["message"] for c in r.json()["details"]["causes"]] == [
        f'Invalid value: "{schedule}": end of range (61) above maximum (59): 61',
        f'Invalid value: "{schedule}": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
        'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
    ]


async def test_an_unchanged_time_zone_is_not_checked_again_on_update(http: httpx2.AsyncClient) -> None:
    assert (await http.post(PATH, json=cronjob("ok", timeZone="Europe/Berlin"))).status_code == 201
    r = await http.patch(
        f"{PATH}/ok",
        json={"spec": {"schedule": "@hourly"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200, r.text
    assert (await http.post(PATH, json=cronjob("n" * 53))).json()["details"]["causes"][0]["message"] == (
        f'Invalid value: "{"n" * 53}": must be no more than 52 characters'
    )
