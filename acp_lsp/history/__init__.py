"""Sessions that outlive the process: a SQLite store the bridge writes as sessions go."""
