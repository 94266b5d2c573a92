# faultline - build, test, demo.
#
#   make          build ./faultline
#   make check    install missing Debian packages, build, run every test
#                 (LOAD=1: with a CPU hog and a buffered writer beside)
#   make demo     install missing packages, build, run the demo job, plot it
#   make install  the binary, faultline-plot, the man page, the bundled jobs
#                 and the plot helpers under $(DESTDIR)$(PREFIX); make uninstall
#   make deb      faultline_VERSION_ARCH.deb with dpkg-deb
#
# Packages come from the distribution, not vendored; `make deps` installs the
# missing ones with apt-get when run as root on Debian.

CC      ?= gcc
PKGS     = liburing jansson numa libisal blkid zlib libtracefs libtraceevent nettle libxxhash libmnl libbpf
CFLAGS  ?= -O2 -g
# snprintf into fixed buffers truncates on purpose (messages, names), so
# -Wformat-truncation would flag every bounded snprintf.
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -Wno-format-truncation -D_GNU_SOURCE -pthread -fno-strict-aliasing
CFLAGS  += $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# Open MPI's mpi.h only: libmpi is loaded at run time, under mpirun (src/mpi/ranks.c).
CFLAGS  += $(shell pkg-config --cflags ompi-c 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -laio -lm -ldl -pthread
TEST_LDLIBS = $(shell pkg-config --libs cmocka 2>/dev/null)

BUILD   ?= build
BIN     ?= faultline

# The project's version (--version, the summary, JSON, the package), and
# the git commit it is built from ("unknown" outside a git checkout).
VERSION := 0.1.0
GIT_COMMIT := $(shell git -C $(CURDIR) describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
# Where `make install` puts it; the binary finds its helpers relative to
# itself first (src/lib/datadir.c), then here.
PREFIX  ?= /usr/local
DESTDIR ?=
DATADIR  = $(PREFIX)/share/faultline
CFLAGS  += -DFAULTLINE_DATADIR='"$(DATADIR)"'
# src/ in folders by stage (src/README.md); objects mirror them in $(BUILD).
SRCS    := $(filter-out %.bpf.c,$(wildcard src/*.c src/*/*.c))
LIBOBJS := $(patsubst src/%.c,$(BUILD)/%.o,$(filter-out src/main.c,$(SRCS)))
TESTS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_*.c))

# Debian packages behind each need: header or tool -> package. The
# tests make filesystems and partition tables on loop devices (mkfs.ext4:
# e2fsprogs, sfdisk: fdisk) and watch a run's opens (strace). Open MPI
# (many hosts): mpi.h to build (libopenmpi-dev), mpirun to run and test
# (openmpi-bin); the binary loads libmpi only when started by mpirun.
DEB_PKGS = liburing-dev libaio-dev libnuma-dev libjansson-dev libcmocka-dev \
	   pkg-config fio python3-matplotlib libisal-dev libblkid-dev \
	   e2fsprogs fdisk strace openmpi-bin libopenmpi-dev zlib1g-dev libtracefs-dev libtraceevent-dev \
	   nettle-dev libxxhash-dev libmnl-dev libbpf-dev bpftool clang
# What only the tests need: a browser to open verdict.html in, a venv for
# fio-plot from PyPI (tests/e2e/fioplot.sh), and a real database to
# capture (tests/e2e/capture.sh, tests/pg-scratch: PostgreSQL 15's server,
# initdb and pgbench).
CHECK_DEB_PKGS = chromium python3-venv postgresql

.PHONY: all check check-lanes check-modules check-deps demo deps unit e2e e2e-front e2e-beside e2e-unprivileged plot-tests clean \
	install uninstall deb
all: $(BIN)

$(BIN): $(BUILD)/main.o $(BUILD)/demo_job.o $(BUILD)/libfaultline.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# Rewritten only when the version or the commit changed, so main.o is
# rebuilt then and only then.
.PHONY: FORCE
$(BUILD)/version.h: FORCE | $(BUILD)
	@printf '#define FAULTLINE_VERSION "%s"\n#define FAULTLINE_COMMIT "%s"\n' \
		'$(VERSION)' '$(GIT_COMMIT)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@

$(BUILD)/main.o: src/main.c $(BUILD)/version.h | $(BUILD)
	$(CC) $(CFLAGS) -Isrc -I$(BUILD) -MMD -MP -c -o $@ $<

# jobs/demo.job, embedded as a C string for `faultline --demo`.
$(BUILD)/demo_job.c: jobs/demo.job | $(BUILD)
	{ echo '/* generated from jobs/demo.job by the Makefile */'; \
	  echo 'const char demo_job_text[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } > $@

$(BUILD)/demo_job.o: $(BUILD)/demo_job.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/libfaultline.a: $(LIBOBJS)
	rm -f $@ && ar rcs $@ $^

# faultline --capture's BPF method (src/capture/capture.bpf.c): clang
# compiles it for BPF against vmlinux.h, the running kernel's types
# dumped from its BTF by bpftool (CO-RE: the object then loads on any
# kernel with BTF), and bpftool makes the skeleton capbpf.c includes.
# A build host without BTF builds without it (FAULTLINE_NO_BPF): the
# capture then has only its tracepoint method.
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
BPF_CLANG ?= clang
BTF_VMLINUX ?= /sys/kernel/btf/vmlinux
BPF_ARCH := $(subst x86_64,x86,$(subst aarch64,arm64,$(shell uname -m)))
ifeq ($(wildcard $(BTF_VMLINUX)),)
CFLAGS += -DFAULTLINE_NO_BPF
else
$(BUILD)/vmlinux.h: | $(BUILD)
	$(BPFTOOL) btf dump file $(BTF_VMLINUX) format c > $@.tmp && mv $@.tmp $@

$(BUILD)/capture/capture.bpf.o: src/capture/capture.bpf.c src/capture/capbpfrec.h $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(BPF_CLANG) -target bpf -g -O2 -D__TARGET_ARCH_$(BPF_ARCH) -I$(BUILD) -Isrc -c -o $@ $<

$(BUILD)/capture/capture.skel.h: $(BUILD)/capture/capture.bpf.o
	$(BPFTOOL) gen skeleton $< name capture_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/capture/capbpf.o: $(BUILD)/capture/capture.skel.h
$(BUILD)/capture/capbpf.o: CFLAGS += -I$(BUILD)/capture
endif

# Headers are named with their folder ("engines/engine.h"), from src/.
$(BUILD)/%.o: src/%.c | $(BUILD)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Isrc -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(BUILD)/libfaultline.a | $(BUILD)/tests
	$(CC) $(CFLAGS) -Isrc -DFIXTURES='"$(CURDIR)/tests/fixtures"' -o $@ $< \
		$(BUILD)/libfaultline.a $(LDFLAGS) $(TEST_LDLIBS) $(LDLIBS)

$(BUILD) $(BUILD)/tests:
	mkdir -p $@

-include $(wildcard $(BUILD)/*.d $(BUILD)/*/*.d)

# Install what is missing, only what is missing, only where we can.
# $(call install_missing,PACKAGES)
define install_missing
	@missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
			echo "faultline needs:$$missing (install them, or run make as root on Debian)"; exit 1; \
		fi; \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi
endef

deps:
	$(call install_missing,$(DEB_PKGS))

check-deps:
	$(call install_missing,$(DEB_PKGS) $(CHECK_DEB_PKGS))

# Under make check the unit tests take the e2e lock shared, as the
# sanitizer lanes' do: some make and clean up cgroups and files of the
# host's, which an alone suite of another clone must not see change.
unit: $(TESTS)
	@fail=0; for t in $(TESTS); do echo "== $$t"; \
		$(if $(E2E_LOCK),tests/e2e-lock -s $(E2E_LOCK)) $$t || fail=1; done; exit $$fail

# ---- end-to-end suites (tests/e2e/*.sh, run by tests/run-e2e) ----
# Three passes, each for what only it can find:
#   e2e               every suite, as root: the behaviour.
#   e2e-unprivileged  as nobody, the suites whose behaviour differs without
#                     root (one warning per source it cannot read,
#                     an empty cell rather than a 0, exit 2 for what needs
#                     root): the others would repeat the root pass's paths
#                     or skip (loop devices, cgroups, tracefs).
#   check-asan        under AddressSanitizer (mk/sanitize.mk), the suites
#                     that reach code the unit tests do not: every engine
#                     and pool, writes and verify, shapes and replay,
#                     fio's job files and outputs, run control, event
#                     loops, errors, the sampler's columns, write-back
#                     tracing and the verdict (mk/sanitize.mk says which
#                     it leaves to the root pass, and why).
# E2E_LOCK (a file) lets passes run side by side: a suite marked
# "# e2e: alone" (it reads what any process on the host changes) runs
# while no other does (tests/run-e2e).
E2E_ALL      = $(filter-out lib,$(patsubst tests/e2e/%.sh,%,$(wildcard tests/e2e/*.sh)))
E2E_NOBODY   = badinput checksys delayacct events explain memory reqopts telemetry verdict writeback
E2E_LOCK    ?=
E2E_RUN      = tests/run-e2e $(if $(E2E_LOCK),--lock=$(E2E_LOCK))
# LOAD=1 (or FAULTLINE_E2E_LOAD=1 in the environment): the loaded mode.
# make check and make e2e run inside tests/load-beside, a CPU hog (more
# with LOAD_CPUS=N) and a steady buffered writer beside every test, stopped and cleaned
# when the run ends, failed or not: no test may rest on a quiet host.
LOAD        ?= $(FAULTLINE_E2E_LOAD)
LOAD_BESIDE  = $(if $(filter-out 0,$(LOAD)),tests/load-beside)

e2e: $(BIN)
	@FAULTLINE=$(CURDIR)/$(BIN) $(LOAD_BESIDE) $(E2E_RUN) $(E2E_ALL)

# make check splits the root pass in two lanes (check-lanes below):
# E2E_BESIDE runs beside the front lane once the TSan lane's own work is
# done, the other suites in front. Only suites that take the lock shared
# (no "# e2e: alone"), the longest ones, so that both lanes end together;
# the shortest first, as the front's alone suites may still be running.
E2E_BESIDE = fio-cli runctl replay mpi install mpi-hosts verdict
E2E_FRONT  = $(filter-out $(E2E_BESIDE),$(E2E_ALL))
e2e-front: $(BIN)
	@FAULTLINE=$(CURDIR)/$(BIN) $(E2E_RUN) $(E2E_FRONT)
e2e-beside: $(BIN)
	@FAULTLINE=$(CURDIR)/$(BIN) $(E2E_RUN) --label=beside $(E2E_BESIDE)

# As nobody: a copy of the tests and the binary that nobody can read.
# Skipped (said so) when not root or without setpriv.
e2e-unprivileged: $(BIN)
	@if [ "$$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then \
		echo "e2e-unprivileged: skipped (needs root and setpriv to drop to nobody)"; exit 0; fi; \
	tmp=$$(mktemp -d /tmp/faultline-unpriv.XXXXXX) && chmod 755 $$tmp && \
	cp -r tests man $$tmp/ && cp $(BIN) $$tmp/faultline && chmod -R a+rX $$tmp && \
	$(E2E_RUN) --label="as nobody" $(E2E_NOBODY:%=$$tmp/tests/e2e/%.sh) -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		env FAULTLINE=$$tmp/faultline E2E_CSV_SECONDS=3; rc=$$?; \
	rm -rf $$tmp; exit $$rc

plot-tests:
	plot/run-tests

# No include cycle between modules and no file over 1000 lines in src/
# (STYLE). The self-test first shows, on made-up trees, that it can fail.
# And tests/check-outputs, one window per figure over faultline's
# JSON and CSV files (tests/e2e/lib.sh runs it over every suite's
# outputs), shows on made-up outputs that it finds each flaw it looks for.
check-modules:
	tests/check-modules --self-test
	tests/check-modules
	tests/check-outputs --self-test

# Every suite runs even when an earlier one fails; the status says if any
# did, and each one's time is printed, to keep CI under its 15 minutes.
# Four lanes: in front, the modules check, the unit tests, the
# end-to-end suites as root but E2E_BESIDE, and the plot tests; beside
# them, at the lowest CPU priority, the ASan build and pass; the TSan
# build, the fuzzing smoke run (it takes no lock, so it runs while the
# alone suites hold it), the TSan pass, then, at the front's priority,
# the root suites of E2E_BESIDE, and, at the lowest priority again,
# the last ASan suites (E2E_ASAN_LATE: the ASan lane was the longest by
# minutes); and the unprivileged pass, from the start, so that its
# alone suites run among the front's (after the others, an alone suite
# waits for a moment when no shared one runs, and the pass ended last). The lanes beside are printed when done. The
# end-to-end suites of all lanes share E2E_LOCK:
# one marked alone runs by itself (tests/run-e2e). The lock is the host's
# (CHECK_LOCK), not the clone's: two make checks at once, or a suite run
# by hand with tests/run-e2e --lock=$(CHECK_LOCK), keep out of each
# other's alone suites too. It is never removed (a holder would keep an
# unlinked file while the next run locked a new one).
CHECK_LOCK ?= $(firstword $(wildcard /run/lock) /tmp)/faultline-e2e.lock
CHECK_FRONT  = check-modules unit e2e-front plot-tests
CHECK_ASAN   = check-asan
CHECK_TSAN   = tsan check-fuzz check-tsan e2e-beside check-asan-late
CHECK_NOBODY = e2e-unprivileged
# On a failure, tests/check-summary ends the output with what failed, as
# CI shows a log's tail.
check: check-deps
	$(MAKE) $(BIN) $(TESTS)
	@{ $(LOAD_BESIDE) $(MAKE) --no-print-directory check-lanes LOAD=0 FAULTLINE_E2E_LOAD= 2>&1; \
		echo $$? >build-check.rc; } | tee build-check.log; \
	rc=$$(cat build-check.rc 2>/dev/null || echo 2); [ "$$rc" = 0 ] || tests/check-summary build-check.log; \
	rm -f build-check.rc build-check.log; exit $$rc

# The lanes of make check (above), once the binary and tests are built.
# A lane beside runs its steps at nice 19, but the root suites: they are
# the front's pass, split in two.
check-lanes:
	@fail=0; t0=$$(date +%s); lock=$(CHECK_LOCK); touch $$lock; rm -f build-beside.rc; \
	lane() { for s in "$$@"; do t=$$(date +%s); n=19; [ $$s != e2e-beside ] || n=0; \
		nice -n $$n $(MAKE) --no-print-directory $$s E2E_LOCK=$$lock ASAN_SPLIT=1 || { echo 1 >build-beside.rc; echo "== check: $$s FAILED"; }; \
		echo "== check: $$s took $$(($$(date +%s) - t)) s (beside, ended at $$(($$(date +%s) - t0)) s)"; done; }; \
	lane $(CHECK_NOBODY) >build-beside-nobody.log 2>&1 & nobody=$$!; \
	lane $(CHECK_ASAN) >build-beside-asan.log 2>&1 & asan=$$!; \
	lane $(CHECK_TSAN) >build-beside-tsan.log 2>&1 & tsan=$$!; \
	for s in $(CHECK_FRONT); do t=$$(date +%s); \
		$(MAKE) --no-print-directory $$s E2E_LOCK=$$lock || { fail=1; echo "== check: $$s FAILED"; }; \
		echo "== check: $$s took $$(($$(date +%s) - t)) s (ended at $$(($$(date +%s) - t0)) s)"; done; \
	t=$$(date +%s); wait $$nobody $$asan $$tsan; \
	echo "== check: waited $$(($$(date +%s) - t)) s for the lanes beside: $(CHECK_NOBODY); $(CHECK_ASAN); $(CHECK_TSAN)"; \
	cat build-beside-nobody.log build-beside-asan.log build-beside-tsan.log; [ ! -e build-beside.rc ] || fail=1; \
	rm -f build-beside-nobody.log build-beside-asan.log build-beside-tsan.log build-beside.rc; \
	echo "== check: all suites took $$(($$(date +%s) - t0)) s"; \
	exit $$fail

# ---- install ----
# bin/faultline, bin/faultline-plot (a wrapper that runs the installed
# plot helpers), share/man/man1/faultline.1.gz, share/faultline/jobs (the
# bundled jobs and their README), share/faultline/plot (the Python helpers
# and verdict-html). INSTALLED lists every file, for uninstall.
JOBS_INST = $(wildcard jobs/*.job jobs/*.gz) jobs/README
PLOT_INST = plot/faultline-plot plot/pick-python plot/verdict-html $(wildcard plot/*.py)
INSTALLED = bin/faultline bin/faultline-plot share/man/man1/faultline.1.gz \
	    $(patsubst jobs/%,share/faultline/jobs/%,$(JOBS_INST)) \
	    $(patsubst plot/%,share/faultline/plot/%,$(PLOT_INST))

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(DATADIR)/jobs $(DESTDIR)$(DATADIR)/plot
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/faultline
	printf '#!/bin/sh\n# faultline-plot: the installed plot helper (share/faultline/plot).\nhere=$$(dirname "$$(readlink -f "$$0")")\nfor d in "$$here/../share/faultline/plot" "%s/plot"; do\n\t[ -x "$$d/faultline-plot" ] && exec "$$d/faultline-plot" "$$@"\ndone\necho "faultline-plot: its helpers are missing (looked in $$here/../share/faultline/plot and %s/plot)" >&2\nexit 2\n' \
		'$(DATADIR)' '$(DATADIR)' > $(DESTDIR)$(PREFIX)/bin/faultline-plot
	chmod 755 $(DESTDIR)$(PREFIX)/bin/faultline-plot
	gzip -9n < man/faultline.1 > $(DESTDIR)$(PREFIX)/share/man/man1/faultline.1.gz
	chmod 644 $(DESTDIR)$(PREFIX)/share/man/man1/faultline.1.gz
	install -m 644 $(JOBS_INST) $(DESTDIR)$(DATADIR)/jobs/
	install -m 644 $(filter %.py,$(PLOT_INST)) $(DESTDIR)$(DATADIR)/plot/
	install -m 755 $(filter-out %.py,$(PLOT_INST)) $(DESTDIR)$(DATADIR)/plot/

# Exactly what install wrote, then the folders it made if they are empty.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))
	rm -rf $(DESTDIR)$(DATADIR)/plot/__pycache__
	-rmdir $(DESTDIR)$(DATADIR)/jobs $(DESTDIR)$(DATADIR)/plot $(DESTDIR)$(DATADIR) 2>/dev/null

# A Debian package, built with dpkg-deb from an install into a staging
# tree (PREFIX=/usr). Depends: the package of every shared library the
# binary links (found with ldd and dpkg -S; names only, any version of
# the same soname serves), python3-matplotlib for faultline-plot.
DEB_ARCH  = $(shell dpkg --print-architecture 2>/dev/null)
DEB_FILE  = faultline_$(VERSION)_$(DEB_ARCH).deb
DEB_STAGE = $(abspath $(BUILD))/deb
deb:
	@command -v dpkg-deb >/dev/null || { echo "make deb needs dpkg-deb (Debian's dpkg)"; exit 1; }
	rm -rf $(DEB_STAGE)
	$(MAKE) --no-print-directory BUILD=$(BUILD)/deb-build BIN=$(BUILD)/deb-build/faultline \
		PREFIX=/usr DESTDIR=$(DEB_STAGE) install
	mkdir -p $(DEB_STAGE)/DEBIAN
	deps=$$(ldd $(BUILD)/deb-build/faultline | awk '$$3 ~ /^\// { print $$3 }' | \
		while read -r lib; do dpkg -S "$$(readlink -f "$$lib")" 2>/dev/null || dpkg -S "$$lib" 2>/dev/null; done | \
		cut -d: -f1 | sort -u | while read -r p; do printf '%s, ' "$$p"; done); \
	{ echo "Package: faultline"; echo "Version: $(VERSION)"; echo "Architecture: $(DEB_ARCH)"; \
	  echo "Maintainer: faultline developers <faultline@localhost>"; \
	  echo "Installed-Size: $$(du -sk $(DEB_STAGE)/usr | cut -f1)"; \
	  echo "Depends: $${deps}python3, python3-matplotlib"; \
	  echo "Recommends: openmpi-bin, fio"; \
	  echo "Section: admin"; echo "Priority: optional"; \
	  echo "Description: what mmap costs a database, measured (fio-style I/O tool)"; \
	  echo " faultline runs fio-style jobs through mmap, pread, io_uring, libaio and"; \
	  echo " buffer pools, and samples the kernel's evidence beside the throughput:"; \
	  echo " TLB shootdowns, kswapd, faults, reclaim, page cache, device traffic."; \
	} > $(DEB_STAGE)/DEBIAN/control
	dpkg-deb --root-owner-group --build $(DEB_STAGE) $(DEB_FILE)
	@echo "deb: $(DEB_FILE)"

demo: deps
	$(MAKE) faultline
	FAULTLINE_DEMO_PLOT=1 ./faultline --demo
	plot/faultline-plot faultline-demo.csv -o faultline-demo.png --align \
		--title "faultline demo: 1 GiB file, 256 MiB of page cache"
	@echo "demo: $(CURDIR)/faultline-demo.csv (time series), faultline-demo.json, faultline-demo.png (plot)"

clean:
	rm -rf $(BUILD) $(BIN)

# asan, ubsan, tsan, fuzz and their check-* targets.
include mk/sanitize.mk
