from __future__ import annotations

import shutil
import subprocess

import pytest
from test_mitigation import DRAFT, VERDICTS

from mitigation.mitigator import Mitigator


def test_report_html_marks_claims_and_escapes(tmp_path) -> None:
    page = Mitigator("balanced").mitigate(DRAFT, VERDICTS).to_html()
    assert page.startswith("<!DOCTYPE html>") and "http" not in page.split("<body>")[0]
    assert page.count('class="claim supported"') == 2 + 1  # two claims + the legend
    assert 'class="claim contradicted"' in page and 'class="claim insufficient"' in page
    assert "“It was constructed from 1887 to 1889.” — <code>wiki/eiffel [10, 47]</code>" in page
    from verifier.types import Claim, ClaimVerdict, Status

    nasty = ClaimVerdict(Claim("<b>x</b> & y.", (0, 13)), Status.SUPPORTED)
    assert "<b>x</b>" not in Mitigator().mitigate("<b>x</b> & y.", [nasty]).to_html()


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="chromium is not installed (make test "
                    "installs Debian's chromium where it can)")
def test_report_html_highlights_render_in_headless_chromium(tmp_path) -> None:
    import matplotlib.image as mpimg
    import numpy as np

    page = tmp_path / "report.html"
    page.write_text(Mitigator("balanced").mitigate(DRAFT, VERDICTS).to_html())
    shot = tmp_path / "shot.png"
    subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--window-size=1000,700",
                    f"--screenshot={shot}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    img = (mpimg.imread(shot)[..., :3] * 255).round().astype(int)

    def count(rgb: tuple[int, int, int]) -> int:
        return int((np.abs(img - np.array(rgb)).sum(axis=2) <= 12).sum())

    assert count((200, 240, 200)) > 500, "no green (supported) highlight rendered"
    assert count((247, 185, 185)) > 500, "no red (contradicted) highlight rendered"
    assert count((255, 233, 154)) > 500, "no yellow (not verified) highlight rendered"
