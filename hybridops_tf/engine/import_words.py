"""The engine's words when an `import` fails. `import` has no -json stream, so its stderr is
all there is: two failures hyops acts on, each read from the line that says it (Terraform
1.0-1.15, OpenTofu)."""

from __future__ import annotations

# "Error: resource null_resource doesn't support import": the provider cannot import the type
_NOT_SUPPORTED = "support import"
# "Error: Cannot import non-existent remote object": the provider read the id and found nothing
_FOUND_NOTHING = "Cannot import non-existent remote object"


def _line_with(text: str, words: str) -> str | None:
    """The first line holding `words`, without the diagnostic box and the `Error: ` prefix."""
    return next((ln.strip(" │╷╵").removeprefix("Error: ").strip() for ln in text.splitlines() if words in ln), None)


def not_importable(stderr: str) -> str | None:
    """The engine's reason when the provider cannot import the resource type, else None."""
    return _line_with(stderr, _NOT_SUPPORTED)


def found_nothing(stderr: str) -> str | None:
    """The engine's reason when its import found no object of that id, else None."""
    return _line_with(stderr, _FOUND_NOTHING)
