from spark_ext.source import SpateDataSource as DefaultSource  # noqa: F401  (pyspark discovers top-level pyspark_* modules)
