"""acp-lsp: a language server that brings coding agents (ACP, AAP) into LSP editors."""

__version__ = "0.1.0"
