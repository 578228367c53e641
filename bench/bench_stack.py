"""`hyops stack apply` wall time against the scheduling lower bound, 50-module layered DAG.

The engine is a stand-in shell script (passed as HYOPS_ENGINE) that answers `version -json`,
`init`, `show -json` and `output -json` at once and makes every apply take exactly
APPLY_SECONDS, printing valid `-json` UI lines. So the engine's work is known exactly, and
what is left is hyops: the scheduler, the per-member contract (record, lock, run folder,
fsyncs) and the process start. The lower bound is max(critical path, ceil(N / P)) applies;
whole-process wall time (start-up and stack validation included) is compared to it.
One warm-up run first (as bench_apply_overhead does): `init` of each module, the engine's
version and the parsed HCL are one-time costs a re-run does not pay.
Target: within 1.15x at parallelism 8 (issue 37).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TITLE = "hyops stack apply: 50-module layered DAG, stand-in engine, wall time vs lower bound"
APPLY_SECONDS = float(os.environ.get("HYOPS_BENCH_STACK_SECONDS", "1.0"))
LAYERS = (8, 8, 8, 8, 8, 8, 2)  # 50 members; critical path 7 applies
PARALLELISM = (1, 4, 8)
TARGET_RATIO = 1.15  # issue 37 (1.2 before)
TARGET_PARALLELISM = 8

_TS = "2024-01-01T00:00:00.000000Z"
# Shared by the bench engines (this stand-in, bench_stack_real's timing wrapper): sets `dir`
# from -chdir= (the caller sets its default first) and `cmd` to the engine subcommand.
ARGV_SCAN = """cmd=
for arg in "$@"; do
  case "$arg" in
    -chdir=*) dir="${arg#-chdir=}" ;;
    -*) ;;
    *) [ -z "$cmd" ] && cmd="$arg" ;;
  esac
done
"""
FAKE_ENGINE = f"""#!/bin/sh
# Stand-in engine for bench_stack.py: valid -json lines, a fixed sleep per apply.
dir=.
{ARGV_SCAN}name="${{dir##*/}}"
ui() {{ printf '{{"@level":"info","@message":"%s","@module":"terraform.ui","@timestamp":"{_TS}",%s}}\\n' "$1" "$2"; }}
res='"resource":{{"addr":"terraform_data.this","module":"","resource":"terraform_data.this","implied_provider":"terraform","resource_type":"terraform_data","resource_name":"this","resource_key":null}}'
case "$cmd" in
  version) echo '{{"terraform_version":"1.6.0","platform":"linux_amd64","provider_selections":{{}}}}' ;;
  init) mkdir -p "$dir/.terraform"; echo "initialized" ;;
  apply)
    ui "Terraform 1.6.0" '"terraform":"1.6.0","type":"version","ui":"1.2"'
    ui "plan" '"change":{{'"$res"',"action":"create"}},"type":"planned_change"'
    ui "creating" '"hook":{{'"$res"',"action":"create"}},"type":"apply_start"'
    sleep "${{BENCH_APPLY_SECONDS:-0}}"
    # the state file, as a real engine writes it locally before it reports the create (hyops
    # reads it instead of asking `show -json`, as it does after a real engine's apply)
    st='{{"version":4,"terraform_version":"1.6.0","serial":1,"lineage":"bench",'
    st="$st"'"outputs":{{"id":{{"value":"%s","type":"string"}}}},'
    st="$st"'"resources":[{{"mode":"managed","type":"terraform_data","name":"this",'
    st="$st"'"provider":"provider[\\"terraform.io/builtin/terraform\\"]",'
    st="$st"'"instances":[{{"schema_version":0,"attributes":{{"id":"%s"}}}}]}}]}}\\n'
    printf "$st" "$name" "$name" > "$dir/terraform.tfstate"
    created='"action":"create","id_key":"id","id_value":"'"$name"'","elapsed_seconds":1'
    ui "created" '"hook":{{'"$res"','"$created"'}},"type":"apply_complete"'
    changes='"add":1,"change":0,"remove":0,"import":0,"operation":"apply"'
    ui "Apply complete" '"changes":{{'"$changes"'}},"type":"change_summary"'
    ui "Outputs: 1" '"outputs":{{"id":{{"sensitive":false,"type":"string","value":"'"$name"'"}}}},"type":"outputs"'
    ;;
  show) echo '{{"format_version":"1.0","terraform_version":"1.6.0"}}' ;;
  output) echo '{{"id":{{"sensitive":false,"type":"string","value":"'"$name"'"}}}}' ;;
  *) echo "bench engine: unsupported command $cmd" >&2; exit 1 ;;
esac
"""

MODULE_TF = """variable "upstream" {
  type    = string
  default = ""
}

output "id" {
  value = "stand-in"
}
"""


def _names(widths: tuple[int, ...] = LAYERS) -> list[list[str]]:
    return [[f"l{layer}-m{i}" for i in range(width)] for layer, width in enumerate(widths)]


def _stack_text(layers: list[list[str]]) -> str:
    """Each member depends on two members of the layer before, and takes one's output."""
    lines = ["stack: bench", "modules:"]
    for depth, layer in enumerate(layers):
        for i, name in enumerate(layer):
            lines += [f"  - name: {name}", f"    path: {name}"]
            if depth:
                before = layers[depth - 1]
                ups = sorted({before[i % len(before)], before[(i + 1) % len(before)]})
                lines += [f"    depends_on: [{', '.join(ups)}]",
                          f"    inputs_from: {{upstream: {ups[0]}.id}}"]
    return "\n".join(lines) + "\n"


def workspace(base: Path, widths: tuple[int, ...] = LAYERS) -> Path:
    """A fresh stack (by default 50 module directories), stack.yml, the stand-in engine."""
    layers = _names(widths)
    for layer in layers:
        for name in layer:
            (base / name).mkdir(parents=True)
            (base / name / "main.tf").write_text(MODULE_TF)
    (base / "stack.yml").write_text(_stack_text(layers))
    engine = base / "engine.sh"
    engine.write_text(FAKE_ENGINE)
    engine.chmod(0o755)
    return base


def _apply(base: Path, parallelism: int, seconds: float) -> float:
    hyops = str(Path(sys.executable).with_name("hyops"))
    env = dict(os.environ, HYOPS_ENGINE=str(base / "engine.sh"), HYOPS_RUNTIME_ROOT=str(base / ".hyops"),
               BENCH_APPLY_SECONDS=f"{seconds:g}")
    start = time.perf_counter()
    proc = subprocess.run([hyops, "stack", "apply", "stack.yml", "--parallelism", str(parallelism)],
                          cwd=base, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"stack apply failed ({proc.returncode}): {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return elapsed


def run() -> list[dict[str, object]]:
    members = sum(LAYERS)
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = workspace(Path(tmp))
        _apply(base, max(PARALLELISM), 0)  # warm-up
        walls = {p: _apply(base, p, APPLY_SECONDS) for p in PARALLELISM}
    for parallelism, wall in walls.items():
        bound = max(len(LAYERS), math.ceil(members / parallelism)) * APPLY_SECONDS
        ratio = wall / bound
        targeted = parallelism == TARGET_PARALLELISM
        rows.append({
            "parallelism": parallelism,
            "members": members,
            "apply s": f"{APPLY_SECONDS:g}",
            "lower bound s": f"{bound:.1f}",
            "wall s": f"{wall:.2f}",
            "ratio": f"{ratio:.2f}x",
            "over bound s": f"{wall - bound:.2f}",
            "target": f"<= {TARGET_RATIO}x" if targeted else "-",
            "met": ("yes" if ratio <= TARGET_RATIO else "NO") if targeted else "-",
        })
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import table  # type: ignore[import-not-found]

    print(table(run()))
