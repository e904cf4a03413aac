"""The startup baseline: a pygls language server with no features at all."""

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("bare", "1").start_io()
