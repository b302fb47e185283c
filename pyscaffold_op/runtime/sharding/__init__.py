"""Sharded controllers: the replicas of a manager split its controllers' keys (docs/runtime.md, "Sharding").

`assign` says which member owns a key (rendezvous hashing); `shards` keeps the members (one Lease per
replica), hands keys over without overlap and filters each sharded controller's requests; `flags`
adds `--shards`/`--shard-*` to a manager's command line.
"""
