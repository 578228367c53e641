"""The stack.yml files the stack tests write, shared by the unit, integration and reliability
suites: plain text and a writer, no fixtures and no engine (unit tests import this)."""

from __future__ import annotations

import textwrap
from pathlib import Path

# network, then a vm on it (a stack that tests add members or settings to).
NETWORK_VM = """\
stack: demo
modules:
  - {name: network, path: network}
  - name: vm
    path: vm
    depends_on: [network]
    inputs_from: {network_id: network.network_id}
"""

# network, then a vm on it, then a config owned by the vm.
NETWORK_VM_CONFIG = """\
stack: demo
modules:
  - name: network
    path: network
  - name: vm
    path: vm
    depends_on: [network]
    inputs: {size: small}
    inputs_from: {network_id: network.network_id}
  - name: config
    path: config
    depends_on: [vm]
    owned_by: vm
    inputs_from: {vm_id: vm.vm_id}
"""

# The demo stack: NETWORK_VM_CONFIG and a health check of the vm, after its config.
DEMO = NETWORK_VM_CONFIG + """\
  - name: health
    path: health
    depends_on: [vm, config]
    inputs_from: {target_id: vm.vm_id}
"""


def write_stack(directory: Path, text: str = DEMO) -> Path:
    """Write `text`, dedented, as directory/stack.yml; returns its path."""
    path = directory / "stack.yml"
    path.write_text(textwrap.dedent(text))
    return path
