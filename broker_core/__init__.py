"""The Spate broker: configuration, storage, cluster metadata, replication, coordinators and the server.

It speaks the Kafka wire format through ``spate.protocol`` and ``spate.records``
and never imports the client, the CLI or pyspark.
"""
