"""A module's inputs: its declared variables and outputs, merged from every source, validated, secrets off disk."""
