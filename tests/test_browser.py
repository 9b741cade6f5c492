"""The workbook as a learner sees it: JupyterLab in a real browser (Debian's Chromium, driven by
Playwright), on a machine without a GPU, as in CI.

For every notebook: open it, run all cells, and check that no cell shows an error, every plot is
drawn as an image, the slider is drawn as a widget (not as the text of its repr), and moving the
slider changes its text and leaves a visible plot after every move. And, on notebooks that were not
run: the stored sliders are drawn when the notebook opens. Screenshots go to screenshots/ (ignored
by git).

Chromium comes from the system (`make test` installs Debian's package where it runs as root, as in
CI: tools/browser.sh); without it these tests skip, saying how to get it, unless
GEMVLAB_REQUIRE_BROWSER=1 (CI sets it), when they fail.
"""

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
SHOTS = ROOT / "screenshots"
CHROMIUM = os.environ.get("GEMVLAB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
HOW = ("no Chromium found: install it (sudo apt-get install chromium; `make test` does this where it runs "
       "as root) or set GEMVLAB_CHROMIUM=/path/to/chromium, then run `make test` again")

if not CHROMIUM:
    if os.environ.get("GEMVLAB_REQUIRE_BROWSER") == "1":
        raise RuntimeError(HOW)
    pytest.skip(HOW, allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra has it)")

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage"]
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
WIDGET_TEXT = ("VBox(children", "interactive(children")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab, started the way `make lab` starts it (python -m gemvlab lab), on a copy of the
    notebooks, on a free localhost port with a token; every cell rendered (no windowing)."""
    work = tmp_path_factory.mktemp("workbook")
    for nb in NOTEBOOKS:
        shutil.copy(nb, work / nb.name)
    settings = tmp_path_factory.mktemp("settings")
    tracker = settings / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    news = settings / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings), PYTHONUNBUFFERED="1")
    log = open(tmp_path_factory.mktemp("log") / "lab.log", "w")  # noqa: SIM115 - open while the server runs
    proc = subprocess.Popen(
        [sys.executable, "-m", "gemvlab", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", "--ServerApp.disable_check_xsrf=True", str(work)],
        cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                log.close()
                raise RuntimeError("JupyterLab did not start:\n" + Path(log.name).read_text()[-3000:])
            time.sleep(0.5)
    yield {"url": url, "token": token, "work": work}
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def open_notebook(browser, lab, name):
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    page.goto(f"{lab['url']}/lab/tree/{name}?token={lab['token']}&reset")  # reset: no other tabs restored
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell >> visible=true", timeout=90_000)
    # the kernel is up when the notebook's execution indicator says idle
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
    return page


def slider_outputs(page):
    """The output areas holding a slider widget."""
    return page.locator(".jp-OutputArea-output:has(.widget-slider)")


def run_all(page, timeout_s=300):
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        errors = page.locator(STDERR).all_inner_texts()
        assert not errors, "a cell failed (Run All stops there):\n" + "\n".join(e[:800] for e in errors)
        prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()
        if prompts and all(p.strip().startswith("[") and p.strip()[1:2].isdigit() for p in prompts):
            return
        time.sleep(1)
    raise AssertionError(f"not every cell ran within {timeout_s} s: {prompts}")


def image_drawn(locator) -> bool:
    return locator.evaluate("img => img.complete && img.naturalWidth > 50 && img.getBoundingClientRect().height > 20")


CHANGED = ("([el, old]) => el.innerText !== old && el.querySelector('img') !== null "
           "&& el.querySelector('img').naturalWidth > 50")


def move_slider_and_check(page, name):
    """Move the first slider three times with the arrow keys (right, or left at the end of its
    range): after each move its output text must change and hold one drawn plot."""
    box = slider_outputs(page).first
    handle = box.locator(".noUi-handle").first
    out = box.locator(".widget-output, .jupyter-widgets-output-area").first
    before = out.inner_text()
    for move in range(3):
        for key in ("ArrowRight", "ArrowLeft"):
            handle.focus()
            page.keyboard.press(key)
            try:
                page.wait_for_function(CHANGED, arg=[out.element_handle(), before], timeout=8_000)
                break
            except sync_api.TimeoutError:
                continue  # at the end of the range: the other way
        else:
            raise AssertionError(f"{name}: move {move + 1} changed nothing in the slider's output")
        now = out.inner_text()
        assert now != before, f"{name}: move {move + 1} left the slider's text unchanged"
        imgs = out.locator("img")
        assert imgs.count() == 1 and image_drawn(imgs.first), f"{name}: move {move + 1} left no plot"
        before = now
    box.screenshot(path=str(SHOTS / f"{Path(name).stem}-slider.png"))


def test_sliders_are_drawn_when_a_notebook_opens(browser, lab):
    """Not run: the stored widget state is restored (the notebooks are trusted by `gemvlab lab`)."""
    SHOTS.mkdir(exist_ok=True)
    for nb in NOTEBOOKS:
        page = open_notebook(browser, lab, nb.name)
        page.wait_for_selector(".widget-slider", timeout=60_000)
        outputs = page.locator(".jp-OutputArea-output").all_inner_texts()
        assert not any(t.strip().startswith(WIDGET_TEXT) for t in outputs), f"{nb.name}: a widget shows as text"
        assert slider_outputs(page).first.locator("img").count() >= 1, f"{nb.name}: the stored plot is missing"
        slider_outputs(page).first.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"{nb.stem}-opened.png"))
        page.close()


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name)
def test_run_all_cells_in_the_lab(browser, lab, nb):
    SHOTS.mkdir(exist_ok=True)
    page = open_notebook(browser, lab, nb.name)
    run_all(page)
    errors = page.locator(STDERR).all_inner_texts()
    assert not errors, f"{nb.name}: error output:\n" + "\n".join(e[:500] for e in errors)
    expected_plots = sum(1 for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code"
                         and "plots.plot_" in "".join(c["source"]))
    images = page.locator(".jp-OutputArea-output img")
    drawn = sum(image_drawn(images.nth(i)) for i in range(images.count()))
    assert drawn >= expected_plots, f"{nb.name}: {drawn} images drawn, {expected_plots} plot cells"
    assert slider_outputs(page).count() >= 1, f"{nb.name}: no slider widget drawn"
    outputs = page.locator(".jp-OutputArea-output").all_inner_texts()
    assert not any(t.strip().startswith(WIDGET_TEXT) for t in outputs), f"{nb.name}: a widget shows as text"
    move_slider_and_check(page, nb.name)
    page.screenshot(path=str(SHOTS / f"{nb.stem}-ran.png"), full_page=True)
    page.close()
