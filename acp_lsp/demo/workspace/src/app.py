"""A tiny greeting application for the acp-lsp demo."""

import sys

from util import slugify, title_case


def greet(name: str) -> str:
    return f"Hello, {title_case(name)}!"


def main(argv: list[str]) -> int:
    name = " ".join(argv) or "world"
    sys.stdout.write(greet(name) + "\n")
    sys.stdout.write(f"slug: {slugify(name)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
