"""Report plots are drawn off-screen without touching the caller's matplotlib state."""

from __future__ import annotations

import base64
import subprocess
import sys


def test_plots_leave_the_backend_and_pyplot_alone():
    # Run in a fresh interpreter with an interactive-looking backend chosen first, as a notebook
    # would: drawing a report plot must not switch it nor leave figures open in pyplot.
    code = """
import matplotlib
matplotlib.use("svg")  # stands in for a notebook's inline backend (any non-Agg one)
import matplotlib.pyplot as plt
from rewardlab.evaluate.audit.report import plot_reliability
png = plot_reliability([0.2, 0.8], [0.25, 0.75], [10, 10])
print(matplotlib.get_backend(), len(plt.get_fignums()), png[:12])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    backend, open_figures, head = out
    assert backend == "svg" and open_figures == "0"
    assert base64.b64decode(head + "==")[:4] == b"\x89PNG"
