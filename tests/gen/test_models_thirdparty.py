"""`pyop generate models` on a third-party-shaped CRD (a cert-manager-like Certificate, written here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import yaml

from pyscaffold_op.apimachinery import CustomResource
from pyscaffold_op.gen.crd import build_crd
from pyscaffold_op.gen.models import models_from_crd

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.certs.example.io
spec:
  group: certs.example.io
  names:
    kind: Certificate
    listKind: CertificateList
    plural: certificates
    shortNames: [cert, certs]
    singular: certificate
    categories: [certs]
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - jsonPath: .spec.secretName
      name: Secret
      type: string
    schema:
      openAPIV3Schema:
        description: A Certificate resource requests a signed certificate.
        type: object
        required: [spec]
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [issuerRef, secretName]
            properties:
              secretName:
                description: Name of the Secret resource that will be written.
                type: string
              dnsNames:
                type: array
                items: {type: string}
              duration:
                type: string
              usages:
                type: array
                items:
                  type: string
                  enum: [signing, digital signature, server auth, client auth]
              privateKey:
                type: object
                properties:
                  algorithm:
                    type: string
                    enum: [RSA, ECDSA, Ed25519]
                  size:
                    type: integer
                  rotationPolicy:
                    type: string
                    enum: [Never, Always]
              issuerRef:
                type: object
                required: [name]
                properties:
                  name: {type: string}
                  kind: {type: string}
                  group: {type: string}
              keystores:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              renewBefore:
                anyOf:
                - type: integer
                - type: string
                x-kubernetes-int-or-string: true
          status:
            type: object
            properties:
              notAfter:
                type: string
                format: date-time
              revision:
                type: integer
              conditions:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [type]
                items:
                  type: object
                  required: [status, type]
                  properties:
                    type: {type: string}
                    status:
                      type: string
                      enum: ["True", "False", "Unknown"]
                    message: {type: string}
                    lastTransitionTime: {type: string, format: date-time}
"""


def test_third_party_crd_gives_typed_models(tmp_path: Path) -> None:
    crd = yaml.safe_load(CRD)
    code = models_from_crd(crd)
    assert "# +kubebuilder:resource:shortName=cert;certs,categories=certs" in code
    assert "# +kubebuilder:subresource:status" in code
    path = tmp_path / "certificates.py"
    path.write_text(code)
    name = "_pyop_thirdparty_certificates"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    saved = dict(CustomResource.registry)
    try:
        spec.loader.exec_module(module)
        certificate = module.Certificate.model_validate(
            {
                "apiVersion": "certs.example.io/v1",
                "kind": "Certificate",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {
                    "secretName": "web-tls",
                    "dnsNames": ["example.com"],
                    "usages": ["server auth"],
                    "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
                    "renewBefore": "360h",
                    "keystores": {"jks": {"create": True}},
                },
                "status": {"conditions": [{"type": "Ready", "status": "True"}]},
            }
        )
        assert certificate.spec.issuer_ref.name == "letsencrypt"
        assert module.Certificate.gvk.version == "v1" and module.Certificate.plural == "certificates"
        regenerated = build_crd([module.Certificate])
    finally:
        sys.modules.pop(name, None)
        CustomResource.registry.clear()
        CustomResource.registry.update(saved)
    original = crd["spec"]["versions"][0]
    again = regenerated["spec"]["versions"][0]
    assert again["additionalPrinterColumns"] == original["additionalPrinterColumns"]
    assert regenerated["spec"]["names"] == crd["spec"]["names"] | {"shortNames": ["cert", "certs"]}
    schema = again["schema"]["openAPIV3Schema"]["properties"]
    source = original["schema"]["openAPIV3Schema"]["properties"]
    assert schema["spec"] == source["spec"]
    assert schema["status"] == source["status"]
