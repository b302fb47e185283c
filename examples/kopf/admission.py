"""kopf's examples/17-admission on pyop: a defaulter and a validator of KopfExample, served over HTTPS by
the manager's webhook server (`+kubebuilder:webhook` markers below: `make manifests` writes their
configurations). kopf's handler keyword arguments (`dryrun`, `headers`, `subresource`, `warnings`)
come from `admission_request()`; a warning is a returned string; `AdmissionError(code=555)` is
`Denied(message, code=555)`. kopf's `field=`/`value=`/`labels=` handler filters are `if`s here.

kopf's webhook servers for K3d, Minikube, ngrok tunnels are not ported: pyop serves webhooks as
kubebuilder does (cert-manager in a cluster, a local CA with `make run`: docs/webhooks.md).

    python examples/kopf/admission.py --kubeconfig ~/.kube/config
"""

from __future__ import annotations

import sys

from kopfexample import KopfExample

from pyscaffold_op.runtime import Manager, ManagerFlags, run_manager
from pyscaffold_op.runtime.webhook import Denied, WebhookServer, admission_request, webhook_managed_by


# +kubebuilder:webhook:path=/mutate-kopf-dev-v1-kopfexample,mutating=true,failurePolicy=fail,sideEffects=None,groups=kopf.dev,resources=kopfexamples,verbs=create;update,versions=v1,name=mkopfexample.kopf.dev,admissionReviewVersions=v1
class KopfExampleDefaulter:
    def default(self, kex: KopfExample) -> None:
        if (kex.metadata.labels or {}).get("somelabel") == "somevalue":  # kopf: labels={...}
            kex.spec.injected = 123


# +kubebuilder:webhook:path=/validate-kopf-dev-v1-kopfexample,mutating=false,failurePolicy=fail,sideEffects=None,groups=kopf.dev,resources=kopfexamples;kopfexamples/status,verbs=create;update,versions=v1,name=vkopfexample.kopf.dev,admissionReviewVersions=v1
class KopfExampleValidator:
    def validate_create(self, kex: KopfExample) -> list[str]:
        return self.validate(kex)

    def validate_update(self, old: KopfExample, kex: KopfExample) -> list[str]:
        return self.validate(kex)

    def validate_delete(self, kex: KopfExample) -> None: ...

    def validate(self, kex: KopfExample) -> list[str]:
        request = admission_request()
        user_agent = request.headers.get("User-Agent", "(unidentified)")
        warnings = [f"Accessing as user-agent: {user_agent}"]  # kopf's authhook
        field, status_field = kex.spec.field, kex.status.field if kex.status else None
        if not request.dry_run and field == "wrong":
            raise Denied("Meh! I don't like it. Change the field.")
        if field == "not-allowed":
            raise Denied("I'm too lazy anyway. Go away!", code=555)
        if request.sub_resource == "status" and status_field != field:
            raise Denied("status.field MUST be equal to spec.field!")
        if not request.sub_resource and status_field != field:
            warnings.append(f"Also update status.field to match spec.field: {field!r} != {status_field!r}")
        return warnings


def register(mgr_or_server: Manager | WebhookServer) -> None:
    webhook_managed_by(mgr_or_server).for_(KopfExample).with_defaulter(KopfExampleDefaulter()).with_validator(
        KopfExampleValidator()
    ).complete()


def setup(mgr: Manager, flags: ManagerFlags) -> None:
    mgr.webhook_server = WebhookServer(
        port=flags.webhook_port, cert_dir=flags.webhook_cert_path, generate_missing=True
    )
    register(mgr)


if __name__ == "__main__":
    sys.exit(run_manager(setup, prog="admission", leader_election_id="admission.kopf.dev"))
