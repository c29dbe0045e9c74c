"""The producer: accumulator, batches, the sender thread, partitioning, idempotence and transactions."""
