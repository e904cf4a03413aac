"""Feature modules: each exposes ``register(server)``; acp_lsp.app.create_server() wires them."""
