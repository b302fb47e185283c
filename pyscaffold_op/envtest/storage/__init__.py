"""The object store's storage: objects by group-resource and key, resourceVersions, the event history and
the watchers that read it (our etcd and watch cache).
"""
