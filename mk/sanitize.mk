# mk/sanitize.mk - sanitizer builds and fuzzing, included by the
# top Makefile.
#
#   make asan         build-asan/faultline and unit tests, ASan + UBSan (gcc)
#   make ubsan        build-ubsan/, UBSan alone
#   make tsan         build-tsan/, ThreadSanitizer
#   make check-asan   unit and end-to-end tests on the asan build
#   make check-tsan   unit tests, then short multi-threaded runs (mmap, psync,
#                     io_uring; sampler at 100 ms) on the tsan build
#   make fuzz         every fuzz/ harness for FUZZ_SECONDS (600) each
#   make check-fuzz   every harness for CHECK_FUZZ_SECONDS (10) each, then
#                     fuzz/regressions/ replayed
#
# Each variant is the top Makefile run again with BUILD and BIN pointing
# into its own directory, so build/ and ./faultline are never touched.
# The flags go in through the environment, not the command line: a
# command-line CFLAGS would replace the Makefile's "CFLAGS += -std=gnu11
# -D_GNU_SOURCE ..." instead of being added to it.

SAN_TOP   := $(firstword $(MAKEFILE_LIST))
SAN_VARS   = asan ubsan tsan

# -O1: fast enough to run the e2e tests, still keeps reports on the right
# lines. -fno-sanitize-recover: an UBSan report fails the run, not just
# prints.
SAN_BASE           = -O1 -g -fno-omit-frame-pointer
SAN_FLAGS_asan     = -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_FLAGS_ubsan    = -fsanitize=undefined -fno-sanitize-recover=all
# gcc warns (-Wtsan) that TSan does not model __atomic_thread_fence: the
# fences here (offload.c's sleepers) order atomic accesses, which TSan
# never reports as races anyway, so the warning would only break -Werror.
SAN_FLAGS_tsan     = -fsanitize=thread -Wno-tsan

# abort_on_error: a report is an abnormal exit whatever exit status an
# e2e test expected; log_path is added for the e2e runs (see check-asan).
SAN_ASAN_OPTS  = detect_leaks=1:abort_on_error=1
SAN_UBSAN_OPTS = halt_on_error=1:print_stacktrace=1
SAN_TSAN_OPTS  = halt_on_error=1:exitcode=66:second_deadlock_stack=1
# Leaks inside libraries we cannot fix from here: tests/lsan.supp says which.
SAN_LSAN_OPTS  = suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
SAN_ASAN_ENV   = ASAN_OPTIONS=$(SAN_ASAN_OPTS) UBSAN_OPTIONS=$(SAN_UBSAN_OPTS) LSAN_OPTIONS=$(SAN_LSAN_OPTS)
SAN_TSAN_ENV   = TSAN_OPTIONS=$(SAN_TSAN_OPTS)

san_tests = $(patsubst tests/%.c,build-$1/tests/%,$(wildcard tests/test_*.c))
# Without BIN in the top Makefile its binary is always ./faultline: stop
# rather than build a sanitized ./faultline or reuse a stale one.
define san_build
	$(if $(BIN),,$(error mk/sanitize.mk: the top Makefile must name its binary $$(BIN), with BIN ?= faultline))
	CFLAGS='$(SAN_BASE) $(SAN_FLAGS_$1)' LDFLAGS='$(SAN_FLAGS_$1)' \
		$(MAKE) -f $(SAN_TOP) BUILD=build-$1 BIN=build-$1/faultline \
		build-$1/faultline $(call san_tests,$1)
endef

.PHONY: asan ubsan tsan check-asan check-asan-late check-tsan fuzz check-fuzz fuzz-build fuzz-deps
asan ubsan tsan:
	$(call san_build,$@)

# Every part runs even after a failure, so one check shows all reports.
# The e2e scripts keep the binary's stderr to themselves, so there the
# reports also go to files and any file at all fails the check. Which
# suites run under ASan: E2E_ASAN (the top Makefile says why, at e2e).
# Beside the root pass (make check), every run of a binary holds the e2e
# lock shared, as each suite does: a suite that runs alone (it counts
# cgroups a run's start may clean, or the host's counters) runs alone.
SAN_LOCK = $(if $(E2E_LOCK),tests/e2e-lock -s $(E2E_LOCK))
# Not chaos nor memory: what they add is the kernel's view of runs ended
# at random moments and of memory limits (processes, cgroups, the OOM
# killer); the code they run is the engines', the sampler's and the
# cgroup module's, which the suites here and test_cgroup, test_memneed
# run under ASan, and both run alone, holding every other lane.
# Shortest first (the alone ones run first anyway): an alone suite of
# the front lane waits for the shared ones running to end, and the
# front's run at the start.
E2E_ASAN = vmcache badinput reqopts shapes reliability async bufpool replay \
	   fio-cli fio-json fio-examples engines verdict telemetry
# The rest of the ASan pass, run by check-asan-late at the end of the
# TSan lane of make check, which ends minutes before the ASan lane
# does: both lanes then share the two CPUs to the end instead of one
# running alone (check-asan runs them too when called by itself).
E2E_ASAN_LATE = runctl writes writeback
# Both passes build the same tree: the second waits for the first's
# build rather than racing it (a no-op once it is built).
san_build_locked = flock $(CURDIR)/build-$1.lock $(MAKE) -f $(SAN_TOP) san-build-$1
san-build-%:
	$(call san_build,$*)
# $1: the suites; $2: the unit tests too (1) or not; $3: the logs' folder.
define asan_pass
	@fail=0; \
	$(if $2,for t in $(call san_tests,asan); do echo "== $$t (asan)"; \
		$(SAN_LOCK) env $(SAN_ASAN_ENV) $$t || fail=1; done;) \
	rm -rf build-asan/$3 && mkdir -p build-asan/$3; \
	$(E2E_RUN) --label=asan $1 -- \
		env ASAN_OPTIONS=$(SAN_ASAN_OPTS):log_path=$(CURDIR)/build-asan/$3/asan \
		    UBSAN_OPTIONS=$(SAN_UBSAN_OPTS):log_path=$(CURDIR)/build-asan/$3/ubsan \
		    LSAN_OPTIONS=$(SAN_LSAN_OPTS) FAULTLINE=$(CURDIR)/build-asan/faultline || fail=1; \
	for l in build-asan/$3/*; do [ -e "$$l" ] || continue; \
		echo "== sanitizer report $$l"; cat "$$l"; fail=1; done; \
	exit $$fail
endef
check-asan: deps
	$(call san_build_locked,asan)
	$(call asan_pass,$(E2E_ASAN) $(if $(ASAN_SPLIT),,$(E2E_ASAN_LATE)),1,logs)
check-asan-late: deps
	$(call san_build_locked,asan)
	$(call asan_pass,$(E2E_ASAN_LATE),,logs-late)

# The unit tests of the modules that run threads. (Not all of them: the
# rest gain nothing, and test_procfs compares two reads of the process's
# own memory map, which TSan's background thread changes in between.)
TSAN_MODULES = worker sampler engine run offload prefetch loop bufpool vmcache pool_pin
TSAN_TESTS   = $(patsubst tests/%.c,build-tsan/tests/%,\
	       $(wildcard $(TSAN_MODULES:%=tests/test_%*.c)))
# Each run has several threads and the sampler at its shortest interval,
# the pattern TSan has to see (workers publish counters, the sampler reads
# them every 100 ms): one run per engine, since each hands out requests
# and completions differently; two concurrent jobs with the CPU probe; an
# event loop handing requests to offload helpers (loop=, offload=); the prefetch
# helper thread; the buffer pool; worker processes (thread=0) started by
# the job's leader thread while the sampler reads their counters; and a
# run stopped by SIGINT (exit 1).
TSAN_COMMON  = --quiet --interval=100ms --csv=/dev/null --output=/dev/null \
	       --filename=$(CURDIR)/build-tsan/scratch/target --size=16m
TSAN_JOB     = --name=tsan --numjobs=4 --rw=randread --time_based
TSAN_MIXED   = --name=scan --ioengine=mmap --rw=read --numjobs=2 --cpu_probe=1 \
	       --runtime=2s --time_based \
	       --name=rand --ioengine=io_uring --iodepth=8 --numjobs=2 --rw=randread \
	       --runtime=2s --time_based
TSAN_OFFLOAD = --name=offload --ioengine=psync --numjobs=1 --loop=4 --offload=4 \
	       --offload_permits=2 --rw=randread --runtime=2s --time_based
TSAN_PREFETCH = --name=prefetch --ioengine=mmap --rw=read --prefetch=touch:4m \
	       --numjobs=2 --runtime=2s --time_based
# The buffer pool: four threads missing, evicting and waiting for each
# other's reads in a pool of 512 frames, next to two scanning through a
# pool of 256 with pread; then three threads reading and writing 1 KiB
# pieces of shared pages in a pool of 64, with flushes, dirty evictions,
# the write-back at the end and the read-back.
TSAN_BUFPOOL = --name=bp --ioengine=bufpool --pool_size=2m --numjobs=4 --rw=randread \
	       --random_distribution=zipf:1.1 --runtime=2s --time_based \
	       --name=bps --ioengine=bufpool --pool_io=psync --pool_size=1m --numjobs=2 \
	       --rw=read --bs=1k --runtime=2s --time_based
TSAN_BUFPOOL_W = --name=bpw --ioengine=bufpool --pool_size=256k --numjobs=3 --rw=randrw \
	       --bs=1k --fsync=16 --verify=crc32c --runtime=2s --time_based
# vmcache: four threads missing and evicting in batches in a
# pool of 512 pages (published latches, the clock, madvise), then three
# threads reading and writing 1 KiB pieces of shared pages in a pool of
# 64, with flushes, dirty pages written back before their batch goes,
# the write-back at the end and the read-back.
TSAN_VMCACHE = --name=vm --ioengine=vmcache --pool_size=2m --numjobs=4 --rw=randread \
	       --random_distribution=zipf:1.1 --runtime=2s --time_based
TSAN_VMCACHE_W = --name=vmw --ioengine=vmcache --pool_size=256k --pool_evict_batch=8 \
	       --numjobs=3 --rw=randrw --bs=1k --fsync=16 --verify=crc32c --runtime=2s --time_based
TSAN_ENGINES = mmap psync io_uring libaio null

check-tsan: deps
	$(call san_build,tsan)
	@fail=0; \
	run() { want=$$1; shift; echo "== $$*" | sed 's|$(CURDIR)/||'; \
		$(SAN_LOCK) env $(SAN_TSAN_ENV) "$$@"; rc=$$?; \
		[ $$rc = $$want ] || { echo "exit $$rc, wanted $$want (66: a TSan report)"; fail=1; }; }; \
	for t in $(TSAN_TESTS); do run 0 $$t; done; \
	mkdir -p build-tsan/scratch; \
	for e in $(TSAN_ENGINES); do \
		run 0 build-tsan/faultline $(TSAN_COMMON) $(TSAN_JOB) --runtime=2s --ioengine=$$e; done; \
	run 0 build-tsan/faultline $(TSAN_COMMON) $(TSAN_MIXED); \
	run 0 build-tsan/faultline $(TSAN_COMMON) $(TSAN_OFFLOAD); \
	run 0 build-tsan/faultline $(TSAN_COMMON) $(TSAN_PREFETCH); \
	run 0 build-tsan/faultline $(TSAN_COMMON) $(TSAN_BUFPOOL); \
	run 0 build-tsan/faultline $(TSAN_COMMON) $(TSAN_BUFPOOL_W); \
	run 0 build-tsan/faultline $(TSAN_COMMON) $(TSAN_VMCACHE); \
	run 0 build-tsan/faultline $(TSAN_COMMON) $(TSAN_VMCACHE_W); \
	run 0 build-tsan/faultline $(TSAN_COMMON) $(TSAN_JOB) --runtime=2s --ioengine=psync --thread=0; \
	run 1 timeout --preserve-status -s INT 1.5 \
		build-tsan/faultline $(TSAN_COMMON) $(TSAN_JOB) --ioengine=mmap --runtime=30s; \
	rm -rf build-tsan/scratch; exit $$fail

# ---- fuzzing (libFuzzer, clang) ----

FUZZ_CC            ?= clang
FUZZ_SECONDS       ?= 600
CHECK_FUZZ_SECONDS ?= 10
FUZZ_BUILD          = build-fuzz
FUZZ_SAN            = -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS         = -O1 -g -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra \
		      -D_GNU_SOURCE -Isrc -Ifuzz $(shell pkg-config --cflags libtracefs libtraceevent 2>/dev/null)
FUZZ_DEB_PKGS       = clang libclang-rt-14-dev llvm

# Each harness links the parser's own sources, not libfaultline.a, so it
# is built with clang's instrumentation from end to end and needs little
# else. The job-file parser checks ioengine against the real engine table
# (names, flags), whose entries pull in liburing and libaio at link time,
# bufpool's and vmcache's their pools and /proc reader; the workload
# shapes' checks pull in gen.c and replay_skip iolog.c (with zlib); the
# harness never runs an engine.
FUZZ_SRCS_procfs_scan_u64          = src/telemetry/procfs.c src/lib/readfile.c src/lib/err.c
FUZZ_SRCS_procfs_parse_tlb         = src/telemetry/procfs.c src/lib/readfile.c src/lib/err.c
FUZZ_SRCS_procfs_parse_vmstat      = src/telemetry/procfs.c src/lib/readfile.c src/lib/err.c
FUZZ_SRCS_procfs_parse_meminfo     = src/telemetry/procfs.c src/lib/readfile.c src/lib/err.c
FUZZ_SRCS_procfs_parse_stat        = src/telemetry/procfs.c src/lib/readfile.c src/lib/err.c
FUZZ_SRCS_procfs_parse_task_stat   = src/telemetry/procfs.c src/lib/readfile.c src/lib/err.c
FUZZ_SRCS_psi_parse                = src/telemetry/psi.c src/telemetry/procfs.c src/lib/readfile.c src/lib/err.c
FUZZ_SRCS_devinfo_parse_block_stat = src/telemetry/devinfo.c src/telemetry/procfs.c src/lib/readfile.c src/lib/err.c
FUZZ_SRCS_devinfo_parse_diskstats  = src/telemetry/devinfo.c src/telemetry/procfs.c src/lib/readfile.c src/lib/err.c
FUZZ_SRCS_iolog_parse              = src/workload/iolog.c src/lib/err.c
FUZZ_SRCS_taskstats_parse_reply    = src/telemetry/taskstats.c src/lib/err.c
FUZZ_LIBS_taskstats_parse_reply    = -lmnl
FUZZ_LIBS_iolog_parse              = -lz
FUZZ_SRCS_perfev_decode_group      = src/telemetry/perfev.c src/telemetry/tracefmt.c src/telemetry/procfs.c src/lib/readfile.c src/lib/err.c
FUZZ_LIBS_perfev_decode_group      = $(shell pkg-config --libs libtracefs libtraceevent 2>/dev/null)
FUZZ_SRCS_jobfile_parse_text       = src/job/jobfile.c src/job/jobcheck.c src/job/options.c src/job/optset.c src/job/optval.c src/job/suggest.c \
				     src/job/optshape.c src/job/optrun.c src/job/optio.c src/job/workloadcfg.c src/workload/gen.c src/workload/zipf.c \
				     src/workload/checksum.c src/workload/pattern.c \
				     src/workload/iolog.c \
				     src/job/fio_options.c src/engines/engines.c $(wildcard src/engines/engine_*.c) \
				     src/engines/bufpool.c src/engines/vmcache.c src/engines/pagedev.c src/engines/pool_pin.c src/engines/pool_span.c \
				     src/telemetry/procfs.c src/lib/readfile.c src/lib/err.c src/out/jobtext.c
FUZZ_LIBS_jobfile_parse_text       = -luring -laio -lm -lz -lisal -lnettle -lxxhash

# A harness whose sources are not all in the tree is not built, and
# fuzz-build fails naming it: a file moved must not quietly end a harness.
fuzz_ready   = $(if $(filter-out $(wildcard $(FUZZ_SRCS_$1)),$(FUZZ_SRCS_$1)),,$1)
FUZZ_ALL     = $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_TARGETS = $(foreach t,$(FUZZ_ALL),$(call fuzz_ready,$t))
FUZZ_SKIPPED = $(filter-out $(FUZZ_TARGETS),$(FUZZ_ALL))
FUZZ_BINS    = $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZ_TARGETS))

# libFuzzer ships in libclang-rt-N-dev on Debian 12: try to link a
# trivial harness, install only when that fails and we are root.
fuzz-deps:
	@echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' | \
	$(FUZZ_CC) -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null && exit 0; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "fuzzing needs clang with libFuzzer ($(FUZZ_DEB_PKGS))"; exit 1; fi; \
	echo "installing: $(FUZZ_DEB_PKGS)"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(FUZZ_DEB_PKGS) >/dev/null

fuzz-build: $(FUZZ_BINS)
	$(if $(FUZZ_SKIPPED),@echo "fuzz: sources missing for: $(FUZZ_SKIPPED) (mk/sanitize.mk's FUZZ_SRCS_*)"; exit 1)

$(FUZZ_BINS): | fuzz-deps

# Sources are compiled into the harness in one step (a few small files);
# a harness rebuilds when its sources, fuzz.h or any header changes.
.SECONDEXPANSION:
$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $$(FUZZ_SRCS_$$*) $(wildcard src/*/*.h)
	@mkdir -p $(FUZZ_BUILD)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< $(FUZZ_SRCS_$*) $(FUZZ_LIBS_$*)

fuzz: fuzz-build
	tests/run-fuzz $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

check-fuzz: fuzz-build
	tests/run-fuzz $(FUZZ_BUILD) $(CHECK_FUZZ_SECONDS) $(FUZZ_TARGETS)

# `make clean` removes the variants' directories too (fuzz corpora with them).
.PHONY: san-clean
clean: san-clean
san-clean:
	rm -rf $(addprefix build-,$(SAN_VARS)) $(FUZZ_BUILD)
