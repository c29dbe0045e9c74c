"""Consumer groups of the next-generation rebalance protocol (KIP-848).

Members heartbeat (ConsumerGroupHeartbeat) with their subscription and owned
partitions; the coordinator keeps a group epoch, computes a target assignment
with a server-side assignor (``assignors``) whenever that epoch moves, and
brings each member to its target incrementally (``current_assignment_builder``):
revoke first, then receive partitions once their previous owner released
them. There is no group-wide barrier.
"""
