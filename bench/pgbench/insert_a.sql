-- One random row into A(x, y), as paper 000's inserting clients do (Fig. 8).
\set x random(0, 2147483647)
\set y random(0, 2147483647)
INSERT INTO a VALUES (:x, :y);
