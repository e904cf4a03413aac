"""What agents change on disk behind the bridge: snapshots and the changes between them."""
