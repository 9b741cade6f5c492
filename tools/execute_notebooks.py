"""Execute the notebooks top to bottom and store their outputs (what a reader sees).

    python tools/execute_notebooks.py                 # every notebook, in place
    python tools/execute_notebooks.py 01 03           # the notebooks whose names start so, in place
    python tools/execute_notebooks.py --out DIR       # executed copies into DIR (the GPU run)

Prints each notebook's wall time; exits non-zero if a cell raised.
"""
import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

here = Path(__file__).resolve().parent.parent / "notebooks"
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("only", nargs="*", help="the notebooks whose names start with one of these")
parser.add_argument("--out", default=None, help="write executed copies here instead of in place")
args = parser.parse_args()
failed = False
for path in sorted(here.glob("[0-9]*.ipynb")):
    if args.only and not path.name.startswith(tuple(args.only)):
        continue
    nb = nbformat.read(path, as_version=4)
    start = time.time()
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(here)}}).execute()
        status = "ok"
    except Exception as e:  # noqa: BLE001 - report and carry on with the next notebook
        status, failed = f"FAILED: {str(e).splitlines()[0][:300]}", True
    print(f"{path.name}: {time.time() - start:.1f} s {status}", flush=True)
    nbformat.write(nb, (Path(args.out) / path.name) if args.out else path)
sys.exit(1 if failed else 0)
