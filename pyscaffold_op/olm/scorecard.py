"""`pyop scorecard`: operator-sdk scorecard's basic and OLM suites, with the examples created in pyop's
API server emulator instead of test Pods in a cluster.

Tests (the names of `scorecard-test`'s entrypoints, read from the bundle's tests/scorecard/config.yaml):

| test | passes when |
| --- | --- |
| basic-check-spec | every alm-examples object has a non-empty spec, and the API server (the emulator, with the bundle's CRDs installed) accepts it |
| olm-bundle-validation | `pyop bundle validate` (the default suite) finds no error |
| olm-crds-have-validation | every spec and status field of every example is in its CRD version's schema |
| olm-crds-have-resources | every owned CRD lists `resources` |
| olm-spec-descriptors | every spec field of every example has a spec descriptor |
| olm-status-descriptors | an example with a status has status descriptors (none: a suggestion) |

Results are scorecard's `v1alpha3` `TestStatus`es; `format_results` writes them as text, JSON (a
`TestList`) or xunit.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from pyscaffold_op.olm import validate as v

API_VERSION = "scorecard.operatorframework.io/v1alpha3"
IMAGE = "quay.io/operator-framework/scorecard-test:v1.39.1"
BASIC = ["basic-check-spec"]
OLM = ["olm-bundle-validation", "olm-crds-have-validation", "olm-crds-have-resources", "olm-spec-descriptors", "olm-status-descriptors"]  # fmt: skip


def default_config() -> dict[str, Any]:
    tests = [
        {
            "entrypoint": ["scorecard-test", name],
            "image": IMAGE,
            "labels": {"suite": "basic" if name in BASIC else "olm", "test": f"{name}-test"},
        }
        for name in [*BASIC, *OLM]
    ]
    return {
        "apiVersion": API_VERSION,
        "kind": "Configuration",
        "metadata": {"name": "config"},
        "stages": [{"parallel": True, "tests": tests}],
    }


class Result:
    def __init__(self, name: str) -> None:
        self.name = name
        self.state = "pass"
        self.errors: list[str] = []
        self.suggestions: list[str] = []
        self.log = ""

    def fail(self, error: str | None = None, suggestion: str | None = None) -> None:
        self.state = "fail"
        if error:
            self.errors.append(error)
        if suggestion:
            self.suggestions.append(suggestion)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "log": self.log, "state": self.state}
        if self.errors:
            out["errors"] = self.errors
        if self.suggestions:
            out["suggestions"] = self.suggestions
        return out


class Context:
    def __init__(self, bundle_dir: Path) -> None:
        self.root = bundle_dir
        self.load_report = v.Report()
        self.bundle = v.load(bundle_dir, self.load_report)
        self.csv = self.bundle.csv or {}
        self._created: dict[str, str] | None = None

    def examples(self) -> list[dict[str, Any]]:
        return v.examples(self.csv)

    def owned(self, kind: str) -> dict[str, Any] | None:
        for owned in ((self.csv.get("spec") or {}).get("customresourcedefinitions") or {}).get("owned") or []:
            if owned.get("kind") == kind:
                return owned
        return None

    def created(self) -> dict[str, str]:
        """Each example created in the emulator: name -> "" when accepted, else the server's answer."""
        if self._created is None:
            self._created = create_in_emulator(self.bundle.crds, self.examples())
        return self._created


def _crd_for(
    crds: list[dict[str, Any]], example: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    group, _, version = str(example.get("apiVersion", "")).rpartition("/")
    for crd in crds:
        spec = crd.get("spec") or {}
        if spec.get("group") != group or (spec.get("names") or {}).get("kind") != example.get("kind"):
            continue
        for ver in spec.get("versions") or []:
            if str(ver.get("name", "")).lower() == version.lower():
                return crd, ver
    return None


def create_in_emulator(crds: list[dict[str, Any]], examples: list[dict[str, Any]]) -> dict[str, str]:
    """Create every example in a fresh emulator holding the bundle's CRDs; the API server's refusal
    (status and message) per example, "" for those accepted and read back."""
    import tempfile

    from pyscaffold_op import yamlio
    from pyscaffold_op.envtest import Environment

    answers: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for index, crd in enumerate(crds):
            path = Path(tmp) / f"crd{index}.yaml"
            path.write_text(yamlio.dump(crd), encoding="utf-8")
            paths.append(path)
        env = Environment(crd_paths=paths).start_in_thread()
        try:
            for example in examples:
                name = str((example.get("metadata") or {}).get("name", ""))
                found = _crd_for(crds, example)
                if found is None:
                    answers[name] = (
                        f"no CRD in the bundle serves {example.get('apiVersion')} {example.get('kind')}"
                    )
                    continue
                crd, _ = found
                spec = crd.get("spec") or {}
                plural = (spec.get("names") or {}).get("plural")
                where = "namespaces/default/" if spec.get("scope", "Namespaced") == "Namespaced" else ""
                url = f"{env.url}/apis/{example['apiVersion']}/{where}{plural}"
                answers[name] = _post(url, env.token, example)
        finally:
            env.stop()
    return answers


def _post(url: str, token: str, body: dict[str, Any]) -> str:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            return ""
    except urllib.error.HTTPError as err:
        try:
            message = json.loads(err.read()).get("message", "")
        except ValueError:
            message = ""
        return f"{err.code}: {message}".strip()


# ----------------------------------------------------------------------------------------- tests


def basic_check_spec(ctx: Context) -> Result:
    r = Result("basic-check-spec")
    try:
        crs = ctx.examples()
    except ValueError as err:
        r.state = "error"
        r.errors.append(f"alm-examples: {err}")
        return r
    r.log = f"Loaded {len(crs)} Custom Resources from alm-examples\n"
    created = ctx.created()
    for cr in crs:
        name = str((cr.get("metadata") or {}).get("name", ""))
        if not cr.get("spec"):
            r.fail(f"spec missing from [{name}]", "Add a 'spec' field to your Custom Resource")
        elif created.get(name):
            r.fail(f"the API server refused [{name}]: {created[name]}")
        else:
            r.log += f"created {cr.get('kind')} {name} in the emulator\n"
    return r


def bundle_validation(ctx: Context) -> Result:
    r = Result("olm-bundle-validation")
    report = v.validate_bundle(ctx.root)
    for finding in report.findings:
        if finding.level == "error":
            r.fail(f"[{finding.rule}] {finding.message}")
        else:
            r.suggestions.append(f"[{finding.rule}] {finding.message}")
    return r


def crds_have_validation(ctx: Context) -> Result:
    r = Result("olm-crds-have-validation")
    crs = ctx.examples()
    r.log = f"Loaded {len(crs)} Custom Resources from alm-examples\n"
    for cr in crs:
        found = _crd_for(ctx.bundle.crds, cr)
        if found is None:
            continue
        _, version = found
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if not schema:
            r.suggestions.append(f"Add CRD validation for {cr.get('kind')}/{version.get('name')}")
            continue
        for block in ("spec", "status"):
            props = ((schema.get("properties") or {}).get(block) or {}).get("properties") or {}
            for key in cr.get(block) or {}:
                if key not in props:
                    r.fail(
                        suggestion=f"Add CRD validation for {block} field `{key}` in {cr.get('kind')}/{version.get('name')}"
                    )
    return r


def crds_have_resources(ctx: Context) -> Result:
    r = Result("olm-crds-have-resources")
    r.log = f"Loaded ClusterServiceVersion: {(ctx.csv.get('metadata') or {}).get('name')}\n"
    for owned in ((ctx.csv.get("spec") or {}).get("customresourcedefinitions") or {}).get("owned") or []:
        if not owned.get("resources"):
            r.fail("Owned CRDs do not have resources specified")
            break
    return r


def spec_descriptors(ctx: Context) -> Result:
    r = Result("olm-spec-descriptors")
    for cr in ctx.examples():
        name = str((cr.get("metadata") or {}).get("name", ""))
        if cr.get("spec") is None:
            r.fail()
            continue
        owned = ctx.owned(str(cr.get("kind")))
        if owned is None:
            r.fail(
                f"Failed to find an owned CRD for CR {name} with GVK {cr.get('apiVersion')}, Kind={cr.get('kind')}"
            )
            continue
        paths = {d.get("path") for d in owned.get("specDescriptors") or []}
        for key in cr["spec"]:
            if key not in paths:
                r.fail(f"{key} does not have a spec descriptor", f"Add a spec descriptor for {key}")
    return r


def status_descriptors(ctx: Context) -> Result:
    r = Result("olm-status-descriptors")
    for cr in ctx.examples():
        name = str((cr.get("metadata") or {}).get("name", ""))
        owned = ctx.owned(str(cr.get("kind")))
        if owned is None:
            r.fail(
                f"Failed to find an owned CRD for CR {name} with GVK {cr.get('apiVersion')}, Kind={cr.get('kind')}"
            )
            continue
        has_status = bool(cr.get("status"))
        if not has_status:
            r.suggestions.append(
                f"{owned.get('name')} does not have status spec. Note that all objects that represent a physical "
                "resource whose state may vary from the user's desired intent SHOULD have a spec and a status."
            )
        elif not owned.get("statusDescriptors"):
            r.fail(
                f"{owned.get('name')} does not have a status descriptor",
                f"add status descriptor for the crd {owned.get('name')}",
            )
    return r


TESTS: dict[str, Callable[[Context], Result]] = {
    "basic-check-spec": basic_check_spec,
    "olm-bundle-validation": bundle_validation,
    "olm-crds-have-validation": crds_have_validation,
    "olm-crds-have-resources": crds_have_resources,
    "olm-spec-descriptors": spec_descriptors,
    "olm-status-descriptors": status_descriptors,
}


def run_scorecard(
    bundle_dir: Path, *, selector: str | None = None, config: Path | None = None
) -> list[dict[str, Any]]:
    """The `Test` objects (spec and status) of every configured test the selector picks."""
    import yaml

    from pyscaffold_op.apimachinery import labels
    from pyscaffold_op.errors import ValidationError

    path = config or bundle_dir / "tests" / "scorecard" / "config.yaml"
    conf = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else default_config()
    try:
        chosen = labels.parse(selector or "")
    except labels.SelectorError as err:
        raise ValidationError(f"--selector {selector!r}: {err}") from None
    ctx = Context(bundle_dir)
    out = []
    for stage in conf.get("stages") or []:
        for test in stage.get("tests") or []:
            if not chosen.matches(test.get("labels") or {}):
                continue
            entry = test.get("entrypoint") or []
            name = entry[-1] if entry else ""
            fn = TESTS.get(name)
            if fn is None:
                result = Result(name)
                result.state = "error"
                result.errors.append(
                    f"unknown test {name!r} (pyop runs scorecard-test's basic and OLM suites: {', '.join(TESTS)})"
                )
            elif ctx.csv == {} and name != "olm-bundle-validation":
                result = Result(name)
                result.state = "error"
                result.errors += [str(f) for f in ctx.load_report.errors]
            else:
                result = fn(ctx)
            out.append(
                {
                    "kind": "Test",
                    "apiVersion": API_VERSION,
                    "spec": {
                        "image": test.get("image", IMAGE),
                        "entrypoint": entry,
                        "labels": test.get("labels") or {},
                    },
                    "status": {"results": [result.as_dict()]},
                }
            )
    return out


def format_results(tests: list[dict[str, Any]], output: str) -> str:
    if output == "json":
        return json.dumps({"apiVersion": API_VERSION, "kind": "TestList", "items": tests}, indent=2) + "\n"
    if output == "xunit":
        return _xunit(tests)
    lines = []
    for test in tests:
        spec = test["spec"]
        lines.append("-" * 80)
        lines.append(f"Image:      {spec['image']}")
        lines.append(f"Entrypoint: [{' '.join(spec['entrypoint'])}]")
        lines.append("Labels:")
        lines += [f'\t"{k}":"{val}"' for k, val in sorted(spec["labels"].items())]
        lines.append("Results:")
        for r in test["status"]["results"]:
            lines.append(f"\tName: {r['name']}")
            lines.append(f"\tState: {r['state']}")
            if r.get("suggestions"):
                lines.append("\tSuggestions:")
                lines += [f"\t\t{s}" for s in r["suggestions"]]
            if r.get("errors"):
                lines.append("\tErrors:")
                lines += [f"\t\t{e}" for e in r["errors"]]
            if r.get("log"):
                lines.append("\tLog:")
                lines += [f"\t\t{line}" for line in r["log"].rstrip("\n").split("\n")]
            lines.append("")
    return "\n".join(lines) + "\n"


def _xunit(tests: list[dict[str, Any]]) -> str:
    out = ['<?xml version="1.0" encoding="UTF-8"?>', '<testsuites name="scorecard">']
    for test in tests:
        results = test["status"]["results"]
        failures = sum(r["state"] == "fail" for r in results)
        errors = sum(r["state"] == "error" for r in results)
        suite = test["spec"]["labels"].get("test", results[0]["name"] if results else "")
        out.append(
            f'  <testsuite name={quoteattr(suite)} tests="{len(results)}" failures="{failures}" errors="{errors}">'
        )
        for r in results:
            out.append(f"    <testcase name={quoteattr(r['name'])}>")
            text = escape("\n".join(r.get("errors") or []))
            if r["state"] == "fail":
                out.append(
                    f"      <failure message={quoteattr('; '.join(r.get('errors') or ['failed']))}>{text}</failure>"
                )
            elif r["state"] == "error":
                out.append(
                    f"      <error message={quoteattr('; '.join(r.get('errors') or ['error']))}>{text}</error>"
                )
            if r.get("log"):
                out.append(f"      <system-out>{escape(r['log'])}</system-out>")
            out.append("    </testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"
