"""Reading the replay and sweep reports in tests: the charts a page draws, as the figures it passes
to plotly.js, and the proof that a page loads nothing from anywhere."""

from __future__ import annotations

import json
import re
from typing import Any

_DRAW = re.compile(r"<script>fumaroleDraw\((\"[^\"]+\"), (.*?)\);</script>", re.DOTALL)


def drawn_charts(page: str) -> dict[str, dict[str, Any]]:
    """Chart id -> the figure (data and layout) the page draws there."""
    return {json.loads(name): json.loads(spec.replace("<\\/", "</")) for name, spec in _DRAW.findall(page)}


def without_plotly(page: str) -> str:
    """The page less the inlined plotly.js: what fumarole itself wrote."""
    return re.sub(r"<head>(.*?)<script>.*?</script>", r"<head>\1<script></script>", page, count=1, flags=re.DOTALL)


def assert_self_contained(page: str) -> None:
    """Nothing is fetched when the page is opened: no external src/href and no script loaded by URL;
    plotly.js is inlined (its own text mentions URLs it never fetches for these charts)."""
    head_script = re.search(r"<head>.*?<script>(.*?)</script>", page, re.DOTALL)
    assert head_script and "Plotly" in head_script.group(1) and len(head_script.group(1)) > 1_000_000
    rest = page.replace(head_script.group(1), "")
    assert not re.search(r"(src|href)=['\"](?!#|data:)", rest)
    assert "http://" not in rest and "https://" not in rest
    assert "<script src" not in page
