"""The cluster controller: one broker, elected through ZooKeeper, decides leadership and tells the others.

``controller.KafkaController`` is the active controller; ``context`` its view
of the cluster; ``partition_state_machine``/``replica_state_machine`` and
``states`` the state machines and their legal transitions; ``leader_election``
the election rules; ``topic_deletion`` and ``reassignment`` the long-running
operations; ``request_batch`` and ``channel_manager`` how brokers are told.
"""
