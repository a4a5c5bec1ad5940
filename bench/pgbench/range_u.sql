-- A range scan of 100 consecutive keys of U(x, y) (y unique in 1..:rows).
\set k random(1, :rows - 100)
SELECT count(x) FROM u WHERE y BETWEEN :k AND :k + 99;
