"""The records coordinators keep in internal topics, as Kafka declares them.

``consumer_offsets``: the group coordinator's ``__consumer_offsets``;
``transaction_log``: the transaction coordinator's ``__transaction_state``.
Both the broker and the ``spate`` command read them.
"""
