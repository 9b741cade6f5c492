"""``python -m gemvlab lab [JupyterLab options]``: open the workbook in JupyterLab.

Before starting JupyterLab it *trusts* the workbook's notebooks (``jupyter trust``: their stored
outputs are signed with this machine's notebook secret). JupyterLab renders an output whose type
is not "safe" only in a trusted notebook, and ipywidgets' view type is not: in an untrusted
notebook a slider stored with its outputs shows as the text ``interactive(children=(...`` or
``VBox(children=(...`` until its cell runs again. Trusted, the widget manager restores the widgets
from the state the notebook stores in its metadata as soon as the kernel is ready, and the
sliders and their plots are drawn on open.

Options after ``lab`` go to JupyterLab unchanged (``--port 8890 --no-browser --ip 0.0.0.0``);
``make lab ARGS="..."`` passes them through.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def trust(folder: Path = NOTEBOOKS) -> list[Path]:
    """Sign every notebook in `folder` as trusted on this machine; returns the ones signed."""
    import nbformat
    from nbformat.sign import NotebookNotary

    notary = NotebookNotary()
    signed = []
    for path in sorted(folder.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if not notary.check_signature(nb):
            notary.sign(nb)
            signed.append(path)
    return signed


def main(args: list[str]) -> int:
    folders = [Path(a) for a in args if not a.startswith("-") and Path(a).is_dir()]
    signed = [p for folder in (folders or [NOTEBOOKS]) for p in trust(folder)]
    if signed:
        print(f"gemvlab: trusted {len(signed)} notebook(s), so their stored widgets are drawn on open")
    if os.geteuid() == 0 and "--allow-root" not in args:
        args = ["--allow-root", *args]  # JupyterLab refuses to run as root unless told to
    if not folders:
        args = [*args, str(NOTEBOOKS)]
    from jupyterlab.labapp import main as lab_main

    sys.argv = ["jupyter-lab", *args]
    return lab_main()
