"""What a write passes before it is stored: the built-in admission plugins, the admission gate, admission
webhooks and the client that calls them, and CRD conversion webhooks.
"""
