from spark_ext.delta.sink import SpateDeltaDataSource as DefaultSource  # noqa: F401  (pyspark discovers top-level pyspark_* modules)
