"""Which replica owns a key: rendezvous (highest random weight) hashing over the live members.

Every member scores every key, `score(member, key)`, a 64-bit hash of both; the key goes to the member
with the highest score. The score of a (member, key) pair never depends on the other members, so:

* adding a member moves exactly the keys the newcomer now wins (about 1/N of them), each from
  wherever it was; nothing moves between the old members;
* removing a member moves only that member's keys (each to its runner-up); nothing else moves.

A hash ring needs virtual nodes to spread keys evenly over few members and still moves keys between
neighbours; rendezvous hashing is even by construction and costs N hashes per lookup, which is nothing
for the handful of replicas an operator runs (4 members: ~2 µs a key). `Assignment` memoises owners
per key for one member set.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def score(member: str, key: str) -> int:
    """The weight of `key` on `member` (blake2b: stable across processes and Python versions, unlike
    `hash()`)."""
    digest = hashlib.blake2b(f"{member}\x00{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def owner_of(key: str, members: Iterable[str]) -> str | None:
    """The member that owns `key`, or None when there are no members. Ties (never seen in 64 bits) go
    to the larger member name, so every replica agrees."""
    best: tuple[int, str] | None = None
    for member in members:
        cand = (score(member, key), member)
        if best is None or cand > best:
            best = cand
    return None if best is None else best[1]


def view_digest(members: Iterable[str]) -> str:
    """A short name for a member set, the same on every replica (what replicas acknowledge)."""
    text = "\n".join(sorted(set(members)))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


class Assignment:
    """One member set and the owners of the keys asked about so far."""

    __slots__ = ("_owners", "digest", "members")

    def __init__(self, members: Iterable[str]) -> None:
        self.members: tuple[str, ...] = tuple(sorted(set(members)))
        self.digest = view_digest(self.members)
        self._owners: dict[str, str | None] = {}

    def owner(self, key: str) -> str | None:
        try:
            return self._owners[key]
        except KeyError:
            owner = self._owners[key] = owner_of(key, self.members)
            if len(self._owners) > 1_000_000:  # a bound, not a policy: start over rather than grow
                self._owners.clear()
            return owner

    def __contains__(self, member: object) -> bool:
        return member in self.members

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Assignment) and other.members == self.members

    def __hash__(self) -> int:
        return hash(self.members)

    def __repr__(self) -> str:
        return f"Assignment({list(self.members)}, digest={self.digest})"


EMPTY = Assignment(())
"""No members: owns nothing (what a replica holds before it has seen a complete view)."""
