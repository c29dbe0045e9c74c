"""Delta Lake tables written from Spark through ``deltalake`` (delta-rs).

The layers, each reusable on its own:

- :mod:`.schema` — Spark and Arrow schemas as a Delta table stores them, and
  the rules for evolving a table's schema;
- :mod:`.partition_values` — partition values as the Delta log spells them,
  and the Hive-style directories their files go to;
- :mod:`.parquet_files` — what an executor does: write Parquet files (zstd)
  straight into the table's storage and describe them as :class:`DataFile`;
- :mod:`.file_stats` — the per-file statistics readers skip files with;
- :mod:`.table` — what the driver does: read the log (schema, partitioning,
  application transactions) and commit files in one Delta commit;
- :mod:`.options`, :mod:`.writer`, :mod:`.sink` — the ``spate-delta`` Spark
  data source built on them (found by name through ``pyspark_spate_delta``);
- :mod:`.view_offsets`, :mod:`.view_table` — a compacted topic as a table of
  the latest value per key, its offsets committed with its rows;
- :mod:`.compaction_plan`, :mod:`.optimize`, :mod:`.vacuum` — table
  maintenance, with :mod:`.rewrite_guard` keeping concurrent rewrites apart.
"""
