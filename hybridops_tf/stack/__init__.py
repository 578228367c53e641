"""Stacks: many modules run as one dependency graph (docs/contract.md: Stacks).

model.py loads and validates `stack.yml`; graph.py is the pure scheduler (pending
propagation, continue-on-error, interrupt) and the destroy ordering; wiring.py turns
upstream outputs into a member's inputs; runner.py runs members through
`operation.run` on threads; report.py is the run report document.
"""
