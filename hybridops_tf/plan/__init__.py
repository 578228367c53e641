"""`hyops plan`: plan runs of a module or a stack, and saved plans applied exactly as reviewed."""
