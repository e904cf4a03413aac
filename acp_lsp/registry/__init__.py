"""The ACP Registry: its catalog of agents, cached, and the agents installed from it."""
