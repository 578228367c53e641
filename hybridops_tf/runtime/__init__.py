"""The runtime root: which one, its layout, run folders, engine liveness, hooks, and read-only status views."""
