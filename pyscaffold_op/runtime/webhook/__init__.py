"""Admission and conversion webhooks served by the runtime (controller-runtime's pkg/webhook).

from pyscaffold_op.runtime.webhook import webhook_managed_by
webhook_managed_by(mgr).for_(CronJob).with_defaulter(CronJobDefaulter()).with_validator(
    CronJobValidator()).complete()
"""

from pyscaffold_op.runtime.webhook.admission import (
    Admission,
    AdmissionRequest,
    AdmissionResponse,
    Defaulter,
    Validator,
    admission_request,
    defaulting_handler,
    validating_handler,
)
from pyscaffold_op.runtime.webhook.builder import (
    WebhookBuilder,
    mutate_path,
    validate_path,
    webhook_managed_by,
)
from pyscaffold_op.runtime.webhook.conversion import Conversion, Hub
from pyscaffold_op.runtime.webhook.errors import Denied, FieldError, ValidationError
from pyscaffold_op.runtime.webhook.localcerts import write_local_certs
from pyscaffold_op.runtime.webhook.server import WebhookServer

__all__ = [
    "Admission",
    "AdmissionRequest",
    "AdmissionResponse",
    "Conversion",
    "Defaulter",
    "Denied",
    "FieldError",
    "Hub",
    "ValidationError",
    "Validator",
    "WebhookBuilder",
    "WebhookServer",
    "admission_request",
    "defaulting_handler",
    "mutate_path",
    "validate_path",
    "validating_handler",
    "webhook_managed_by",
    "write_local_certs",
]
