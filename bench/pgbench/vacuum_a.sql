-- VACUUM A, the cleaning step after delete_a.sql.  VACUUM cannot be prepared: run this
-- script with -M simple (e.g. pgbench -n -M simple -t 1 -f vacuum_a.sql).
VACUUM a;
