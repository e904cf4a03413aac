"""Small text helpers used by app.py."""

import re


def slugify(text: str) -> str:
    """Lower-case words joined by dashes: "Hello, World" -> "hello-world"."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)


def title_case(text: str) -> str:
    return " ".join(word.capitalize() for word in text.split())
