"""Moved to `pyscaffold_op.runtime.client.restconfig`; kept for the emulator (`envtest/environment.py`),
which imports it from here until its own branch imports `pyscaffold_op.runtime.RestConfig`."""

from pyscaffold_op.runtime.client.restconfig import ExecConfig, RestConfig, as_rest_config

__all__ = ["ExecConfig", "RestConfig", "as_rest_config"]
