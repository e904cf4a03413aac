-- The Neovim plugin (this directory) as a rock: `./run release` lints it, builds it from the
-- plugin's release tarball and packs it. Renamed with each version (tests/unit/test_version_drift.py).
rockspec_format = "3.0"
package = "acp-lsp.nvim"
version = "0.1.0-1"
source = {
  url = "https://github.com/acp-lsp/acp-lsp/releases/download/v0.1.0/acp-lsp.nvim-0.1.0.tar.gz",
  dir = "acp-lsp.nvim-0.1.0",
}
description = {
  summary = "Coding agents (ACP, AAP) in Neovim through the acp-lsp language server",
  detailed = [[
Chat, tool calls, permissions, reviewable edits and follow-along for Claude, Gemini CLI, Codex,
Qwen Code or any ACP or AAP agent, on Neovim's built-in LSP client. Needs the acp-lsp server
(PyPI: acp-lsp) at the same version.]],
  homepage = "https://github.com/acp-lsp/acp-lsp",
  license = "Apache-2.0",
  labels = { "neovim", "lsp", "ai" },
}
dependencies = {}
build = {
  type = "builtin",
  -- modules come from lua/ (luarocks finds them); these are Neovim's runtime directories
  copy_directories = { "plugin", "doc", "lsp" },
}
