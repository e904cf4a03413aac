"""Screenshots of a terminal program: tmux capture-pane with escapes -> HTML -> PNG through
headless Chromium (offline; no fonts or network needed beyond the system's monospace)."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
_BASE = [
    "#1e1e2e", "#f38ba8", "#a6e3a1", "#f9e2af", "#89b4fa", "#cba6f7", "#94e2d5", "#bac2de",
    "#585b70", "#f38ba8", "#a6e3a1", "#f9e2af", "#89b4fa", "#cba6f7", "#94e2d5", "#f5f5f5",
]  # fmt: skip
FG, BG = "#e0e0e0", "#1e1e2e"


def chromium() -> str | None:
    for found in sorted((REPO / ".cache").glob("**/chrome-linux*/chrome")):
        return str(found)
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _color256(n: int) -> str:
    if n < 16:
        return _BASE[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return f"#{steps[n // 36]:02x}{steps[n // 6 % 6]:02x}{steps[n % 6]:02x}"
    v = 8 + (n - 232) * 10
    return f"#{v:02x}{v:02x}{v:02x}"


def ansi_to_html(text: str, title: str) -> str:
    """SGR colours and attributes of tmux's capture-pane -e as styled spans."""
    out: list[str] = []
    st: dict[str, object] = {}
    pos = 0

    def span(chunk: str) -> None:
        if not chunk:
            return
        fg, bg = st.get("fg", FG), st.get("bg", BG)
        if st.get("rev"):
            fg, bg = bg, fg
        css = f"color:{fg};background:{bg}"
        if st.get("bold"):
            css += ";font-weight:bold"
        if st.get("ital"):
            css += ";font-style:italic"
        if st.get("ul"):
            css += ";text-decoration:underline"
        out.append(f'<span style="{css}">{html.escape(chunk)}</span>')

    for m in _SGR.finditer(text):
        span(text[pos : m.start()])
        pos = m.end()
        codes = [int(c) if c.isdigit() else 0 for c in re.split("[;:]", m.group(1) or "0")]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                st.clear()
            elif c == 1:
                st["bold"] = True
            elif c == 3:
                st["ital"] = True
            elif c == 4:
                st["ul"] = True
            elif c == 7:
                st["rev"] = True
            elif c in (22, 23, 24, 27):
                st.pop({22: "bold", 23: "ital", 24: "ul", 27: "rev"}[c], None)
            elif 30 <= c <= 37 or 90 <= c <= 97:
                st["fg"] = _BASE[c - 30 if c < 90 else c - 82]
            elif 40 <= c <= 47 or 100 <= c <= 107:
                st["bg"] = _BASE[c - 40 if c < 100 else c - 92]
            elif c == 39:
                st.pop("fg", None)
            elif c == 49:
                st.pop("bg", None)
            elif c in (38, 48) and i + 1 < len(codes):
                key = "fg" if c == 38 else "bg"
                if codes[i + 1] == 5 and i + 2 < len(codes):
                    st[key] = _color256(codes[i + 2])
                    i += 2
                elif codes[i + 1] == 2 and i + 4 < len(codes):
                    st[key] = "#{:02x}{:02x}{:02x}".format(*codes[i + 2 : i + 5])
                    i += 4
            i += 1
    span(text[pos:])
    body = "".join(out)
    # The page takes the most used background (the editor's Normal), so the gaps between
    # lines do not show as stripes.
    bgs = re.findall(r"background:(#[0-9a-f]{6})\">([^<]*)", body)
    weight: dict[str, int] = {}
    for colour, chunk in bgs:
        weight[colour] = weight.get(colour, 0) + len(chunk)
    page_bg = max(weight, key=lambda c: weight[c]) if weight else BG
    return (
        f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>body{{margin:0;background:{page_bg}}}pre{{margin:0;padding:8px;font:14px/1.25 "
        f"'DejaVu Sans Mono','Liberation Mono',monospace;color:{FG};background:{page_bg}}}"
        "</style>"
        f"<pre>{body}</pre>"
    )


def capture(tmux_target: str, socket: str, escapes: bool = True) -> str:
    """The pane as the user sees it (with SGR escapes for colours unless escapes=False)."""
    return subprocess.run(
        [
            "tmux",
            "-L",
            socket,
            "capture-pane",
            "-p",
            *(["-e"] if escapes else []),
            "-t",
            tmux_target,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def render_png(browser: str, page: str, out: Path, width: int, height: int) -> None:
    html_file = out.with_suffix(".html")
    html_file.write_text(page, encoding="utf-8")
    try:
        subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--window-size={width},{height}", f"--screenshot={out}", html_file.as_uri()],
            capture_output=True,
            timeout=120,
            check=True,
        )  # fmt: skip
    finally:
        html_file.unlink(missing_ok=True)
