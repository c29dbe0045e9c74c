"""Log compaction: the cleaner that keeps the latest record of every key.

``plan`` (what a cleaning covers, from the broker's own planner or from
outside), ``offset_map`` (the bounded key -> latest offset map),
``record_scan`` and ``batch_rewrite`` (records in and out of a batch),
``segment_cleaner`` (rewriting a group of segments), ``swap`` (the crash-safe
replacement of segments on disk), ``cleaner_checkpoint`` (how far each log is
clean), ``cleaner_manager`` (which log is due), ``log_cleaner`` (the
background threads) and ``throttler``.
"""
