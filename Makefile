# abtree: PGXS build.
#
# Out-of-tree builds work either way:
#   make -f /path/to/abtree/Makefile VPATH=/path/to/abtree   (in an empty dir)
# or let scripts/build.sh copy the tree into a directory owned by postgres,
# which is what the demo and the test scripts do.
#
# Extra flags for test builds go on the command line, e.g.
#   make PG_CPPFLAGS=-DUSE_ASSERT_CHECKING COPT=-Werror

EXTENSION = abtree
MODULE_big = abtree
EXTVERSION = 0.2
# The install script is generated: the fragments src/sql/NN_*.sql, in order.
# Earlier versions' install scripts, frozen, and the upgrade scripts from each
# to the next are in src/sql/upgrade (README, "Upgrading").
DATA_built = abtree--$(EXTVERSION).sql
DATA = $(patsubst $(srcdir)/%,%,$(wildcard $(srcdir)/src/sql/upgrade/abtree--*.sql))
SQL_FRAGMENTS = $(sort $(wildcard $(srcdir)/src/sql/*.sql))

OBJS = \
	src/citus.o \
	src/init.o \
	src/guc.o \
	src/shmem.o \
	src/status.o \
	src/xlog.o \
	src/abtree/abtbuild.o \
	src/abtree/abtbuildrun.o \
	src/abtree/abtbuildsort.o \
	src/abtree/abtcompare.o \
	src/abtree/abtdraw.o \
	src/abtree/abtdrawweights.o \
	src/abtree/abthandler.o \
	src/abtree/abtinsert.o \
	src/abtree/abtpage.o \
	src/abtree/abtbatch.o \
	src/abtree/abtbatchlock.o \
	src/abtree/abtpass.o \
	src/abtree/abtplanner.o \
	src/abtree/abtposting.o \
	src/abtree/abtrange.o \
	src/abtree/abtrecent.o \
	src/abtree/abtsample.o \
	src/abtree/abtscan.o \
	src/abtree/abtsketch.o \
	src/abtree/abtsketchxlog.o \
	src/abtree/abtsketchsql.o \
	src/abtree/abtsketchrebuild.o \
	src/abtree/abtscratch.o \
	src/abtree/abtsort.o \
	src/abtree/abtstack.o \
	src/abtree/abtvacuum.o \
	src/abtree/abtversions.o \
	src/abtree/abtverify.o \
	src/abtree/abtxlog.o \
	src/abtree/abtfreeze.o \
	src/mvstore/mvs_chain.o \
	src/mvstore/mvs_gc.o \
	src/mvstore/mvs_shmem.o \
	src/mvstore/mvs_sql.o \
	src/hll/chll_estimate.o \
	src/hll/chll_funcs.o \
	src/hll/chll_io.o \
	src/hll/chll_ops.o \
	src/hll/chll_pack.o \
	src/hll/chll_ndistinct.o \
	src/hll/chll_set.o \
	src/hll/chll_sketch.o \
	src/hll/chll_validate.o \
	src/stats/chll_extstats.o \
	src/stats/chll_ndsample.o \
	src/stats/chll_refill.o \
	src/swr/swr_citus.o \
	src/swr/swr_citus_exec.o \
	src/swr/swr_draw.o \
	src/swr/swr_fetch.o \
	src/swr/swr_estimate.o \
	src/swr/swr_index.o \
	src/swr/swr_agg_check.o \
	src/swr/swr_plan.o \
	src/swr/swr_scan.o \
	src/swr/swr_stats.o \
	src/swr/swr_tsm.o \
	src/pbtree/pbtbudget.o \
	src/pbtree/pbtbuild.o \
	src/pbtree/pbtfilter.o \
	src/pbtree/pbthandler.o \
	src/pbtree/pbtinsert.o \
	src/pbtree/pbtpage.o \
	src/pbtree/pbtscan.o \
	src/pbtree/pbtseal.o \
	src/pbtree/pbtsql.o \
	src/pbtree/pbtvacuum.o

# pg_regress suites: sql/*.sql against expected/*.out
REGRESS = extension guc wal abtree_basic abtree_build_sort abtree_posting abtree_opclass abtree_sample abtree_repair abtree_batched abtree_range abtree_cursor abtree_cluster abtree_weights abtree_planner chll chll_io chll_workload abtree_sketch ndistinct swr swr_where swr_stats swr_estimate swr_readahead mvstore pbtree abtree_rls bad_input

# isolation suites: test/isolation/specs/*.spec against test/isolation/expected/*.out
ISOLATION = probe_concurrent abtree_build_snapshot abtree_split_sample abtree_page_copies swr_visibility abtree_weight_pass abtree_weight_rid abtree_sample_bias mvstore_snapshot swr_old_snapshot abtree_sketch_rebuild abtree_fold_snapshot

# TAP suites with PostgreSQL::Test::Cluster
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)

# `override` keeps our include path when PG_CPPFLAGS is given on the command line.
override PG_CPPFLAGS += -I$(srcdir)/src

include $(PGXS)

# PGXS tracks no header dependencies (without --enable-depend): a struct that
# grew in one header left objects built against the old layout (a shared
# counter written at the wrong offset, a sketch operation too small on the
# stack).  Every object depends on every header of ours.
# The same for the bitcode JIT inlines (with_llvm).
ABT_HEADERS = $(wildcard $(srcdir)/src/*.h $(srcdir)/src/*/*.h)
$(OBJS) $(OBJS:.o=.bc): $(ABT_HEADERS)

# The databases the suites run in: PGXS passes --dbname=$(CONTRIB_TESTDB) and
# --dbname=$(ISOLATION_TESTDB) itself (so no --dbname of ours, or there would be two).
CONTRIB_TESTDB = abtree_regress
ISOLATION_TESTDB = abtree_isolation

# PGXS puts the isolation suites next to the regress ones; ours live in test/.
override ISOLATION_OPTS += --inputdir=$(srcdir)/test/isolation

# pbtree has abtree's operator classes: the same file, for the other AM.
abtree--$(EXTVERSION).sql: $(SQL_FRAGMENTS)
	cat $^ > $@
	sed -e 's/USING abtree/USING pbtree/g' \
		-e 's/Operator classes and families of the abtree access method/The same operator classes for pbtree (generated from 20_abtree_opclasses.sql)/' \
		$(srcdir)/src/sql/20_abtree_opclasses.sql >> $@

# Each suite on its own, so that scripts/test.sh can run all of them and
# count every result even when an earlier suite fails.
.PHONY: check-regress check-isolation check-tap
check-regress:
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(REGRESS)
check-isolation:
	$(pg_isolation_regress_installcheck) $(ISOLATION_OPTS) $(ISOLATION)
check-tap:
	$(prove_installcheck)

# Benchmarks (bench/README.md): bench/run starts throwaway clusters of its own and writes
# bench/results/.  BENCH_ARGS picks experiments, e.g. make bench-quick BENCH_ARGS=insert_nbtree
.PHONY: bench bench-quick
bench:
	$(srcdir)/bench/run --full $(BENCH_ARGS)
bench-quick:
	$(srcdir)/bench/run --quick $(BENCH_ARGS)
