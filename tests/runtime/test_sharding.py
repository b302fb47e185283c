"""Sharded controllers (runtime/sharding): the assignment's stability, and replicas in one process."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

import pytest

from pyscaffold_op.apimachinery.resource import OwnerReference
from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.coordination_v1 import Lease
from pyscaffold_op.runtime import Client, Request, ShardingOptions
from pyscaffold_op.runtime.sharding.assign import Assignment, owner_of, view_digest
from pyscaffold_op.runtime.sharding.ownerscope import OwnerScopes, builtin_scope
from pyscaffold_op.runtime.sharding.shards import GROUP_LABEL, lease_name
from pyscaffold_op.testing import eventually

from .conftest import make_manager
from .widgets import Gadget, Widget, widget

KEYS = [f"ns-{i % 7}/obj-{i}" for i in range(20_000)]


def owners(members: list[str]) -> dict[str, str | None]:
    view = Assignment(members)
    return {k: view.owner(k) for k in KEYS}


# -- the assignment -------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
def test_adding_a_member_moves_about_one_in_n_plus_one_keys_all_to_it(n: int) -> None:
    before = owners([f"r{i}" for i in range(n)])
    after = owners([f"r{i}" for i in range(n + 1)])
    moved = [k for k in KEYS if before[k] != after[k]]
    assert all(after[k] == f"r{n}" for k in moved)  # only to the newcomer, never between old members
    share = len(moved) / len(KEYS)
    assert abs(share - 1 / (n + 1)) < 0.02, share


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_removing_a_member_moves_only_its_keys(n: int) -> None:
    members = [f"r{i}" for i in range(n)]
    before = owners(members)
    gone = members[n // 2]
    after = owners([m for m in members if m != gone])
    moved = {k for k in KEYS if before[k] != after[k]}
    assert moved == {k for k in KEYS if before[k] == gone}


def test_keys_spread_evenly() -> None:
    counts = Counter(owners([f"pod-{i}" for i in range(4)]).values())
    assert all(abs(c / len(KEYS) - 0.25) < 0.02 for c in counts.values()), counts


def test_every_replica_agrees_whatever_the_order() -> None:
    members = ["b", "a", "c"]
    shuffled = members[:]
    random.Random(1).shuffle(shuffled)
    assert Assignment(members) == Assignment(shuffled)
    assert view_digest(members) == view_digest(shuffled)
    assert all(owner_of(k, members) == owner_of(k, shuffled) for k in KEYS[:500])
    assert owner_of("x", []) is None


def test_options_and_names() -> None:
    with pytest.raises(ValueError, match="lease_duration > renew_deadline"):
        ShardingOptions(lease_duration=5, renew_deadline=6)
    with pytest.raises(ValueError, match="object"):
        ShardingOptions(by="uid")  # type: ignore[arg-type]
    assert lease_name("Op.Example.com", "Host_1/abc") == "op.example.com-shard-host-1-abc"


def test_owner_scope_from_the_sharded_controllers_then_the_builtin_kinds() -> None:
    scopes = OwnerScopes(lambda: [("test.pyop.io", "Gadget", False), ("", "Node", True)])
    assert scopes.namespaced("test.pyop.io", "Gadget") is False
    assert scopes.namespaced("", "Node") is True  # a sharded controller's kind wins
    assert scopes.namespaced("", "Namespace") is False  # built-in, cluster-scoped
    assert scopes.namespaced("apps", "Deployment") is True
    assert scopes.namespaced("example.com", "Unknown") is True  # the usual case
    assert builtin_scope("rbac.authorization.k8s.io", "ClusterRole") is False
    assert builtin_scope("example.com", "Unknown") is None


# -- replicas in one process, on the emulator ----------------------------------------------------------


class Log:
    """Start/end of every reconcile per key; `overlaps()` finds a key started while it ran elsewhere.
    The managers share one event loop, so the order of the entries is the order things happened."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str, str]] = []  # (replica, "start"|"end", key)
        self.done: dict[str, set[str]] = {}

    def reconciler(self, replica: str, delay: float = 0.0) -> Any:
        async def reconcile(req: Request) -> None:
            key = f"{req.namespace}/{req.name}"
            self.entries.append((replica, "start", key))
            try:
                await asyncio.sleep(delay)
            finally:
                self.entries.append((replica, "end", key))
                self.done.setdefault(key, set()).add(replica)

        return reconcile

    def overlaps(self) -> list[str]:
        running: dict[str, str] = {}
        bad = []
        for replica, what, key in self.entries:
            if what == "start":
                if key in running and running[key] != replica:
                    bad.append(f"{key}: {replica} started while {running[key]} ran it")
                running[key] = replica
            elif running.get(key) == replica:
                del running[key]
        return bad


def sharded(env: Environment, identity: str, log: Log, delay: float = 0.0) -> Any:
    mgr = make_manager(
        env,
        sharding=ShardingOptions(
            name="widgets",
            identity=identity,
            lease_duration=2.0,
            renew_deadline=1.5,
            retry_period=0.1,
        ),
    )
    mgr.builder().for_(Widget).complete(log.reconciler(identity, delay))
    return mgr


async def test_two_replicas_split_the_keys_and_one_takes_all_when_the_other_leaves(
    env: Environment, api: Client
) -> None:
    log = Log()
    names = [f"w{i}" for i in range(24)]
    for name in names:
        await api.create(widget(name))
    a, b = sharded(env, "a", log, delay=0.01), sharded(env, "b", log, delay=0.01)
    async with a.running(), b.running():
        await eventually(lambda: all(f"default/{n}" in log.done for n in names), timeout=20)
        assert a.sharding is not None and b.sharding is not None
        await eventually(lambda: a.sharding.complete and b.sharding.complete, timeout=10)
        by = Counter(r for r, what, _k in log.entries if what == "start")
        assert by["a"] and by["b"], by
        leases = await api.list(Lease, namespace="default", labels={GROUP_LABEL: "widgets"})
        assert sorted(str(lease.spec and lease.spec.holder_identity) for lease in leases) == ["a", "b"]
        # the controllers run without leader election, on both replicas
        assert not any(c.need_leader_election for c in a.controllers + b.controllers)
        # b leaves gracefully: its lease goes, a takes every key at once
        b.stop()
        await eventually(lambda: a.sharding.complete and a.sharding.members == ("a",), timeout=10)
        log.done.clear()
        for name in names:
            w = await api.get(Widget, name, namespace="default")
            w.spec.size = 5
            await api.update(w)
        await eventually(lambda: all(log.done.get(f"default/{n}") == {"a"} for n in names), timeout=20)
    assert log.overlaps() == []


async def test_scale_up_moves_keys_without_overlap(env: Environment, api: Client) -> None:
    """Three replicas join one after another while every key keeps being reconciled (each reconcile
    requeues itself): no key ever runs on two replicas at once."""
    log = Log()
    names = [f"s{i}" for i in range(16)]
    for name in names:
        await api.create(widget(name))

    def requeuing(identity: str) -> Any:
        base = log.reconciler(identity, delay=0.02)

        async def reconcile(req: Request) -> Any:
            from pyscaffold_op.runtime import Result

            await base(req)
            return Result(requeue_after=0.01)

        mgr = make_manager(
            env,
            sharding=ShardingOptions(
                name="w", identity=identity, lease_duration=2.0, renew_deadline=1.5, retry_period=0.1
            ),
        )
        mgr.builder().for_(Widget).complete(reconcile)
        return mgr

    a, b, c = requeuing("a"), requeuing("b"), requeuing("c")
    async with a.running():
        await eventually(lambda: a.sharding.complete, timeout=10)
        async with b.running():
            await eventually(lambda: a.sharding.complete and b.sharding.members == ("a", "b"), timeout=10)
            async with c.running():
                await eventually(
                    lambda: all(m.sharding.complete and len(m.sharding.members) == 3 for m in (a, b, c)),
                    timeout=10,
                )
                log.done.clear()
                await eventually(lambda: len(log.done) == len(names), timeout=10)
                assert {r for rs in log.done.values() for r in rs} == {"a", "b", "c"}
    assert log.overlaps() == []


async def test_by_owner_keeps_namespaced_children_of_a_cluster_scoped_owner_with_it(
    env: Environment, api: Client
) -> None:
    """Widgets (namespaced) controlled by Gadgets (cluster-scoped): a widget's key is its gadget's
    `name`, the key the gadget controller hashes, so each widget is reconciled where its gadget is."""
    log = Log()

    def replica(identity: str) -> Any:
        mgr = make_manager(
            env,
            sharding=ShardingOptions(
                by="owner",
                name="g",
                identity=identity,
                lease_duration=2.0,
                renew_deadline=1.5,
                retry_period=0.1,
            ),
        )
        mgr.builder().named("gadgets").for_(Gadget).complete(log.reconciler(identity))
        mgr.builder().named("widgets").for_(Widget).complete(log.reconciler(identity))
        return mgr

    a, b = replica("a"), replica("b")
    async with a.running(), b.running():
        await eventually(
            lambda: all(m.sharding.complete and m.sharding.members == ("a", "b") for m in (a, b)), timeout=10
        )
        names = [f"g{i}" for i in range(16)]
        for name in names:
            gadget = await api.create(Gadget.model_validate({"metadata": {"name": name}}))
            assert gadget.metadata.uid
            child = widget(f"{name}-child")
            child.metadata.owner_references = [
                OwnerReference(
                    api_version="test.pyop.io/v1",
                    kind="Gadget",
                    name=name,
                    uid=gadget.metadata.uid,
                    controller=True,
                )
            ]
            await api.create(child)
        await eventually(
            lambda: all(f"/{n}" in log.done and f"default/{n}-child" in log.done for n in names), timeout=20
        )
        widgets = next(c for c in a.controllers if c.name == "widgets")
        assert widgets.shard is not None
        assert widgets.shard.key(Request("default", "g0-child")) == "g0"
        for name in names:
            assert log.done[f"default/{name}-child"] == log.done[f"/{name}"], name
        assert {r for rs in log.done.values() for r in rs} == {"a", "b"}
    assert log.overlaps() == []
