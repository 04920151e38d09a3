#!/usr/bin/python3
"""Draws the NuGet package icon (docs/img/icon.png, 128x128): three stacked LSM levels, each wider
than the one above, under "Kv". Debian's python3-matplotlib.

  /usr/bin/python3 benchmarks/scripts/package_icon.py docs/img/icon.png
"""
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch, Rectangle

fig = plt.figure(figsize=(1.28, 1.28), dpi=100)
ax = fig.add_axes([0, 0, 1, 1])
ax.set_xlim(0, 128)
ax.set_ylim(0, 128)
ax.axis("off")
ax.add_patch(FancyBboxPatch((4, 4), 120, 120, boxstyle="round,pad=0,rounding_size=18", color="#1f3b63"))
# Levels 0..2 of an LSM tree: wider and deeper as they go down.
for i, (width, color) in enumerate([(44, "#f2b134"), (72, "#ef7d3c"), (100, "#e04f39")]):
    ax.add_patch(Rectangle(((128 - width) / 2, 20 + (2 - i) * 16), width, 11, color=color))
ax.text(64, 92, "Kv", ha="center", va="center", fontsize=30, fontweight="bold", color="white", family="DejaVu Sans")
fig.savefig(sys.argv[1], dpi=100, transparent=True)
