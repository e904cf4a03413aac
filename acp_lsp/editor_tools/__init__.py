"""The editor's intelligence as MCP tools for agents (diagnostics, definition, references,
hover, symbols, open editors, selection, openFile, openDiff), served per session by the bridge.

tools: what the agent sees; convert: MCP <-> LSP shapes; router: who answers a call;
http: the MCP endpoint (streamable HTTP on 127.0.0.1).
"""
