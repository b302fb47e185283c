"""CronJob schedule and time zone validation (`validateCronJobSpec`): robfig/cron v3's parser errors
word for word, TZ in the schedule, `spec.timeZone` as an IANA name, the starting deadline and the
52-character name limit; on update, a schedule stored with TZ may keep it and an unchanged time zone
is not checked again."""

from __future__ import annotations

from typing import Any

from tests.conformance.harness import Scenario
from tests.conformance.scenarios.steps import at, patch, post, put, setup

PATH = "/apis/batch/v1/namespaces/{ns}/cronjobs"


def _cronjob(name: str = "cj", **spec: Any) -> dict[str, Any]:
    pod = {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}
    body: dict[str, Any] = {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": pod}}}}
    body.update(spec)
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


_VIEW = at("spec", "schedule")

# (case, schedule): one parser error each, the ones a user meets first
_BAD_SCHEDULES = [
    ("fields-too-few", "*/5 * *"),
    ("fields-too-many", "0 0 * * * *"),
    ("not-a-number", "x * * * *"),
    ("minute-above-maximum", "60 * * * *"),
    ("day-below-minimum", "0 0 0 * *"),
    ("range-reversed", "0 5-2 * * *"),
    ("step-zero", "*/0 * * * *"),
    ("step-negative", "*/-1 * * * *"),
    ("too-many-hyphens", "1-2-3 * * * *"),
    ("too-many-slashes", "1/2/3 * * * *"),
    ("bad-month-name", "0 0 1 foo *"),
    ("int-out-of-range", "99999999999999999999 * * * *"),
    ("unknown-descriptor", "@fortnightly"),
    ("every-bad-duration", "@every 5x"),
    ("tz-in-schedule", "TZ=UTC 0 0 * * *"),
    ("cron-tz-unknown-location", "CRON_TZ=Nowhere/Atall 0 0 * * *"),
    ("tz-without-space", "CRON_TZ=UTC"),
]

SCENARIOS: list[Scenario] = [
    Scenario(
        "cronjobs/schedules-valid",
        "cronjobs",
        [
            post(PATH, _cronjob(f"cj{i}", schedule=schedule), view=_VIEW)
            for i, schedule in enumerate(
                [
                    "0 0 * * *",
                    "*/15 9-17 * * MON-fri",
                    "0 0 1,15 jan,JUL ?",
                    "@hourly",
                    "@every 1h30m",
                    "0,, * * * *",
                ]
            )
        ],
    ),
    *(
        Scenario(
            f"cronjobs/schedule-{case}", "cronjobs", [post(PATH, _cronjob(schedule=schedule), messages=True)]
        )
        for case, schedule in _BAD_SCHEDULES
    ),
    Scenario("cronjobs/schedule-empty", "cronjobs", [post(PATH, _cronjob(schedule=""), messages=True)]),
    Scenario(
        "cronjobs/time-zones-valid",
        "cronjobs",
        [
            post(PATH, _cronjob(f"tz{i}", timeZone=tz), view=at("spec", "timeZone"))
            for i, tz in enumerate(["Europe/Berlin", "America/Argentina/Buenos_Aires", "UTC", "Etc/GMT+5"])
        ],
    ),
    *(
        Scenario(f"cronjobs/time-zone-{case}", "cronjobs", [post(PATH, _cronjob(timeZone=tz), messages=True)])
        for case, tz in [
            ("empty", ""),
            ("unknown", "Mars/Olympus"),
            ("bad-characters", "Europe/Ber lin"),
            ("component-too-long", "America/Abcdefghijklmnop"),
            ("leading-hyphen", "-Europe"),
            ("local", "Local"),
            ("local-lowercase", "local"),
            ("dot-dot-inside", "Europe/a..b"),
            ("a-directory", "America"),
            ("not-tzif-data", "zone.tab"),
        ]
    ),
    Scenario(
        "cronjobs/everything-wrong",
        "cronjobs",
        [
            post(
                PATH,
                _cronjob(
                    "c" * 53,
                    schedule="TZ=Mars/Olympus 61 * * *",
                    timeZone="Nowhere",
                    startingDeadlineSeconds=-1,
                ),
                messages=True,
            )
        ],
    ),
    Scenario(
        "cronjobs/update-schedule",
        "cronjobs",
        [
            setup(post(PATH, _cronjob())),
            patch(f"{PATH}/cj", {"spec": {"schedule": "0 25 * * *"}}, messages=True),
            patch(f"{PATH}/cj", {"spec": {"schedule": "TZ=UTC 0 0 * * *"}}, messages=True),
            patch(f"{PATH}/cj", {"spec": {"timeZone": "Mars/Olympus"}}, messages=True),
            patch(f"{PATH}/cj", {"spec": {"schedule": "@weekly", "timeZone": "Asia/Tokyo"}}, view=_VIEW),
        ],
    ),
    Scenario(
        "cronjobs/update-put-with-tz",
        "cronjobs",
        [
            setup(post(PATH, _cronjob("d" * 52))),  # 52 characters: the longest name create allows
            put(f"{PATH}/{'d' * 52}", _cronjob("d" * 52, schedule="CRON_TZ=UTC 0 0 * * *"), messages=True),
        ],
    ),
]
