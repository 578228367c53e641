"""Reconcile asks the provider: a suspect orphan settled by a per-type lookup command.

After a create whose answer never came back, the engine's evidence cannot tell "made" from
"not made"; the provider can. A lookups file (docs/recovery.md: Lookups) names, per resource
type, a command that lists the objects of that type that could be the lost one; reconcile
asks it, keeps only the candidates no known state or record holds and whose `match`
attributes equal the planned ones, and adopts only a single one (`--write`), drops the
orphan only when a `complete` lookup found none, and names every candidate otherwise.

- spec.py      the lookups file: which one, its validation (exit 2 naming file and key)
- protocol.py  the JSON a command gets on stdin and must print on stdout (pure)
- judge.py     candidates -> a verdict per orphan: found, none, several, failed (pure)
- ask.py       runs one lookup through engine/process.py, keeps what was asked and answered
- query.py     `source: query`: the module's engine lists the type (`terraform query`, >= 1.14)
- consult.py   one module's suspect orphans asked about, in the reconcile's run folder
- adopt.py     `--write`: import the one found, forget what a complete lookup did not find
- advice.py    the findings' words (`orphan_found`, suspect orphans a lookup answered)

Two sources produce protocol.Candidate lists, a command (ask.py) and the engine's own listing
(query.py); judge.py does not care where candidates come from.
"""
