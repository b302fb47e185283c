"""The license header written at the top of every generated Python file (kubebuilder's boilerplate)."""

from __future__ import annotations

from pathlib import Path

BOILERPLATE_FILE = "hack/boilerplate.py.txt"

_APACHE2 = """\
# Copyright {owner}.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License."""

LICENSES = ("apache2", "none")


def boilerplate(license_: str, owner: str) -> str:
    """The header text (no trailing newline), or "" for `--license none`. No year: output is stable."""
    if license_ == "none":
        return ""
    return _APACHE2.format(owner=owner)


def header_from_boilerplate(text: str) -> str:
    """What templates put before a module docstring: the boilerplate and a blank line, or nothing."""
    text = text.strip("\n")
    return f"{text}\n\n" if text else ""


def project_header(root: Path) -> str:
    """The header for files added to an existing project: its (possibly edited) boilerplate file."""
    path = root / BOILERPLATE_FILE
    return header_from_boilerplate(path.read_text(encoding="utf-8")) if path.is_file() else ""
