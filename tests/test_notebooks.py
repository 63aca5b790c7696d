"""The notebooks run from top to bottom (with small sizes) and are stored without outputs.

Each notebook has a code cell tagged ``parameters``; the run here adds a cell after it
with smaller values (as papermill does), executes the notebook in a fresh kernel of
this Python, and keeps the executed copy out of the repository.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
KERNEL = "serdes-tests"

SMALL = {
    "01_quickstart": "SYMBOLS = 20_000\nEYE_SYMBOLS = 3_000",
    "02_ber_sweep": 'SYMBOLS = 20_000\nLOSSES = "20:30:5"\nNOISES = "4e-9,16e-9"\nWORKERS = 0',
    "03_equalizers": 'SYMBOLS = 20_000\nFFE_TAPS = "6,12,24"\nDFE_TAPS = "0,1"\n'
                     'ADC_BITS = "5,7"\nADC_ENOB = "4.5,5.5"\nWORKERS = 0',
    "04_real_channels": "SYMBOLS = 20_000\nWORKERS = 0",
    "05_build_your_own": "SYMBOLS = 60_000",
}


def test_every_notebook_has_small_parameters():
    assert [p.stem for p in NOTEBOOKS] == sorted(SMALL)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, \
                f"{path.name}: strip the outputs before committing"
    tagged = [c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: one code cell must be tagged 'parameters'"


@pytest.fixture(scope="module")
def kernel_name(tmp_path_factory, monkeypatch_module):
    """A kernel spec that runs this very interpreter (not whatever 'python3' means on the
    machine)."""
    pytest.importorskip("ipykernel", reason="the notebooks need ipykernel: pip install -e "
                        "'.[test]'")
    d = tmp_path_factory.mktemp("jupyter") / "kernels" / KERNEL
    d.mkdir(parents=True)
    (d / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "serdes tests", "language": "python"}))
    monkeypatch_module.setenv("JUPYTER_PATH", str(d.parent.parent))
    monkeypatch_module.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    return KERNEL


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, kernel_name, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient", reason="the notebooks need nbclient: pip "
                                   "install -e '.[test]'")
    nb = nbformat.read(path, as_version=4)
    at = next(i for i, c in enumerate(nb.cells)
              if "parameters" in c.metadata.get("tags", []))
    small = SMALL[path.stem]
    if "OUT_DIR" in nb.cells[at].source:
        small += f"\nOUT_DIR = {str(tmp_path)!r}"
    cell = nbformat.v4.new_code_cell(small)
    cell.metadata["tags"] = ["injected-parameters"]
    nb.cells.insert(at + 1, cell)
    client = nbclient.NotebookClient(nb, kernel_name=kernel_name, timeout=900,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    if path.stem == "04_real_channels":
        text = "".join(o.get("text", "") for o in nb.cells[at + 2].outputs)
        if "skipped:" in text:
            pytest.skip("the IEEE channel files are not there: " + text.strip())
    images = sum(1 for c in nb.cells if c.cell_type == "code" for o in c.outputs
                 if "image/png" in o.get("data", {}))
    assert images >= 2, f"{path.name} drew {images} figures"
