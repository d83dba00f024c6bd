"""The HTML report looked at in a real browser: headless Chromium renders it to a PNG."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from rewardlab.evaluate import calibration
from rewardlab.evaluate.audit import report as rp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _report() -> rp.Report:
    rng = np.random.default_rng(0)
    probs = rng.uniform(size=300)
    labels = rng.uniform(size=300) < probs
    rel = calibration.reliability(probs, labels)
    figures = [
        ("reliability", rp.plot_reliability(rel.confidence.tolist(), rel.accuracy.tolist(), rel.count.tolist())),
        ("hist", rp.plot_hist_by_label(probs.tolist(), labels.tolist())),
    ]
    section = rp.Section("Probes", columns=["probe", "flagged"], rows=[["hedge", 3], ["empty", 0]],
                         figures=figures, examples=["<script>alert(1)</script> is escaped"], flag_cols=(1,))
    stamps = rp.stamps(spec_hash="abc", data=None, seed=0)
    return rp.Report("browser check", stamps, [("reward", "demo")], [section], {"ece": calibration.ece(probs, labels)})


@pytest.mark.slow
def test_report_renders_in_headless_chromium(tmp_path):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium, or `make system-deps`)")
    html, _ = _report().write(tmp_path)
    assert "&lt;script&gt;" in html.read_text()  # autoescaped
    shot = tmp_path / "shot.png"
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1100,1400",
        html.as_uri(),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)  # (H, W, 4) floats in [0, 1]
    assert pixels.shape[:2] == (1400, 1100)
    rgb = pixels[..., :3]
    # Something was drawn: not a blank page — plot colours (blue bars/points) and dark text.
    assert (rgb < 0.3).all(axis=-1).mean() > 0.002
    blue = (rgb[..., 2] > 0.6) & (rgb[..., 0] < 0.4)
    assert blue.mean() > 0.001
