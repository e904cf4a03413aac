"""Feature modules: each exposes ``register(server)``; server.create_server() wires them."""
