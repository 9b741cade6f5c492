"""Draw docs/stages.png, the README's picture, from the recorded results (run after a new record).

    python tools/readme_picture.py
"""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from gemvlab import results
from gemvlab.workbook import plots

fig = plots.plot_stages(results.load())
fig.savefig(Path(__file__).resolve().parent.parent / "docs" / "stages.png", dpi=110)
print("wrote docs/stages.png")
