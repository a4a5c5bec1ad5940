-- n independent uniform draws with replacement from A (paper 000, Fig. 8).
-- Needs TABLESAMPLE swr and an abtree index on a(y); fails until abtree provides them.
-- Set n with -D n=10000.
SELECT count(*) FROM a TABLESAMPLE swr(:n);
