"""kubebuilder's CronJob tutorial and its multiversion sequel, ported: `testdata/cronjob/`.

The Go project is kubebuilder's docs/book/src/cronjob-tutorial/testdata/project (with
docs/book/src/multiversion-tutorial/testdata/project's v2); this is the same project made with pyop's
commands (`scaffold_cronjob_example`), then finished by hand in the files of `HAND_FINISHED`. Every other
file is scaffold output, and `GENERATED` is what `make manifests` derives; `tests/test_golden_cronjob.py`
fails when either drifts, `make testdata` (`python -m pyscaffold_op.dev.regen`) rebuilds it.
"""

from __future__ import annotations

from pathlib import Path

from pyscaffold_op.dev.golden import FinishedExample
from pyscaffold_op.dev.regen import REPO_ROOT
from pyscaffold_op.scaffold.api import create_api
from pyscaffold_op.scaffold.init import InitOptions, init_project
from pyscaffold_op.scaffold.inputs import ApiOptions, WebhookOptions
from pyscaffold_op.scaffold.webhook import create_webhook

CRONJOB_DIR = REPO_ROOT / "testdata" / "cronjob"

HAND_FINISHED: tuple[str, ...] = (
    "config/samples/batch_v1_cronjob.yaml",
    "config/samples/batch_v2_cronjob.yaml",
    "src/project/cron.py",
    "src/project/api/v1/cronjob_types.py",
    "src/project/api/v2/cronjob_types.py",
    "src/project/api/v2/cronjob_conversion.py",
    "src/project/controllers/cronjob_controller.py",
    "src/project/webhooks/v1/cronjob_webhook.py",
    "src/project/webhooks/v2/cronjob_webhook.py",
    "tests/test_cronjob_controller.py",
    "tests/test_cronjob_conversion.py",
    "tests/test_cronjob_webhook.py",
    "tests/test_cronjob_v2_webhook.py",
)
"""What a person wrote: the types, the controller, the webhooks, the conversion, the cron parser, the
samples and the tests; everything else stays exactly what pyop writes."""

GENERATED: tuple[str, ...] = (
    "config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml",
    "config/rbac/role.yaml",
)
"""Files `make manifests` derives from the hand-finished types and markers."""


def scaffold_cronjob_example(dest: Path) -> None:
    """The tutorial's pyop commands, in-process (as `--no-make`: `FinishedExample.build` generates):

        pyop init --domain tutorial.kubebuilder.io --repo tutorial.kubebuilder.io/project \\
            --project-name project --owner "The Kubernetes authors"
        pyop create api --group batch --version v1 --kind CronJob --resource --controller
        pyop create api --group batch --version v2 --kind CronJob --resource --controller=false
        pyop create webhook --group batch --version v1 --kind CronJob --defaulting \\
            --programmatic-validation --conversion --spoke v2
        pyop create webhook --group batch --version v2 --kind CronJob --defaulting --programmatic-validation
    """
    dest.mkdir(parents=True, exist_ok=True)
    init_project(
        InitOptions(
            domain="tutorial.kubebuilder.io",
            repo="tutorial.kubebuilder.io/project",
            project_name="project",
            owner="The Kubernetes authors",
        ),
        dest,
    )
    create_api(ApiOptions(group="batch", version="v1", kind="CronJob"), dest)
    create_api(ApiOptions(group="batch", version="v2", kind="CronJob", controller=False), dest)
    for version, spokes in (("v1", ("v2",)), ("v2", ())):
        webhook = WebhookOptions(
            group="batch", version=version, kind="CronJob", defaulting=True, validation=True,
            conversion=bool(spokes), spokes=spokes,
        )  # fmt: skip
        create_webhook(webhook, dest)


CRONJOB = FinishedExample(CRONJOB_DIR, scaffold_cronjob_example, HAND_FINISHED, GENERATED)
