"""An AAP v3 (Agent Application Protocol) test server with a scripted model.

Follows the specification (reference/aap.md): ``GET /meta`` (two agents with different
capabilities), sessions create/get/list/delete, history (``compacted``/``full``), turns in
the three stream modes, trusted and untrusted server tools, client-side tools, bearer auth.
Scenarios are picked by keywords in the user's text (see ``model.KEYWORDS``).

Run standalone: ``python -m tests.aap_server --port 8080 [--scenario NAME] [--api-key KEY]``.
In pytest: the ``aap_server`` fixture in ``tests.aap_server.fixtures``.
"""

from tests.aap_server.app import BASE_PATH, create_app
from tests.aap_server.state import AGENTS, AapServer, RecordedRequest, ServerState

__all__ = ["AGENTS", "BASE_PATH", "AapServer", "RecordedRequest", "ServerState", "create_app"]
