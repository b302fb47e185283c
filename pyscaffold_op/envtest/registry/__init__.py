"""What the server serves and how each resource behaves on a write: served resources, CRDs, defaulting,
built-in fields, per-kind strategies, scale, graceful deletion, object-meta rules, server-side apply and
managedFields, patch semantics.
"""
