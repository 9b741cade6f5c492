"""Exploration round 13 on the H200 (issue 9, not part of gemvlab), logged in round13/round13.txt:
round 12 again (round12.py, the same candidates), after gemvlab/cuda/row_tiles.cu became round
10's MODE 1 as it ran: a check that the library's kernel now times as MODE 1 does, in one run.

    python tools/explore/round13.py OUT_DIR
"""
import runpy
from pathlib import Path

runpy.run_path(str(Path(__file__).with_name("round12.py")), run_name="__main__")
