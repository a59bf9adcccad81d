"""Guards an app needs because a session id is an identifier, not a permission: id
hygiene (ids.py) and tamper-evident handoff receipts (receipt.py)."""
