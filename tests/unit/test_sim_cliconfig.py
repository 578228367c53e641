"""A user's own TF_CLI_CONFIG_FILE combined with the sim mirror (sim/cliconfig.py): the
derived file keeps their text and installs the sim from hyops's mirror only; what cannot be
combined safely is one line (exit 2 through the core)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hybridops_tf.base.errors import UsageError
from hybridops_tf.runtime import hooks
from hybridops_tf.runtime.root import Runtime
from hybridops_tf.sim import cliconfig
from hybridops_tf.sim.cliconfig import SIM_SOURCE, CliConfigError
from hybridops_tf.sim.install import (
    SIM_ENVIRONMENT,
    cli_config_path,
    derived_cli_config_path,
    engine_cli_config,
    mirror_dir,
    sim_engine_env,
    write_cli_config,
)

MIRROR = Path("/rt/sim/mirror")
WHERE = "/home/me/my.tfrc"


def combined(text: str) -> str:
    out = cliconfig.combine(text, WHERE, MIRROR)
    assert out is not None
    return out


def sim_sources(text: str) -> list[tuple[str, str | None]]:
    """Which installation methods of a combined file the engine would ask for the sim,
    as (method, filesystem_mirror path); the file must parse, with one provider_installation."""
    top = cliconfig.parse(text, WHERE, MIRROR)
    [block] = top.blocks("provider_installation")
    asked = []
    for method in block.blocks():
        if method.name == "dev_overrides":
            continue
        include = cliconfig._list(text, WHERE, method, "include", MIRROR)
        exclude = cliconfig._list(text, WHERE, method, "exclude", MIRROR)
        if exclude is not None and any(cliconfig._matches(p) for p in exclude[0]):
            continue
        if include is not None and not any(cliconfig._matches(p) for p in include[0]):
            continue
        path = method.attribute("path")
        asked.append((method.name, text[path.start:path.end].split("=", 1)[1].strip() if path else None))
    return asked


ONLY_OURS = [("filesystem_mirror", f'"{MIRROR}"')]


def test_a_file_without_provider_installation_gets_hyops_block_appended() -> None:
    text = '# mine\nplugin_cache_dir = "$HOME/.terraform.d/plugin-cache"\ndisable_checkpoint = true'

    out = combined(text)

    assert text + "\n" in out  # theirs, as written, comment included
    assert sim_sources(out) == ONLY_OURS
    # every other provider keeps coming from its registry, as without the block
    assert "  direct {\n    exclude = [\"hybridops.dev/hybridops/sim\"]\n  }\n" in out


def test_hyops_mirror_merges_into_their_block_and_their_direct_excludes_the_sim() -> None:
    text = "provider_installation {\n  direct {}\n}\n"

    out = combined(text)

    assert out.count("provider_installation {") == 1  # the engine takes only one
    assert sim_sources(out) == ONLY_OURS
    assert "  direct {\n    exclude = [\"hybridops.dev/hybridops/sim\"] # added by hybridops-tf\n  }" in out


def test_their_exclude_list_is_extended_as_written() -> None:
    text = ('provider_installation {\n  filesystem_mirror {\n    path    = "/opt/providers"\n'
            '    include = ["example.com/*/*"]\n  }\n  direct {\n    exclude = [\n'
            '      "example.com/*/*", # served by the mirror\n    ]\n  }\n}\n')

    out = combined(text)

    assert ('    exclude = ["hybridops.dev/hybridops/sim",\n      "example.com/*/*", # served by the '
            "mirror\n    ]\n") in out
    # their mirror's include never covered the sim: left as it was
    assert '    path    = "/opt/providers"\n    include = ["example.com/*/*"]\n  }\n' in out
    assert sim_sources(out) == ONLY_OURS


def test_a_network_mirror_and_a_catch_all_mirror_of_theirs_exclude_the_sim() -> None:
    text = ('provider_installation {\n  network_mirror {\n    url = "https://mirror.example/"\n  }\n'
            '  filesystem_mirror {\n    path = "/opt/all"\n    exclude = []\n  }\n}\n')

    out = combined(text)

    assert sim_sources(out) == ONLY_OURS
    assert 'exclude = ["hybridops.dev/hybridops/sim"]\n' in out  # the empty list, given one item
    assert "direct" not in out  # they chose no registry: hyops adds none


def test_credentials_and_other_providers_overrides_are_kept() -> None:
    text = ('credentials "app.terraform.io" {\n  token = "xxxxxx.atlasv1.zzzz"\n}\n'
            'credentials_helper "example" {\n  args = []\n}\n'
            'provider_installation {\n  dev_overrides {\n    "hashicorp/null" = "/src/null"\n  }\n'
            "  direct {}\n}\n")

    out = combined(text)

    assert 'credentials "app.terraform.io" {\n  token = "xxxxxx.atlasv1.zzzz"\n}\n' in out
    assert '    "hashicorp/null" = "/src/null"\n' in out
    assert sim_sources(out) == ONLY_OURS


def test_a_one_line_block_is_still_well_formed() -> None:
    out = combined("provider_installation { direct {} }")

    assert sim_sources(out) == ONLY_OURS


def test_a_file_whose_own_mirror_names_the_sim_is_used_as_it_is() -> None:
    text = (f'provider_installation {{\n  filesystem_mirror {{\n    path = "/shared/mirror"\n'
            f'    include = ["{SIM_SOURCE}", "example.com/*/*"]\n  }}\n  direct {{}}\n}}\n')

    assert cliconfig.combine(text, WHERE, MIRROR) is None
    # hyops's own config, as `hyops sim install` prints it, is such a file
    assert cliconfig.combine(cliconfig._own_block(MIRROR), WHERE, MIRROR) is None


def test_a_wildcard_already_excluding_the_sim_is_left_alone() -> None:
    text = 'provider_installation {\n  direct {\n    exclude = ["hybridops.dev/*/*"]\n  }\n}\n'

    out = combined(text)

    assert '    exclude = ["hybridops.dev/*/*"]\n  }\n' in out
    assert sim_sources(out) == ONLY_OURS


@pytest.mark.parametrize(("text", "why"), [
    ("provider_installation {\n  direct {\n}\n", "cannot read your TF_CLI_CONFIG_FILE"),
    ('{"plugin_cache_dir": "/c"}', "JSON syntax"),
    ('provider_installation {\n  dev_overrides {\n    "hybridops.dev/hybridops/sim" = "/b"\n  }\n'
     "  direct {}\n}\n", "dev_overrides for hybridops.dev/hybridops/sim"),
    ("provider_installation {\n  direct {}\n}\nprovider_installation {\n  direct {}\n}\n",
     "2 provider_installation blocks"),
    ('provider_installation {\n  direct {\n    exclude = "x"\n  }\n}\n', "not a list"),
    ('provider_installation {\n  direct {\n    include = ["hybridops.dev/hybridops/sim"]\n  }\n}\n',
     "asks `direct` for"),
])
def test_what_cannot_be_combined_is_one_line_saying_why_and_how(text: str, why: str) -> None:
    with pytest.raises(CliConfigError) as caught:
        cliconfig.combine(text, WHERE, MIRROR)

    message = str(caught.value)
    assert why in message and "\n" not in message
    assert WHERE in message and "unset TF_CLI_CONFIG_FILE" in message
    assert f'path = "{MIRROR}"' in message  # the mirror to add by hand


def test_the_derived_file_is_private_and_rewritten_only_when_an_input_changes(tmp_path: Path) -> None:
    root = tmp_path / "rt"
    own = tmp_path / "my.tfrc"
    own.write_text('credentials "app.terraform.io" {\n  token = "secret"\n}\n')

    config = engine_cli_config(root, {"TF_CLI_CONFIG_FILE": str(own)})

    assert config == derived_cli_config_path(root, own) and config.parent == root / "sim"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600  # it holds their token too
    assert stat.S_IMODE(config.parent.stat().st_mode) == 0o700
    assert 'token = "secret"' in config.read_text()
    assert f'path    = "{mirror_dir(root)}"' in config.read_text()
    os.utime(config, ns=(1, 1))
    assert engine_cli_config(root, {"TF_CLI_CONFIG_FILE": str(own)}) == config
    assert config.stat().st_mtime_ns == 1  # same file, same mirror: not rewritten
    own.write_text('plugin_cache_dir = "/cache"\n')
    engine_cli_config(root, {"TF_CLI_CONFIG_FILE": str(own)})
    assert config.stat().st_mtime_ns != 1 and "secret" not in config.read_text()
    assert own.read_text() == 'plugin_cache_dir = "/cache"\n'  # theirs is never written


def test_another_mirror_rewrites_the_derived_file(tmp_path: Path) -> None:
    own = tmp_path / "my.tfrc"
    own.write_text("provider_installation {\n  direct {}\n}\n")
    first = engine_cli_config(tmp_path / "a", {"TF_CLI_CONFIG_FILE": str(own)})
    second = engine_cli_config(tmp_path / "b", {"TF_CLI_CONFIG_FILE": str(own)})

    assert str(mirror_dir(tmp_path / "a")) in first.read_text()
    assert str(mirror_dir(tmp_path / "b")) in second.read_text()


def test_sim_engine_env_gives_the_engine_the_derived_file(tmp_path: Path) -> None:
    root = tmp_path / "rt"
    own = tmp_path / "my.tfrc"
    own.write_text("")

    env = sim_engine_env(root, {"TF_CLI_CONFIG_FILE": str(own)})

    assert env["TF_CLI_CONFIG_FILE"] == str(derived_cli_config_path(root, own))
    # hyops's own config exported (`eval "$(hyops sim install)"`) is passed on as it is
    plain = write_cli_config(root)
    assert "TF_CLI_CONFIG_FILE" not in sim_engine_env(root, {"TF_CLI_CONFIG_FILE": str(plain)})
    assert plain == cli_config_path(root)


def test_an_unreadable_file_is_a_usage_error(tmp_path: Path) -> None:
    own = tmp_path / "my.tfrc"
    own.write_bytes(b"\xff\xfe not utf-8")

    with pytest.raises(CliConfigError, match="cannot read your TF_CLI_CONFIG_FILE"):
        engine_cli_config(tmp_path / "rt", {"TF_CLI_CONFIG_FILE": str(own)})


def test_the_core_reports_a_file_it_cannot_combine_as_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "mod"
    module.mkdir()
    (module / "main.tf").write_text('resource "sim_network" "n" {\n  name = "n"\n}\n')
    own = tmp_path / "my.tfrc"
    own.write_text("provider_installation {\n")
    monkeypatch.setenv("TF_CLI_CONFIG_FILE", str(own))
    hooks.register(SIM_ENVIRONMENT)  # as the CLI does

    with pytest.raises(UsageError) as caught:
        Runtime(tmp_path / "rt").engine_env(module, None)

    assert caught.value.exit_code == 2
    assert str(caught.value).startswith(f"hyops cannot read your TF_CLI_CONFIG_FILE {own}")
    assert str(caught.value).endswith("; nothing was run")
