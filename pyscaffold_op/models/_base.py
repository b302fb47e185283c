"""Bases of the generated built-in models: `KubeModel`/`KubeObject` with a cheaper build.

`defer_build` builds a model's validator on first use, so importing `core_v1` (hundreds of classes)
costs only class creation; `use_attribute_docstrings` is off because it reads the module's source;
the alias generator is KubeModel's, cached.
"""

from __future__ import annotations

import functools

from pydantic import ConfigDict
from pydantic.alias_generators import to_camel

from pyscaffold_op.apimachinery.resource import KubeModel, KubeObject

# the same aliases as KubeModel's; cached, since the models repeat a few hundred field names
_to_camel = functools.cache(to_camel)


class K8sModel(KubeModel):
    model_config = ConfigDict(defer_build=True, use_attribute_docstrings=False, alias_generator=_to_camel)


class K8sObject(KubeObject):
    model_config = ConfigDict(defer_build=True, use_attribute_docstrings=False, alias_generator=_to_camel)
