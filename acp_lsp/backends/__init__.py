"""Agent backends: each speaks one agent protocol (ACP over stdio, AAP over HTTP)."""
