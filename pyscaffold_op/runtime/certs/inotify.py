"""Linux inotify through ctypes (the C library's `inotify_init1`, `inotify_add_watch`, `inotify_rm_watch`):
a `FolderWatch` wakes an asyncio waiter when anything changes in a set of folders.

Why not a library: what the certificate watcher needs is a wake-up, not events (it re-reads the files
and compares), in the folders a certificate's path and its symlinks go through. asyncinotify (58 KB
installed, MPL-2.0) and inotify_simple (16 KB) would do it; watchfiles (1.2 MB plus anyio's 0.55 MB)
would not fit the runtime's 40 MB closure. Forty lines of ctypes cost no distribution and no licence
review (docs/design.md, "Certificates reload on the file event").

`watch_folders` returns None where there is no inotify (macOS, BSD) or the kernel refuses another
instance (`fs.inotify.max_user_instances`): the caller's poll is then the only way it learns of a change.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import os
import struct
from collections.abc import Callable
from typing import Any

log = logging.getLogger("pyscaffold_op.runtime.certs")

# <sys/inotify.h>
IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_ONLYDIR = 0x01000000
# Everything that can change what a path in the folder reads as: a file written in place, a file or
# link created, renamed in (the kubelet's `..data` swap) or out, removed, or the folder itself going.
CHANGES = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF
)  # fmt: skip
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then `len` bytes of name

_libc: Any = None


def _inotify_libc() -> Any:
    """The process's C library with the three calls typed, or None without inotify."""
    global _libc
    if _libc is None:
        libc: Any
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.inotify_init1.argtypes = (ctypes.c_int,)
            libc.inotify_add_watch.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
            libc.inotify_rm_watch.argtypes = (ctypes.c_int, ctypes.c_int)
        except (OSError, AttributeError):
            libc = False
        _libc = libc
    return _libc or None  # False once found missing: not looked up again


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


class Inotify:
    """One inotify instance, non-blocking: folders added and removed, pending events drained."""

    def __init__(self) -> None:
        libc = _inotify_libc()
        if libc is None:
            raise OSError("inotify is not available here")
        self._libc = libc
        self.fd = _check(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC), "inotify_init1")

    def add(self, folder: str) -> int:
        """Watch `folder` (a symlink to one is followed); its watch descriptor."""
        return _check(
            self._libc.inotify_add_watch(self.fd, os.fsencode(folder), CHANGES | IN_ONLYDIR), folder
        )

    def remove(self, wd: int) -> None:
        self._libc.inotify_rm_watch(self.fd, wd)  # EINVAL once the folder is gone: nothing to undo

    def read(self) -> list[tuple[int, int, bytes]]:
        """The events pending now, as (wd, mask, name); empty when there are none."""
        events: list[tuple[int, int, bytes]] = []
        while True:
            try:
                data = os.read(self.fd, 64 * 1024)
            except BlockingIOError:
                return events
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, size = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                events.append((wd, mask, data[offset : offset + size].rstrip(b"\0")))
                offset += size

    def close(self) -> None:
        os.close(self.fd)


class FolderWatch:
    """Sets `changed` whenever anything changes in the folders `folders()` names. The set is asked
    again after each batch of events, so folders that come and go (a Secret volume's timestamped
    folders behind `..data`) are followed; one that does not exist yet is tried again then."""

    def __init__(self, folders: Callable[[], set[str]], inotify: Inotify) -> None:
        self._folders = folders
        self._inotify = inotify
        self._watched: dict[str, int] = {}
        self.changed = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._sync()
        self._loop.add_reader(inotify.fd, self._on_events)

    @property
    def folders(self) -> list[str]:
        return sorted(self._watched)

    def _sync(self) -> None:
        want = self._folders()
        for folder in set(self._watched) - want:
            self._inotify.remove(self._watched.pop(folder))
        for folder in want - set(self._watched):
            try:
                self._watched[folder] = self._inotify.add(folder)
            except OSError as err:  # not there (yet), or the kernel's watch limit: the poll covers it
                log.debug("cannot watch %s: %s", folder, err)

    def _on_events(self) -> None:
        if self._inotify.read():
            self._sync()
            self.changed.set()

    def close(self) -> None:
        self._loop.remove_reader(self._inotify.fd)
        self._inotify.close()


def watch_folders(folders: Callable[[], set[str]]) -> FolderWatch | None:
    """A FolderWatch on the running loop, or None where inotify is missing or refused."""
    try:
        inotify = Inotify()
    except OSError as err:
        log.info("no file events (%s): certificates are reloaded by polling only", err)
        return None
    return FolderWatch(folders, inotify)
