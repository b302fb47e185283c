"""The Examples section of every `pyop ... --help`, in kubebuilder's style: a comment, then the command.

Kept in one table keyed by command path so a new command without examples fails a test
(tests/scaffold/test_help.py walks the whole command tree).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EXAMPLES: Mapping[str, str] = {
    "": """
  # Start a project, add an API and its controller, generate the CRD and RBAC
  pyop init --domain viper.run --repo github.com/AbyssViper/programming-kubernetes
  pyop create api --group programming-kubernetes --version v1alpha1 --kind At
  make manifests test
""",
    "init": """
  # Initialize a project for API groups under viper.run; the package is programming_kubernetes
  pyop init --domain viper.run --repo github.com/AbyssViper/programming-kubernetes

  # Choose the project name and the copyright owner of the license headers
  pyop init --domain example.org --repo github.com/example/guestbook-operator \\
      --project-name guestbook --owner "The Guestbook Authors"

  # A project whose APIs span several groups, and a manager limited to its own namespace
  pyop init --domain example.org --repo github.com/example/platform --multigroup --namespaced
""",
    "upgrade": """
  # See what the current init template would change (a diff), then apply it, keeping your edits
  pyop upgrade --dry-run
  pyop upgrade

  # A project made by an earlier release upgrades as it is (pyop ships every earlier template);
  # one made by a pyop this release does not know (a fork, a branch): give the templates it used
  pyop upgrade --base-templates ~/src/pyop-fork/templates/init
""",
    "edit": """
  # Make the manager namespace-scoped: Role/RoleBinding, WATCH_NAMESPACE, RBAC markers with namespace=
  pyop edit --namespaced

  # Later APIs under api/<group>/<version>/ (existing ones stay), in kubebuilder's flag form
  pyop edit --multigroup=true

  # Another copyright owner and no license header; write the merge even where your edits conflict
  pyop edit --owner "The Guestbook Authors" --license none --force

  # A Helm chart in dist/chart from config/default (the same as pyop create helm-chart)
  pyop edit --plugins helm
""",
    "delete": """
  # Remove an API and its controller: exactly what `pyop create api` added
  pyop delete api --group batch --version v1 --kind CronJob

  # Remove a kind's webhooks: exactly what `pyop create webhook` added
  pyop delete webhook --group batch --version v1 --kind CronJob
""",
    "delete webhook": """
  # Remove every webhook of the kind, then `make manifests`
  pyop delete webhook --group batch --version v1 --kind CronJob

  # Only the defaulting webhook; the validating one stays
  pyop delete webhook --group batch --version v1 --kind CronJob --defaulting

  # Also remove files you edited since, and do not run make
  pyop delete webhook --group batch --version v1 --kind CronJob --conversion --force --make=false
""",
    "delete api": """
  # Remove what `pyop create api` added for the kind, then `make manifests`
  pyop delete api --group batch --version v1 --kind CronJob

  # Also remove files you edited since create api wrote them, and do not run make
  pyop delete api --group batch --version v1 --kind CronJob --force --make=false

  # A controller for a built-in kind
  pyop delete api --group apps --version v1 --kind Deployment
""",
    "create": """
  # Scaffold the API types and the controller of a kind
  pyop create api --group batch --version v1 --kind CronJob
""",
    "create api": """
  # Types, sample, RBAC roles and controller of a namespaced kind, then `make manifests`
  pyop create api --group programming-kubernetes --version v1alpha1 --kind At

  # kubebuilder's flag forms work as written
  pyop create api --group batch --version v1 --kind CronJob --resource=true --controller=true

  # A cluster-scoped kind without a controller, and without running make
  pyop create api --group infra --version v1beta1 --kind Cluster --namespaced=false \\
      --controller=false --make=false

  # A second version of an existing kind (one controller per kind)
  pyop create api --group batch --version v2 --kind CronJob --controller=false

  # A controller for types that already exist
  pyop create api --group batch --version v1 --kind CronJob --resource=false --controller
""",
    "create webhook": """
  # A defaulting and a validating webhook for an API, then `make manifests` (config/webhook/manifests.yaml)
  pyop create webhook --group batch --version v1 --kind CronJob --defaulting --programmatic-validation

  # A conversion webhook: v1 is the hub, v2 (an existing API version) converts to and from it
  pyop create webhook --group batch --version v1 --kind CronJob --conversion --spoke v2

  # Own URL paths for the webhooks, and overwrite webhook files that exist
  pyop create webhook --group batch --version v1 --kind CronJob --defaulting \\
      --defaulting-path /default-cronjob --force
""",
    "create helm-chart": """
  # Regenerate dist/chart from config/default after `make manifests` (what `make helm` runs)
  make manifests && pyop create helm-chart

  # From kustomize output you built yourself, e.g. with the release image set
  kubectl kustomize config/default | pyop create helm-chart --manifests -

  # Also rewrite Chart.yaml, values.yaml, .helmignore and _helpers.tpl (your edits there are lost)
  pyop create helm-chart --force
""",
    "version": """
  # pyop's version, the Kubernetes release its models come from, Python and the platform
  pyop version
""",
    "completion": """
  # Complete pyop's commands and flags in bash (put the line in ~/.bashrc)
  source <(pyop completion bash)

  # zsh and fish: save the script as ~/.zfunc/_pyop (a folder on $fpath), ~/.config/fish/completions/pyop.fish
  pyop completion zsh
  pyop completion fish
""",
    "generate": """
  # Write the CRDs and role.yaml (what `make manifests` runs)
  pyop generate manifests
""",
    "generate crd": """
  # Write config/crd/bases/<group>_<plural>.yaml for every kind
  pyop generate crd

  # Fail if a CRD is out of date (for CI)
  pyop generate crd --check
""",
    "generate rbac": """
  # Write config/rbac/role.yaml from the +kubebuilder:rbac markers
  pyop generate rbac

  # For the project in another folder
  pyop generate rbac --root ../my-operator
""",
    "generate manifests": """
  # Write the CRDs and role.yaml
  pyop generate manifests

  # Check that they are up to date and config/samples validate against the CRDs (for CI)
  pyop generate manifests --check
""",
    "generate models": """
  # Pydantic models of cert-manager's Certificate, to watch or create them from a controller
  pyop generate models --from-crd certificates.yaml -o src/my_operator/thirdparty/certificate.py

  # A version other than the storage one
  pyop generate models --from-crd widgets.yaml --version v1beta1
""",
    "generate kustomize": """
  # Fill the CSV base in config/manifests/bases from the API types and their CSV markers
  pyop generate kustomize manifests
""",
    "generate kustomize manifests": """
  # Fill the CSV base (owned CRDs, descriptors); your edits to the base are kept
  pyop generate kustomize manifests

  # Fail if the base is out of date (for CI)
  pyop generate kustomize manifests --check
""",
    "generate bundle": """
  # The bundle of version 0.1.0 in the stable channel from config/manifests (what `make bundle` runs)
  pyop generate bundle --version 0.1.0 --channels stable --default-channel stable

  # From kustomize output you built yourself, e.g. with the release image set
  kubectl kustomize config/manifests | pyop generate bundle --manifests - --version 0.1.0
""",
    "bundle": """
  # Validate the bundle `make bundle` wrote
  pyop bundle validate ./bundle
""",
    "bundle validate": """
  # operator-sdk's default validators
  pyop bundle validate ./bundle

  # Also OperatorHub.io's requirements and the good practices
  pyop bundle validate ./bundle --select-optional suite=operatorframework

  # Only the good practices, as JSON
  pyop bundle validate ./bundle --select-optional name=good-practices -o json-alpha1
""",
    "scorecard": """
  # The basic and OLM suites on the bundle (examples created in pyop's emulator)
  pyop scorecard ./bundle

  # Only the OLM suite, as scorecard's v1alpha3 TestList JSON or as xunit for CI
  pyop scorecard ./bundle --selector suite=olm --output json
  pyop scorecard ./bundle --output xunit
""",
    "envtest": """
  # Serve an API server with the project's CRDs, then use it with kubectl and `make run`
  pyop envtest serve --crds config/crd/bases --kubeconfig-out /tmp/kubeconfig
""",
    "envtest serve": """
  # Serve the project's CRDs; kubectl and `make install run` talk to it
  pyop envtest serve --crds config/crd/bases --kubeconfig-out /tmp/kubeconfig &
  KUBECONFIG=/tmp/kubeconfig make install run

  # A fixed port, CRDs from two places, and no simulated kubelet
  pyop envtest serve --port 6443 --crds config/crd/bases --crds third_party/crds --no-kubelet

  # Call the webhooks of a manager started by `make run` (it writes its local CA into its cert path)
  pyop envtest serve --crds config/crd/bases --webhooks config/webhook/manifests.yaml \\
      --webhook-service system/webhook-service=https://127.0.0.1:9443 \\
      --webhook-ca /tmp/k8s-webhook-server/serving-certs/ca.crt

  # A cluster of real processes (kube-apiserver, controller-manager, scheduler, kwok's fake node)
  pyop envtest serve --cluster --assets /path/to/pyop/bin --crds config/crd/bases
""",
}


def epilog(path: str) -> str:
    """The Examples section for the command at `path`.

    click re-wraps every paragraph of an epilog unless its first line is `\\b`, so each gets one.
    """
    paragraphs = ["Examples:" + EXAMPLES[path].split("\n\n")[0], *EXAMPLES[path].split("\n\n")[1:]]
    return "\n\n".join("\b\n" + paragraph.strip("\n") for paragraph in paragraphs)


def attach(command: Any, path: str = "") -> None:
    """Set the Examples epilog of `command` and of every command below it (typer's click objects)."""
    if path in EXAMPLES:
        command.epilog = epilog(path)
    for name, sub in getattr(command, "commands", {}).items():
        attach(sub, f"{path} {name}".strip())
