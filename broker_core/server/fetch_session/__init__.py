"""Incremental fetch sessions (KIP-227): the broker's side.

A fetcher that opens a session names all its partitions once; afterwards it
sends only the partitions whose fetch position changed (and the ones it
forgets), and the broker answers only the partitions with something new. See
``fetch_manager`` for the request rules, ``session`` for what is remembered
and ``cache`` for the bounded store and its eviction rules.
"""
