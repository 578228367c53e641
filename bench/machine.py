"""The machine a bench ran on, as one table row: cores, load and the time (a loaded machine
explains a slow figure)."""

from __future__ import annotations

import os
import time


def machine_row(when: str) -> dict[str, object]:
    one, five, fifteen = os.getloadavg()
    return {"when": when, "cores": os.cpu_count(), "load 1/5/15 min": f"{one:.2f} / {five:.2f} / {fifteen:.2f}",
            "at": time.strftime("%H:%M:%S")}
