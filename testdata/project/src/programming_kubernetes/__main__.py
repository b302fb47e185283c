# Copyright The programming-kubernetes Authors.
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
# limitations under the License.

"""The programming-kubernetes manager: runs every controller of the project.

Start it with `python -m programming_kubernetes` (`make run`); the container image runs the same command. The
standard flags (metrics, health probes, leader election, logging, webhook server: `--help` lists them),
logging and the error handling are pyop's `run_manager`; what is this project's is `setup`.
"""

from __future__ import annotations

import sys

from pyscaffold_op.runtime import Manager, ManagerFlags, run_manager

from programming_kubernetes.controllers.at_controller import AtReconciler

# +pyop:scaffold:imports

# The name of the Lease used for leader election; stable for the project, unique within its namespace.
LEADER_ELECTION_ID = "6f5b1bd9.viper.run"


def setup(mgr: Manager, flags: ManagerFlags) -> None:
    """Register every controller and webhook of the project with the manager."""
    AtReconciler(
        client=mgr.client,
        recorder=mgr.get_event_recorder("at-controller"),
    ).setup_with_manager(mgr)
    # +pyop:scaffold:controllers


def main(argv: list[str] | None = None) -> int:
    return run_manager(
        setup,
        argv,
        prog="programming_kubernetes",
        description="The programming-kubernetes controller manager.",
        leader_election_id=LEADER_ELECTION_ID,
    )


if __name__ == "__main__":
    sys.exit(main())
