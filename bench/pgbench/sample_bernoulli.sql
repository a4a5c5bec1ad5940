-- The scan-based baseline of sample_swr.sql: about n rows from A.
-- Set pct = 100 * n / rows with -D pct=1.0 (pgbench variables are integers or doubles).
SELECT count(*) FROM a TABLESAMPLE BERNOULLI(:pct);
