"""The operation record: its types, record keys and module addresses, statuses, and the pure rules between them."""
