"""Reading a prompt (command, target file, attachments) and the demo's deterministic edit."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

DEFAULT_TARGETS = ("src/app.py", "README.md")
_WORD = re.compile(r"\S+\s*")
_STRIP = "`'\"()[]<>,;:!?"
_COMMENT = {
    ".md": ("<!-- ", " -->"),
    ".html": ("<!-- ", " -->"),
    ".js": ("// ", ""),
    ".ts": ("// ", ""),
    ".c": ("// ", ""),
    ".rs": ("// ", ""),
    ".go": ("// ", ""),
    ".java": ("// ", ""),
    ".lua": ("-- ", ""),
    ".sql": ("-- ", ""),
}


@dataclass
class PromptInfo:
    """What the demo agent takes from a prompt."""

    blocks: list[dict[str, Any]]
    text: str = ""
    command: str | None = None
    argument: str = ""
    slow: bool = False
    paths: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @staticmethod
    def parse(blocks: list[dict[str, Any]]) -> PromptInfo:
        info = PromptInfo(blocks=blocks)
        texts: list[str] = []
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind == "resource":
                resource = block.get("resource") or {}
                uri = str(resource.get("uri", ""))
                info.paths.append(uri)
                if "text" in resource:
                    lines = len(str(resource["text"]).splitlines())
                    info.notes.append(f"You attached `{_name(uri)}` ({lines} lines).")
                else:
                    info.notes.append(f"You attached `{_name(uri)}` (binary).")
            elif kind == "resource_link":
                info.paths.append(str(block.get("uri", "")))
                info.notes.append(
                    f"You referenced `{block.get('name') or _name(str(block.get('uri')))}`."
                )
            elif kind in ("image", "audio"):
                info.notes.append(f"I can't take {kind} input in this demo, so I ignored it.")
        info.text = " ".join(t.strip() for t in texts if t.strip())
        info.slow = "slow" in info.text.lower()
        if info.text.startswith("/"):
            head, _, rest = info.text[1:].partition(" ")
            info.command, info.argument = head.strip().lower(), rest.strip()
        return info


def _name(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1] or uri


def _uri_path(value: str) -> str:
    if value.startswith("file://"):
        return unquote(urlparse(value).path)
    return value


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def resolve_target(cwd: Path, prompt: PromptInfo) -> Path:
    """The file the turn works on: one the prompt names, else a default one in `cwd`."""
    words = [w.strip(_STRIP) for w in (prompt.argument or prompt.text).split()]
    candidates = [_uri_path(p) for p in prompt.paths] + [w for w in words if w]
    for candidate in candidates:
        path = Path(candidate)
        path = path if path.is_absolute() else cwd / path
        if path.is_file() and _inside(path, cwd):
            return path
    if prompt.command == "edit" and words and words[0] and not Path(words[0]).is_absolute():
        named = cwd / words[0]
        if _inside(named, cwd) and "." in named.name:
            return named  # to be created by the edit
    for default in DEFAULT_TARGETS:
        if (cwd / default).is_file():
            return cwd / default
    first = _first_file(cwd)
    return first if first is not None else cwd / "DEMO.md"


def _first_file(cwd: Path) -> Path | None:
    try:
        entries = sorted(cwd.iterdir())
    except OSError:
        return None
    files = [e for e in entries if e.is_file() and not e.name.startswith(".")]
    if files:
        return files[0]
    for folder in (e for e in entries if e.is_dir() and not e.name.startswith(".")):
        try:
            inner = sorted(
                p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")
            )
        except OSError:
            continue
        if inner:
            return inner[0]
    return None


def review_note(path: Path, turn: int) -> str:
    """The line the demo edit inserts, as a comment in the file's language."""
    start, end = _COMMENT.get(path.suffix.lower(), ("# ", ""))
    return f"{start}acp-lsp demo: reviewed in turn {turn}{end}"


def edited_text(path: Path, old: str | None, turn: int) -> str:
    """The demo's edit: a review note inserted after the first line (or a new file)."""
    note = review_note(path, turn)
    if old is None or old == "":
        return note + "\n"
    newline = "\r\n" if "\r\n" in old else "\n"
    first, sep, rest = old.partition(newline)
    if not sep:
        return first + newline + note + newline
    return first + newline + note + newline + rest


def pieces(text: str, *, words: int) -> list[str]:
    """Split text into chunks of a few words each; joined they give back `text` exactly."""
    tokens = _WORD.findall(text)
    leading = text[: len(text) - len(text.lstrip())]
    chunks = ["".join(tokens[i : i + words]) for i in range(0, len(tokens), words)]
    if leading:
        chunks = [leading + chunks[0], *chunks[1:]] if chunks else [leading]
    return chunks
