"""A self-contained HTML report of a mitigated answer.

Each claim is highlighted by status, with its evidence shown on hover or focus (click); the
reference list and the edits follow.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mitigation.mitigator import Edit, MitigatedAnswer

STATUS_CLASS = {"Supported": "supported", "Contradictory": "contradicted",
                "Insufficient_Info": "insufficient"}

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:56rem;
margin:2rem auto;padding:0 1rem;line-height:1.6;color:#1d1d1f}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}
.answer{font-size:1.05rem;padding:1rem;border:1px solid #ddd;border-radius:8px;white-space:pre-wrap}
.claim{position:relative;border-radius:4px;padding:1px 2px;cursor:pointer;outline:none}
.claim.supported{background:#c8f0c8}.claim.contradicted{background:#f7b9b9}
.claim.insufficient{background:#ffe99a}.claim.unverifiable{background:#e3e3e3}
.claim.corrected{background:#bcdcff}
.claim .ev{display:none;white-space:normal;position:absolute;left:0;top:1.6em;z-index:10;
width:28rem;
background:#fff;border:1px solid #999;border-radius:6px;padding:.5rem;font-size:.85rem;
box-shadow:0 2px 8px rgba(0,0,0,.2)}
.claim:hover .ev,.claim:focus .ev{display:block}
.legend span{margin-right:1rem;padding:1px 6px;border-radius:4px}
table{border-collapse:collapse;width:100%;font-size:.9rem}td,th{border:1px solid #ddd;padding:4px}
.scores{color:#444}
"""


def _claim_class(e: Edit) -> str:
    if e.action == "kept" and e.reason.startswith("not verifiable"):
        return "unverifiable"
    if e.action == "corrected":
        return "corrected"
    if e.action == "hedged":  # a supported claim hedged for a HIGH finding is not shown green
        return STATUS_CLASS["Insufficient_Info"]
    return STATUS_CLASS[e.status.value]


def _shown_text(answer: MitigatedAnswer, e: Edit) -> str | None:
    if e.action == "removed":
        return None
    if e.replacement is not None:
        return e.replacement
    return answer.draft[e.span[0]:e.span[1]]


def _tooltip(e: Edit) -> str:
    parts = [f"<b>{html.escape(e.status.value)}</b> · {html.escape(e.action)}: "
             f"{html.escape(e.reason)}"]
    for ev in e.evidence:
        parts.append(f"<br>“{html.escape(ev.content)}” — <code>{html.escape(ev.source_id)}"
                     f" {list(ev.span)}</code>")
    for f in e.findings:
        parts.append(f"<br>⚠ {html.escape(f.severity.value)}: {html.escape(f.message)}")
    return "".join(parts)


def to_html(answer: MitigatedAnswer, *, title: str = "Verified answer") -> str:
    """Render ``answer`` as one HTML page with inline CSS and no external resources.

    Claims are highlighted where the rewriting put them (:attr:`Edit.body_span`); an edit
    without that offset is looked for in the final text in draft order. A removed claim is
    listed under the edits only.
    """
    body = answer.body
    found: list[tuple[int, int, Edit]] = []
    pos = 0
    for e in answer.edits:
        if e.action == "removed":
            continue
        if e.body_span is not None:
            found.append((*e.body_span, e))
            continue
        shown = _shown_text(answer, e) or ""
        at = body.find(shown, pos) if shown else -1
        if at >= 0:
            found.append((at, at + len(shown), e))
            pos = at + len(shown)
    out, pos = [], 0
    for start, end, e in sorted(found, key=lambda x: x[:2]):
        if start < pos or not body[start:end]:
            continue  # overlapping or empty: listed under the edits only
        out.append(html.escape(body[pos:start]))
        out.append(f'<span class="claim {_claim_class(e)}" tabindex="0" '
                   f'data-status="{html.escape(e.status.value)}">{html.escape(body[start:end])}'
                   f'<span class="ev">{_tooltip(e)}</span></span>')
        pos = end
    out.append(html.escape(body[pos:]))
    # line breaks and indentation (a code block's) shown as written: white-space:pre-wrap
    answer_html = "".join(out)
    refs = "".join(
        f"<li value=\"{r.number}\"><code>{html.escape(r.source_id)}</code> {list(r.span)}: "
        f"“{html.escape(r.excerpt)}”</li>" for r in answer.references)
    rows = "".join(
        f"<tr><td>{i}</td><td>{html.escape(e.claim)}</td><td>{html.escape(e.status.value)}</td>"
        f"<td>{html.escape(e.action)}</td><td>{html.escape(e.reason)}</td></tr>"
        for i, e in enumerate(answer.edits, start=1))
    legend = ('<p class="legend"><span class="claim supported">supported</span>'
              '<span class="claim contradicted">contradicted</span>'
              '<span class="claim corrected">corrected from the evidence</span>'
              '<span class="claim insufficient">not verified</span>'
              '<span class="claim unverifiable">opinion / not checkable</span></p>')
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{_CSS}</style></head><body>
<h1>{html.escape(title)}</h1>{legend}
<div class="answer">{answer_html}</div>
<p class="scores">Grounding score {answer.grounding_score:.2f} · hallucination score
{answer.hallucination_score:.2f} · strictness {html.escape(answer.strictness)}</p>
<h2>References</h2><ol>{refs}</ol>
<h2>Claims</h2><table><tr><th>#</th><th>claim</th><th>status</th><th>action</th><th>reason</th>
</tr>{rows}</table>
</body></html>
"""
