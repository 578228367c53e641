"""What an engine version can do, asked in one place: "does this engine have X?".

Code asks the feature, never a version number (CONTRIBUTING.md: Adding an engine feature
gate); each feature names the first version of each engine that has it.
"""

from __future__ import annotations

from typing import Protocol

from hybridops_tf.base.lazy_dataclass import dataclass
from hybridops_tf.engine.addresses import Spelling


class VersionedEngine(Protocol):
    """What a feature asks of an engine (binary.EngineInfo has it): not imported from binary.py,
    which loads the engine's runner, so `hyops status` can ask a state file's key spelling
    without it (tests/unit/test_import_sets.py)."""

    @property
    def kind(self) -> str: ...

    @property
    def version(self) -> str: ...


def version_key(version: str) -> tuple[int, ...]:
    """1.11.4 > 1.9.0 > 1.0.3 (numeric fields of the release part; a suffix is ignored)."""
    parts = []
    for field in version.lstrip("v").split("-")[0].split("."):
        digits = "".join(ch for ch in field if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


# Engine commands (as argv words after `-chdir`) that evaluate the root module's variables on
# every engine, so take the run's var file.
EVALUATES_VARIABLES = frozenset({("apply",), ("destroy",), ("plan",), ("import",), ("refresh",), ("console",),
                                 ("query",)})


@dataclass(frozen=True, slots=True)
class Feature:
    """A capability and the first version of each engine kind that has it (None: never)."""

    what: str
    terraform: tuple[int, ...] | None
    tofu: tuple[int, ...] | None

    def __call__(self, info: VersionedEngine) -> bool:
        first = self.tofu if info.kind == "tofu" else self.terraform
        return first is not None and version_key(info.version) >= first

    def lacking(self, info: VersionedEngine, added: str) -> str | None:
        """Why this engine cannot do it, naming the version that added it (`added`: "added in
        Terraform 1.14.0; OpenTofu has none"); None when it can."""
        if self(info):
            return None
        return f"the engine, {info.kind} {info.version}, has no {self.what} ({added})"



# Terraform 1.15: a module `source`/`version` may use variables, so `init`, `show` (of the state
# or of a saved plan) and `state pull` evaluate them and take -var/-var-file (tried on 1.15.5;
# `output` and `state list` take neither). OpenTofu evaluates variables in `init` since 1.8.
VARIABLES_IN_INIT = Feature("-var-file on init", (1, 15), (1, 8))
VARIABLES_IN_READS = Feature("-var-file on show and state pull", (1, 15), None)

_READS = frozenset({("show",), ("state", "pull")})


def takes_var_file(info: VersionedEngine, command: tuple[str, ...]) -> bool:
    """Whether `command` (its words: `("plan",)`, `("state", "pull")`) on this engine evaluates
    the root module's variables, so needs the run's inputs as a var file."""
    if command[:1] in EVALUATES_VARIABLES:
        return True
    if command[:1] == ("init",):
        return VARIABLES_IN_INIT(info)
    return (command[:1] in _READS or command[:2] in _READS) and VARIABLES_IN_READS(info)


# Terraform and OpenTofu 1.12: an `import` block may name the object by the provider's
# `identity` instead of its `id`.
IMPORT_IDENTITY = Feature("an `import` block's `identity`", (1, 12), (1, 12))
IMPORT_IDENTITY_ADDED = "an `import` block's `identity` was added in 1.12.0"


def takes_import_identity(version: str | None) -> bool:
    """The engine of `version` (a record's: Terraform and OpenTofu alike) imports an object by
    the provider's identity; an unknown version is taken not to."""
    first = IMPORT_IDENTITY.terraform
    return bool(version) and first is not None and version_key(version or "") >= first


# Terraform 1.14: `terraform query` runs the `list` blocks of `*.tfquery.hcl` files through the
# providers' list resources (`-json`: list_start, list_resource_found, list_complete). OpenTofu
# has no such command.
QUERY = Feature("`terraform query`", (1, 14), None)

# An init whose lock file does not vouch for a provider the plugin cache holds installs it into
# the cache anew (rewriting the folder other modules link to) instead of linking it: Terraform
# 1.4 on ("plugin_cache_may_break_dependency_lock_file" is off by default); OpenTofu, forked
# from Terraform 1.6, always. Seen: two members' inits beside a plan on 1.12.2 and 1.15.5
# ("Required plugins are not installed", "text file busy"); 1.0.3 links the cached package.
CACHE_REINSTALLS_UNLOCKED = Feature("a plugin cache an unlocked init installs into anew", (1, 4), (1, 0))
QUERY_ADDED = "added in Terraform 1.14.0; OpenTofu has none"


# Terraform 1.11: a string instance key in a printed address is quoted as HCL quotes a string
# (`["$${x}"]`, `["ctl\u0001"]`), no longer as Go's `%q` does (`["${x}"]`, `["ctl\x01"]`):
# seen in `state list`, `show -json` and the `-json` events of 1.11.4, 1.12.2-1.15.5 against
# 1.0.3 (tests/fixtures/address_keys/). OpenTofu's addrs package took the same
# quoting; 1.10 is its first release taken to have it (no OpenTofu leg ran here: where the
# guess is wrong, the record's addresses differ from the engine's only for keys holding `${`,
# `%{` or a control character, as before this gate).
HCL_QUOTED_KEYS = Feature("instance keys quoted as HCL in addresses", (1, 11), (1, 10))


def key_spelling(info: VersionedEngine | None) -> Spelling:
    """How this engine spells a string instance key in the addresses it prints; an unknown
    engine is taken to be a current one."""
    return key_spelling_of(info.version, info.kind) if info is not None else Spelling.HCL


def key_spelling_of(version: str | None, kind: str = "terraform") -> Spelling:
    """key_spelling for an engine known only by its version (a record's `engine.version`, a
    state file's `terraform_version`) and kind."""
    if not version:
        return Spelling.HCL
    first = HCL_QUOTED_KEYS.tofu if kind == "tofu" else HCL_QUOTED_KEYS.terraform
    return Spelling.HCL if first is not None and version_key(version) >= first else Spelling.GO
