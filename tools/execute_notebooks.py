"""Execute the notebooks top to bottom and store their outputs (what a reader sees).

    python tools/execute_notebooks.py            # in place, here
    python tools/execute_notebooks.py OUT_DIR    # executed copies into OUT_DIR (the GPU run)
    python tools/execute_notebooks.py OUT_DIR 04 05   # only the notebooks whose names start so

Prints each notebook's wall time; exits non-zero if a cell raised.
"""
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

here = Path(__file__).resolve().parent.parent / "notebooks"
out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else None
only = tuple(sys.argv[2:])
failed = False
for path in sorted(here.glob("[0-9]*.ipynb")):
    if only and not path.name.startswith(only):
        continue
    nb = nbformat.read(path, as_version=4)
    start = time.time()
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(here)}}).execute()
        status = "ok"
    except Exception as e:  # noqa: BLE001 - report and carry on with the next notebook
        status, failed = f"FAILED: {str(e).splitlines()[0][:300]}", True
    print(f"{path.name}: {time.time() - start:.1f} s {status}", flush=True)
    nbformat.write(nb, (out_dir / path.name) if out_dir else path)
sys.exit(1 if failed else 0)
