"""Pictures of a stack and its last run (docs/report.md): a pure graph model of a stack with
each member's status (model.py), the last run's timeline from its events (timeline.py), and
renderers from those models to text, Graphviz, Mermaid (graph_text.py, dot.py, mermaid.py)
and one self-contained HTML report (svg.py, html.py). Only collect.py reads the runtime root.
"""
