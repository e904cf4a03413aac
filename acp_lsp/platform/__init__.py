"""What differs between Linux, macOS and Windows, in one place: reading processes
(:mod:`.procs`), stopping them (:mod:`.stop`), where data lives (:mod:`.dirs`) and how paths
compare (:mod:`.paths`). Code elsewhere calls these and never branches on the platform.

Branches use ``sys.platform`` directly (``if sys.platform == "win32":``) so that
``mypy --platform win32`` and ``--platform darwin`` check each side.
"""
