"""The broker's Prometheus metrics (``metrics.http.listener``), one module per concern.

Names follow what Prometheus's JMX exporter makes of Kafka's MBeans:
``kafka_<domain>_<type>_<name>`` in lower case, with the MBean's key
properties as labels (``topic``, ``partition``, ``request``, ``state``) and
``_total`` on counters, e.g. ``kafka_server_brokertopicmetrics_messagesin_total{topic="orders"}``
or ``kafka_network_requestmetrics_totaltimems_bucket{request="Produce",le="5.0"}``.
Latencies are histograms in milliseconds (percentiles come from
``histogram_quantile`` in PromQL). What Kafka has no MBean for (consumer lag,
group and transaction counts by state) takes the closest well-known name.

Hot-path counters (:mod:`topic_metrics`, :mod:`request_metrics`) are plain
integers bumped on the event loop; everything else is read from the broker's
state when Prometheus scrapes (custom collectors). Each broker has its own
registry, so brokers sharing a process never mix their numbers. This package
imports ``prometheus_client`` only in the modules that build the endpoint;
:mod:`listener_address` is what the configuration needs and stays pure.
"""
