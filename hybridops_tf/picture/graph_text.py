"""A StackPicture with statuses as plain text (`stack graph --status`): members in apply order,
each with its glyph, status and why, its edges and wiring, then the destroy order."""

from __future__ import annotations

from hybridops_tf.picture.model import StackPicture
from hybridops_tf.stack.graph import destroy_order, member_facts, topological_order, wiring_lines
from hybridops_tf.stack.model import Stack


def to_text(stack: Stack, picture: StackPicture) -> str:
    head = f"stack {stack.name} ({stack.file})"
    if picture.run_id:
        head += f": last {picture.command} run {picture.run_id}, finished {picture.finished_at}"
    lines = [head]
    for name in topological_order(stack):
        m, n = stack.member(name), picture.node(name)
        look = n.look
        status = f"{look.glyph} {n.status}" if look is not None else "?"
        lines.append(f"  {name}: {', '.join([status, *n.detail])}; {'; '.join(member_facts(m))}")
        lines += wiring_lines(m)
    lines.append(f"destroy order: {' -> '.join(destroy_order(stack))}")
    return "\n".join(lines)
