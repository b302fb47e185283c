"""Bases of the generated built-in models: `KubeModel`/`KubeObject` with a cheaper build.

`defer_build` builds a model's validator on first use, so importing `core_v1` (hundreds of classes)
costs only class creation; `use_attribute_docstrings` is off because it reads the module's source.
"""

from __future__ import annotations

from pydantic import ConfigDict

from pyscaffold_op.apimachinery.resource import KubeModel, KubeObject


class K8sModel(KubeModel):
    model_config = ConfigDict(defer_build=True, use_attribute_docstrings=False)


class K8sObject(KubeObject):
    model_config = ConfigDict(defer_build=True, use_attribute_docstrings=False)
