"""A stand-in engine binary for the tests of engine choice and version reading: a shell script
that answers `version -json` as Terraform 1.0.3 or OpenTofu 1.8.2 would, and counts its runs."""

from __future__ import annotations

import json
from pathlib import Path

TF_VERSION_JSON = {
    "terraform_version": "1.0.3",
    "platform": "linux_amd64",
    "provider_selections": {},
    "terraform_outdated": True,
}
TOFU_VERSION_JSON = {
    "terraform_version": "1.8.2",
    "platform": "linux_amd64",
    "provider_selections": {"registry.opentofu.org/hashicorp/null": "3.2.2"},
}


def fake_engine(
    directory: Path,
    name: str,
    doc: object = TF_VERSION_JSON,
    *,
    counter: Path | None = None,
    rc: int = 0,
    stderr: str = "",
) -> Path:
    """A tiny executable that answers `version -json` and counts its own runs."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    body = ["#!/bin/sh"]
    if counter is not None:
        body.append(f"echo run >> '{counter}'")
    if stderr:
        body.append(f"echo '{stderr}' >&2")
    text = doc if isinstance(doc, str) else json.dumps(doc)
    body.append(f"echo '{text}'")  # shell builtins only: tests run with a bare PATH
    body.append(f"exit {rc}")
    path.write_text("\n".join(body) + "\n")
    path.chmod(0o755)
    return path
