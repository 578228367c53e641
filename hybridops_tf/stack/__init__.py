"""Stacks: many modules run as one dependency graph (docs/contract.md: Stacks).

model.py loads and validates `stack.yml`; graph.py is the pure scheduler (pending
propagation, continue-on-error, interrupt) and the destroy ordering; wiring.py turns
upstream outputs into a member's inputs; member.py is one member's step (through
`operation.steps.run`); skip.py says whether `--resume` may skip an `ok` member whose objects
something other than hyops may have changed, and what the skip compared; runner.py runs those
steps on threads; report.py is the run report document; view.py reads it with the records now.
"""
