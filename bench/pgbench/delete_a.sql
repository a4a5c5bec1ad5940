-- Delete the rows of a random y range from A (paper 000's deletion thread, Fig. 15).
-- Set the range width with -D width=N: about rows * width / 2^31 rows go per transaction,
-- e.g. 10M rows and -D width=21475 delete about 100.  Needs an index on a(y) to find them.
\set lo random(0, 2147483647 - :width)
\set hi :lo + :width
DELETE FROM a WHERE y >= :lo AND y < :hi;
