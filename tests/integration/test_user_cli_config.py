"""A CLI config of the user's own (TF_CLI_CONFIG_FILE) and the sim provider's mirror, on the
real engine (issue "Works where users stand", item 5).

hyops used to pass such a file through as it was: `init` then asked the registry for
hybridops.dev/hybridops/sim and failed ("Failed to query available provider packages").
It now gives the engine a derived file: the user's, plus the sim mirror.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from hybridops_tf.sim.install import engine_cli_config
from tests.integration.helpers import copy_module
from tests.integration.hyops_cli import Hyops

pytestmark = pytest.mark.integration


def test_apply_keeps_the_users_cli_config_and_adds_the_sim_mirror(hyops: Hyops, tmp_path: Path) -> None:
    copy_module("network", tmp_path / "modules" / "sim" / "network")
    cache = tmp_path / "plugin-cache"
    cache.mkdir()
    own = tmp_path / "my.tfrc"
    text = (f'# my own settings\nplugin_cache_dir = "{cache}"\n'
            "provider_installation {\n  direct {}\n}\n")
    own.write_text(text)

    result = hyops("apply", "modules/sim/network", env={"TF_CLI_CONFIG_FILE": str(own)})

    assert result.returncode == 0, result.stdout + result.stderr
    assert hyops.record("sim/network")["status"] == "ok"
    assert own.read_text() == text  # the user's file is never touched
    # the user's settings reached the engine: its plugin cache now holds the sim provider
    assert list(cache.glob("hybridops.dev/hybridops/sim/*/*/terraform-provider-sim_v*"))
    derived = list((hyops.runtime_root / "sim").glob("terraform-*.rc"))
    assert len(derived) == 1, derived
    given = derived[0].read_text()
    assert f'# my own settings\nplugin_cache_dir = "{cache}"\nprovider_installation {{\n' in given
    assert given.count("provider_installation {") == 1  # merged into theirs: the engine takes one
    assert stat.S_IMODE(derived[0].stat().st_mode) == 0o600


def test_a_cli_config_hyops_cannot_combine_is_a_usage_error(hyops: Hyops, tmp_path: Path) -> None:
    copy_module("network", tmp_path / "modules" / "sim" / "network")
    own = tmp_path / "my.tfrc"
    own.write_text('provider_installation {\n  dev_overrides {\n    "hybridops.dev/hybridops/sim" = "/b"\n'
                   "  }\n  direct {}\n}\n")

    result = hyops("apply", "modules/sim/network", env={"TF_CLI_CONFIG_FILE": str(own)})

    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "dev_overrides for hybridops.dev/hybridops/sim" in lines[0], lines
    assert "unset TF_CLI_CONFIG_FILE" in lines[0] and "nothing was run" in lines[0]
    assert not (tmp_path / "modules" / "sim" / "network" / ".terraform").exists()
    assert hyops.record("sim/network") is None


def test_sim_install_exports_the_combined_file(hyops: Hyops, tmp_path: Path) -> None:
    own = tmp_path / "my.tfrc"
    own.write_text('plugin_cache_dir = "/cache"\n')

    result = hyops("sim", "install", env={"TF_CLI_CONFIG_FILE": str(own)})

    assert result.returncode == 0, result.stderr
    exported = result.stdout.splitlines()[0].removeprefix("export TF_CLI_CONFIG_FILE=")
    assert Path(exported).parent == hyops.runtime_root / "sim" and Path(exported).name.startswith("terraform-")
    assert 'plugin_cache_dir = "/cache"\n' in Path(exported).read_text()
    # exporting it and asking again gives the same file, used as it is
    again = hyops("sim", "install", env={"TF_CLI_CONFIG_FILE": exported})
    assert again.stdout.splitlines()[0] == result.stdout.splitlines()[0]


@pytest.mark.parametrize("text", [
    'plugin_cache_dir = "/tmp"\ncredentials "app.terraform.io" {\n  token = "t"\n}\n',
    "provider_installation { direct {} }",
    ('provider_installation {\n  dev_overrides {\n    "hashicorp/null" = "/src/null"\n  }\n'
     '  filesystem_mirror {\n    path    = "/opt/providers"\n    include = ["example.com/*/*"]\n  }\n'
     '  network_mirror {\n    url = "https://mirror.example/"\n  }\n'
     '  direct {\n    exclude = [\n      "example.com/*/*", # the mirror\'s\n    ]\n  }\n}\n'),
], ids=["no-block", "one-line", "every-method"])
def test_the_engine_reads_the_derived_file_without_complaint(engine_path: str, runtime_root: Path,
                                                             tmp_path: Path, text: str) -> None:
    own = tmp_path / "my.tfrc"
    own.write_text(text)
    config = engine_cli_config(runtime_root, {"TF_CLI_CONFIG_FILE": str(own)})
    assert config != own

    done = subprocess.run([engine_path, "version"], env={**os.environ, "TF_CLI_CONFIG_FILE": str(config)},
                          capture_output=True, text=True, timeout=60, check=False)

    assert done.returncode == 0 and "problems with the CLI configuration" not in done.stdout + done.stderr, (
        done.stdout + done.stderr)
