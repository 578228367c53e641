"""The runtime root: which one, its layout, run folders, engine liveness, hooks, read-only status
views, whether a state was written outside hyops (state_look.py) and the drift reconcile last saw
(drift_seen.py)."""
