-- A write-heavy transaction on S(id int8 primary key, a int4, b int4, c int4, d text) with
-- secondary indexes on a, b, c and d (pbtree_pgbench): update two indexed columns of a random
-- existing row (not a HOT update: every index gets a new entry), insert a row, and look up
-- the new row by b through its secondary index. :rows is the number of rows loaded.
\set id random(1, :rows)
\set a random(0, 2147483647)
\set b random(0, 2147483647)
\set c random(0, 2147483647)
BEGIN;
UPDATE s SET a = :a, d = md5(:a::text) WHERE id = :id;
INSERT INTO s VALUES (nextval('s_id'), :c, :b, :a, md5(:b::text));
SELECT count(*) FROM s WHERE b = :b;
END;
