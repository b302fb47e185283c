"""Watch events as handlers and predicates see them (controller-runtime's pkg/event)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class CreateEvent:
    object: Any
    is_in_initial_list: bool = False


@dataclass(slots=True)
class UpdateEvent:
    object_old: Any
    object_new: Any


@dataclass(slots=True)
class DeleteEvent:
    object: Any
    delete_state_unknown: bool = False  # the delete was missed while disconnected; seen on relist


@dataclass(slots=True)
class GenericEvent:
    """An event from outside the cluster (a `Channel` source)."""

    object: Any
