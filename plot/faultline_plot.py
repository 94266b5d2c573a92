"""faultline-plot: draw faultline's CSV time series (SPEC 7 and 11).

One panel per metric, stacked over a shared time axis, one line per job: the
layout of the figures in Crotty et al., "Are You Sure You Want to Use MMAP in
Your DBMS?" (throughput per engine, with TLB shootdowns and kswapd below).

Reading, choosing panels and drawing are separate so tests can check the
figure without saving it: read_csv() -> Run, resolve_metrics() -> [Panel],
build_figure() -> matplotlib Figure; main() is the command line.
faultline_compare.py draws two runs' JSON side by side (--compare).

Throughput on a linear axis hides a collapsed job on the zero line next
to a fast one, so a throughput panel (reads or writes) turns logarithmic
when the rates of the jobs issuing its direction lie more than LOG_RATIO
apart (or with --log).

Only the standard library and matplotlib (no pandas), so that Debian's
python3-matplotlib is all a host needs.
"""

import argparse
import csv
import io
import math
import os
import sys

from plotcommon import LOG_RATIO, YSCALES, PlotError, wants_log  # noqa: F401

# SPEC 7's columns, then SPEC 10's write columns, then bufpool's pool
# columns (SPEC 3), then SPEC 15's job_* columns: the header, exactly and
# in this order.
READ_COLUMNS = (
    "t_s", "epoch_ms", "dt_s", "job", "engine", "rw", "threads", "ramp",
    "iops", "mib_s", "lat_p50_us", "lat_p99_us", "lat_max_us",
    "majflt_per_s", "minflt_per_s", "tlb_shootdowns_per_s", "kswapd_cpu_pct",
    "pgscan_per_s", "pgsteal_per_s", "page_cache_mib", "dirty_mib",
    "cgroup_mib", "dev_read_mib_s", "dev_read_iops", "cpu_user_pct",
    "cpu_sys_pct", "cpu_iowait_pct", "cpu_probe_per_s",
)
WRITE_COLUMNS = (
    "w_iops", "w_mib_s", "w_lat_p50_us", "w_lat_p99_us", "flush_per_s",
    "flush_lat_p99_us", "writeback_mib", "dev_write_mib_s", "dev_write_iops",
)
POOL_COLUMNS = ("pool_hit_pct", "pool_evict_per_s")
# SPEC 15: the job's own kernel counters, after the pool's.
JOB_EVENT_COLUMNS = (
    "job_tlb_ipi_per_s", "job_pgcache_add_per_s", "job_direct_reclaim_per_s",
    "job_csw_per_s", "job_dtlb_miss_per_s", "job_tlb_local_per_s",
    "job_faults_per_s", "job_majflt_per_s", "job_migrations_per_s",
    "job_cycles_per_s", "job_tlb_recv_per_s",
)
# What explains a run (issue 19): residency of the job's targets, refaults,
# pressure stall percent (host, and the mem_limit cgroup's on cgroup v2),
# device bytes and CPU time per byte read.
EXPLAIN_COLUMNS = (
    "target_cached_mib", "target_evicted_mib", "target_recent_evicted_mib",
    "refault_per_s", "psi_mem_some_pct", "psi_mem_full_pct",
    "psi_io_some_pct", "psi_io_full_pct", "cg_mem_some_pct",
    "cg_mem_full_pct", "read_amp", "cpu_us_per_4k",
)
# Where a delayacct=1 job's threads' time went (issue 38): shares of threads
# x dt_s adding to 100, the last columns of the row.
TIME_COLUMNS = (
    "time_cpu_pct", "time_runq_pct", "time_blkio_pct", "time_reclaim_pct",
    "time_thrash_pct", "time_compact_pct", "time_swapin_pct", "time_other_pct",
)
TIME_WORDS = ("on CPU", "waiting for a CPU", "waiting for the device",
              "reclaim", "thrashing", "compaction", "swap-in",
              "asleep otherwise")
# Fixed colours, so a part reads the same in every job's panel.
TIME_COLOURS = ("tab:green", "tab:olive", "tab:blue", "tab:red",
                "tab:purple", "tab:brown", "tab:pink", "0.85")
COLUMNS = READ_COLUMNS + WRITE_COLUMNS + POOL_COLUMNS + JOB_EVENT_COLUMNS + EXPLAIN_COLUMNS \
    + TIME_COLUMNS
# After SPEC 7's columns (always first, in order) a CSV may carry any of
# the appended groups, found by name: older CSVs lack some (their cells
# read as empty, NaN), newer ones may hold columns this version does not
# know, which are read by name and otherwise ignored.
OLDER_HEADERS = (READ_COLUMNS,)
TEXT_COLUMNS = ("job", "engine", "rw")
# Appended under MPI (SPEC 14): the row's host and rank, "all" on the row
# that merges every rank's; only those rows are drawn.
MPI_COLUMNS = ("host", "rank")

# Columns the sampler reads once per interval for the whole host and repeats
# on every job's row (SPEC 6). cgroup_mib (one cgroup per mem_limit job) and
# cpu_probe_per_s (a job option) belong to their job.
SYSTEM_COLUMNS = frozenset((
    "tlb_shootdowns_per_s", "kswapd_cpu_pct", "pgscan_per_s", "pgsteal_per_s",
    "page_cache_mib", "dirty_mib", "dev_read_mib_s", "dev_read_iops",
    "cpu_user_pct", "cpu_sys_pct", "cpu_iowait_pct",
    "writeback_mib", "dev_write_mib_s", "dev_write_iops",
    "refault_per_s", "psi_mem_some_pct", "psi_mem_full_pct",
    "psi_io_some_pct", "psi_io_full_pct",
))

# Short names for --metrics; any numeric column name works as well.
SHORT_NAMES = {
    "throughput": ("mib_s",),
    "iops": ("iops",),
    "tlb": ("tlb_shootdowns_per_s",),
    "kswapd": ("kswapd_cpu_pct",),
    "cache": ("page_cache_mib", "cgroup_mib", "target_cached_mib"),
    "cgroup": ("cgroup_mib",),
    "dirty": ("dirty_mib",),
    "dev": ("dev_read_mib_s",),
    "dev_iops": ("dev_read_iops",),
    "faults": ("majflt_per_s",),
    "minflt": ("minflt_per_s",),
    "reclaim": ("pgscan_per_s", "pgsteal_per_s"),
    "lat50": ("lat_p50_us",),
    "lat99": ("lat_p99_us",),
    "latmax": ("lat_max_us",),
    "cpu": ("cpu_user_pct", "cpu_sys_pct", "cpu_iowait_pct"),
    "probe": ("cpu_probe_per_s",),
    "writes": ("w_mib_s",),
    "wiops": ("w_iops",),
    "wlat50": ("w_lat_p50_us",),
    "wlat99": ("w_lat_p99_us",),
    "flush": ("flush_per_s",),
    "flushlat": ("flush_lat_p99_us",),
    "writeback": ("writeback_mib", "dirty_mib"),
    "dev_write": ("dev_write_mib_s",),
    "dev_write_iops": ("dev_write_iops",),
    "pool": ("pool_hit_pct",),
    "evict": ("pool_evict_per_s",),
    "job_tlb": ("job_tlb_ipi_per_s",),
    "job_pgcache": ("job_pgcache_add_per_s",),
    "job_reclaim": ("job_direct_reclaim_per_s",),
    "job_csw": ("job_csw_per_s",),
    "residency": ("target_cached_mib", "target_evicted_mib"),
    "refault": ("refault_per_s",),
    "pressure": ("psi_mem_some_pct", "psi_mem_full_pct", "psi_io_some_pct",
                 "psi_io_full_pct"),
    "cgpressure": ("cg_mem_some_pct", "cg_mem_full_pct"),
    "amp": ("read_amp",),
    "cpu4k": ("cpu_us_per_4k",),
    # One stacked panel per job that has the shares (delayacct=1).
    "time": TIME_COLUMNS,
}

# The paper's figure, top to bottom.
DEFAULT_METRICS = ("throughput", "tlb", "kswapd", "cache", "dev")

# A column that a default panel shows only when the CSV has values for it:
# cgroup_mib exists only for jobs with mem_limit.
OPTIONAL_IN_DEFAULT = frozenset(("cgroup_mib", "target_cached_mib"))

# Y axis label of a panel holding this column (first column of the panel).
AXIS_LABELS = {
    "mib_s": "throughput\nMiB/s",
    "iops": "throughput\nIOPS",
    "tlb_shootdowns_per_s": "TLB\nshootdowns/s",
    "kswapd_cpu_pct": "kswapd\nCPU %",
    "page_cache_mib": "page cache\nMiB",
    "cgroup_mib": "cgroup\nMiB",
    "dirty_mib": "dirty\nMiB",
    "dev_read_mib_s": "device read\nMiB/s",
    "dev_read_iops": "device read\nIOPS",
    "job_tlb_ipi_per_s": "job's TLB\nIPIs sent/s",
    "job_pgcache_add_per_s": "job's page-cache\nadds, pages/s",
    "job_direct_reclaim_per_s": "job's reclaim\nentries/s",
    "job_csw_per_s": "job's context\nswitches/s",
    "majflt_per_s": "major\nfaults/s",
    "minflt_per_s": "minor\nfaults/s",
    "pgscan_per_s": "reclaim\npages/s",
    "lat_p50_us": "latency p50\nus",
    "lat_p99_us": "latency p99\nus",
    "lat_max_us": "latency max\nus",
    "cpu_user_pct": "CPU %",
    "cpu_probe_per_s": "CPU probe\nwork/s",
    "w_iops": "writes\nIOPS",
    "w_mib_s": "writes\nMiB/s",
    "w_lat_p50_us": "write latency\np50 us",
    "w_lat_p99_us": "write latency\np99 us",
    "flush_per_s": "flushes/s",
    "flush_lat_p99_us": "flush latency\np99 us",
    "writeback_mib": "write-back\nMiB",
    "dev_write_mib_s": "device write\nMiB/s",
    "dev_write_iops": "device write\nIOPS",
    "pool_hit_pct": "pool hits\n%",
    "pool_evict_per_s": "pool\nevictions/s",
    "target_cached_mib": "target in\ncache MiB",
    "refault_per_s": "refaults/s",
    "psi_mem_some_pct": "pressure\nstalled %",
    "cg_mem_some_pct": "cgroup memory\nstalled %",
    "read_amp": "device bytes\nper byte read",
    "cpu_us_per_4k": "CPU us\nper 4 KiB",
    "time_cpu_pct": "where the\ntime went %",
}

# How a column is named in a legend when it shares its panel with others.
LINE_SUFFIX = {
    "page_cache_mib": "page cache",
    "cgroup_mib": "cgroup",
    "pgscan_per_s": "scanned",
    "pgsteal_per_s": "stolen",
    "cpu_user_pct": "user",
    "cpu_sys_pct": "sys",
    "cpu_iowait_pct": "iowait",
    "writeback_mib": "write-back",
    "dirty_mib": "dirty",
    "target_cached_mib": "target cached",
    "target_evicted_mib": "evicted",
    "psi_mem_some_pct": "memory some",
    "psi_mem_full_pct": "memory full",
    "psi_io_some_pct": "io some",
    "psi_io_full_pct": "io full",
    "cg_mem_some_pct": "some",
    "cg_mem_full_pct": "full",
}

# Line styles of the 2nd, 3rd, ... column of a panel; colour is the job's.
COLUMN_STYLES = ("-", "--", ":", "-.")

# Colours of lines that stand for several concurrent jobs at once.
SHARED_COLOURS = ("black", "dimgray", "darkgray")

OUTPUT_FORMATS = ("png", "svg", "pdf")

# Panels whose first column is a throughput get the log axis rule, which
# weighs only the jobs that issue the column's direction (by the rw
# column): a write-only job's read rate of 0 is no collapse, nor is a
# read job's write rate.
READ_RWS = frozenset(("read", "randread", "rw", "randrw"))
WRITE_RWS = frozenset(("write", "randwrite", "rw", "randrw"))
THROUGHPUT_DIRECTION = {"mib_s": READ_RWS, "iops": READ_RWS,
                        "w_mib_s": WRITE_RWS, "w_iops": WRITE_RWS}
THROUGHPUT_COLUMNS = frozenset(THROUGHPUT_DIRECTION)



# The cache-full moment (faultline's phases.h, the man page's PHASES): the
# first row whose cache gauge (cgroup_mib when the job has a cgroup, else
# page_cache_mib) is at least FULL_PCT % of its highest value and in which,
# or in the row after it, eviction is seen (target_evicted_mib grew; only
# where the CSV lacks it, pgsteal_per_s > 0). faultline itself, knowing a mem_limit job's limit,
# uses the limit as the ceiling; its JSON (--json) gives its own answer.
FULL_PCT = 95
EVICT_LAG = 1


class Job:
    """One job's rows of one CSV file, in time order."""

    def __init__(self, name, engine, rw=""):
        self.name = name
        self.engine = engine
        self.rw = rw            # its rw column ("" when unknown)
        self.label = "%s (%s)" % (name, engine)
        self.rows = []          # dicts: column -> float (NaN when empty)

    def issues(self, column):
        """Whether the job issues the direction of throughput @column (a
        job whose rw is unknown is taken to)."""
        rws = THROUGHPUT_DIRECTION.get(column)
        return rws is None or not self.rw or self.rw in rws

    def times(self):
        return [r["t_s"] for r in self.rows]

    def values(self, column):
        return [r[column] for r in self.rows]

    def start(self):
        """When the job's first interval began."""
        first = self.rows[0]
        dt = first["dt_s"]
        return first["t_s"] - (dt if math.isfinite(dt) else 0.0)

    def end(self):
        return self.rows[-1]["t_s"]


class Run:
    """One CSV file: its jobs in order of appearance."""

    def __init__(self, path):
        self.path = path
        self.stem = os.path.splitext(os.path.basename(path))[0]
        self.jobs = []


def _parse_number(path, lineno, column, cell):
    cell = cell.strip()
    if cell == "":
        return math.nan        # SPEC 6: empty means "could not be read"
    try:
        return float(cell)
    except ValueError:
        raise PlotError("%s: line %d: column %s: %r is not a number"
                        % (path, lineno, column, cell)) from None


def _check_header(path, header):
    """The columns @header names, when it is a faultline header."""
    got = [h.strip() for h in header]
    n = len(READ_COLUMNS)
    if tuple(got[:n]) == READ_COLUMNS and len(set(got)) == len(got):
        return tuple(got)
    # An MPI launch's CSV (SPEC 14): the same, then host and rank.
    if tuple(got[-2:]) == MPI_COLUMNS and \
            (tuple(got[:-2]) == COLUMNS or tuple(got[:-2]) in OLDER_HEADERS):
        return tuple(got)
    got = [c for c in got if c not in MPI_COLUMNS] \
        if tuple(got[-2:]) == MPI_COLUMNS else got
    what = "not a faultline CSV"
    missing = [c for c in READ_COLUMNS if c not in got]
    extra = [c for c in got if c not in COLUMNS]
    if not missing and len(set(got)) != len(got):
        extra = sorted(set(c for c in got if got.count(c) > 1))
    if not set(got) & set(COLUMNS):
        detail = "the first line is not the faultline header (it starts %r)" \
            % ",".join(got[:3])
    elif missing or extra:
        parts = []
        if missing:
            parts.append("missing column(s) " + ", ".join(missing))
        if extra:
            parts.append("unknown column(s) " + ", ".join(extra))
        detail = "header has " + "; ".join(parts)
    else:
        i = next(i for i, (a, b) in enumerate(zip(got, READ_COLUMNS))
                 if a != b)
        detail = "header column %d is %r, expected %r (columns out of order)" \
            % (i + 1, got[i], READ_COLUMNS[i])
    raise PlotError("%s: %s: %s" % (path, what, detail))


def read_csv(path):
    """Read and check one faultline CSV; return a Run or raise PlotError."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise PlotError("%s: cannot read: %s" % (path, e.strerror or e))
    if b"\0" in raw:
        raise PlotError("%s: not a faultline CSV: binary data, not text"
                        % path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise PlotError("%s: not a faultline CSV: not UTF-8 text (byte %d)"
                        % (path, e.start)) from None
    if not text.strip():
        raise PlotError("%s: empty file: expected the faultline CSV header "
                        "(t_s,epoch_ms,dt_s,job,...)" % path)
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as e:
        raise PlotError("%s: not a faultline CSV: %s" % (path, e)) from None

    columns = _check_header(path, rows[0])
    run = Run(path)
    by_key = {}
    body = rows[1:]
    for n, cells in enumerate(body):
        lineno = n + 2
        if not cells or (len(cells) == 1 and not cells[0].strip()):
            continue
        if len(cells) != len(columns):
            # A run killed mid-write can leave its last line cut short; every
            # finished interval before it is still good (SPEC 7).
            if n == len(body) - 1 and not text.endswith("\n"):
                print("faultline-plot: %s: line %d is incomplete (run "
                      "interrupted?), ignored" % (path, lineno),
                      file=sys.stderr)
                break
            raise PlotError("%s: line %d has %d fields, expected %d"
                            % (path, lineno, len(cells), len(columns)))
        if "rank" in columns and cells[columns.index("rank")].strip() != "all":
            continue
        row = {c: math.nan for c in COLUMNS}
        for column, cell in zip(columns, cells):
            if column in MPI_COLUMNS:
                continue
            if column in TEXT_COLUMNS:
                row[column] = cell.strip()
            elif column in COLUMNS:
                row[column] = _parse_number(path, lineno, column, cell)
            else:
                # A column this version does not know: by name, if numeric.
                try:
                    row[column] = float(cell) if cell.strip() else math.nan
                except ValueError:
                    row[column] = math.nan
        if not math.isfinite(row["t_s"]):
            raise PlotError("%s: line %d: t_s is empty" % (path, lineno))
        key = (row["job"], row["engine"])
        job = by_key.get(key)
        if job is None:
            job = by_key[key] = Job(row["job"], row["engine"],
                                    row.get("rw", ""))
            run.jobs.append(job)
        job.rows.append(row)

    if not run.jobs:
        raise PlotError("%s: no data rows, only the header (the run recorded "
                        "no interval)" % path)
    for job in run.jobs:
        job.rows.sort(key=lambda r: r["t_s"])
    return run


class Panel:
    """One axes: the columns drawn in it and its y label; a time panel
    (stacked shares) belongs to one job, @job (run index, Job, shift)."""

    def __init__(self, name, columns, optional=(), job=None):
        self.name = name
        self.columns = tuple(columns)
        self.optional = frozenset(optional)  # drawn only when they have data
        self.ylabel = AXIS_LABELS.get(columns[0], columns[0])
        self.job = job

    def __repr__(self):
        return "Panel(%s: %s)" % (self.name, ",".join(self.columns))


def resolve_metrics(spec=None):
    """Turn a --metrics value (None: the default) into a list of Panels.

    "iops" given alone replaces throughput in the default layout, so
    `--metrics iops` is the paper's figure in IOPS.
    """
    if spec is None:
        names = list(DEFAULT_METRICS)
        default = True
    else:
        names = [s.strip() for s in spec.split(",") if s.strip()]
        if not names:
            raise PlotError("--metrics: empty list")
        default = False
        if names == ["iops"]:
            names = ["iops"] + list(DEFAULT_METRICS[1:])
            default = True
    numeric = [c for c in COLUMNS if c not in TEXT_COLUMNS]
    panels = []
    for name in names:
        key = name.lower()
        if key in SHORT_NAMES:
            columns = SHORT_NAMES[key]
        elif key in numeric:
            columns = (key,)
        elif key in TEXT_COLUMNS:
            raise PlotError("--metrics: %r is a text column, not a metric"
                            % name)
        else:
            raise PlotError("--metrics: unknown metric %r (short names: %s; "
                            "or any numeric CSV column)"
                            % (name, ", ".join(sorted(SHORT_NAMES))))
        optional = OPTIONAL_IN_DEFAULT & set(columns) if default else ()
        panels.append(Panel(key, columns, optional))
    return panels


def cache_full_t(job):
    """t_s of the job's cache-full row by the CSV rule, or None."""
    rows = job.rows
    gauge = job.values("cgroup_mib")
    if not any(map(math.isfinite, gauge)):
        gauge = job.values("page_cache_mib")
    finite = [v for v in gauge if math.isfinite(v)]
    ceiling = max(finite, default=0.0)
    if ceiling <= 0:
        return None
    # The target's own evictions where the CSV has them; the host's
    # reclaim (anyone's) only where it has not.
    own = any(math.isfinite(v) for v in job.values("target_evicted_mib"))
    evict, source, prev = [], False, math.nan
    for r in rows:
        e, steal = r["target_evicted_mib"], r["pgsteal_per_s"]
        if own:
            source = source or math.isfinite(e)
            evict.append(math.isfinite(e) and math.isfinite(prev) and e > prev)
        else:
            source = source or math.isfinite(steal)
            evict.append(math.isfinite(steal) and steal > 0)
        prev = e
    if source and not any(evict):
        return None
    for i, v in enumerate(gauge):
        if not math.isfinite(v) or v * 100 < ceiling * FULL_PCT:
            continue
        if not source or any(evict[i:i + 1 + EVICT_LAG]):
            return rows[i]["t_s"]
    return None


def read_json_moments(path):
    """{job name: t_s} of the cache-full moments in a faultline JSON."""
    import json
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise PlotError("%s: cannot read: %s" % (path, e.strerror or e))
    except ValueError as e:
        raise PlotError("%s: not faultline JSON: %s" % (path, e)) from None
    out = {}
    for j in doc.get("jobs", []) if isinstance(doc, dict) else []:
        ph = (j.get("faultline") or {}).get("phases") or {}
        if ph.get("cache_full") and isinstance(ph.get("t_s"), (int, float)):
            out[j.get("jobname")] = float(ph["t_s"])
    return out


def _overlap_groups(jobs):
    """Split one file's jobs into groups that ran at the same time.

    Stonewalled jobs each get a group of their own; jobs whose time ranges
    overlap (one shared boundary sample does not count) share one.
    """
    groups = []
    for job in sorted(jobs, key=lambda j: (j.start(), j.end())):
        if groups and job.times()[0] < groups[-1]["end"]:
            groups[-1]["jobs"].append(job)
            groups[-1]["end"] = max(groups[-1]["end"], job.end())
        else:
            groups.append({"jobs": [job], "end": job.end()})
    return [g["jobs"] for g in groups]


def _same(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def _shared_series(group, column):
    """One (times, values) for a system column over concurrent jobs, or None
    when the jobs' rows disagree (then each job gets its own line)."""
    merged = {}
    for job in group:
        for t, v in zip(job.times(), job.values(column)):
            if t in merged and not _same(merged[t], v):
                return None
            merged.setdefault(t, v)
    times = sorted(merged)
    return times, [merged[t] for t in times]


def _with_breaks(times, values, dt):
    """Insert a NaN where samples are missing, so a line shows a gap instead
    of bridging it. dt: the job's sampling interval (NaN when unknown)."""
    if not math.isfinite(dt) or dt <= 0:
        return list(times), list(values)
    out_t, out_v = [], []
    for i, (t, v) in enumerate(zip(times, values)):
        if i and t - times[i - 1] > 1.5 * dt:
            out_t.append((t + times[i - 1]) / 2)
            out_v.append(math.nan)
        out_t.append(t)
        out_v.append(v)
    return out_t, out_v


def _median_dt(job):
    dts = sorted(d for d in job.values("dt_s") if math.isfinite(d) and d > 0)
    return dts[len(dts) // 2] if dts else math.nan


def _ramp_spans(job, shift):
    """[start, end) of the job's ramp-time intervals, adjacent ones merged."""
    spans = []
    for r in job.rows:
        if r["ramp"] != 1:
            continue
        dt = r["dt_s"] if math.isfinite(r["dt_s"]) else 0.0
        a, b = r["t_s"] - dt - shift, r["t_s"] - shift
        if spans and a <= spans[-1][1] + 1e-9:
            spans[-1][1] = max(spans[-1][1], b)
        else:
            spans.append([a, b])
    return spans


def _unique_prefixes(runs):
    """File stems to prefix labels with; paths when two stems collide."""
    if len(runs) < 2:
        return [""] * len(runs)
    stems = [r.stem for r in runs]
    names = [r.path if stems.count(r.stem) > 1 else r.stem for r in runs]
    return [n + ": " for n in names]


def median(values):
    """Median of the finite values, NaN when there are none."""
    v = sorted(x for x in values if math.isfinite(x))
    if not v:
        return math.nan
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def _log_axis(runs, column, yscale):
    """Whether a panel led by @column gets a log axis under --log/--linear
    (@yscale "log", "linear") or the automatic rule ("auto": each job's
    median rate, ramp intervals included, through wants_log)."""
    if column not in THROUGHPUT_COLUMNS or yscale == "linear":
        return False
    if yscale == "log":
        return True
    return wants_log([median(job.values(column))
                      for run in runs for job in run.jobs
                      if job.issues(column)])


def _has_data(runs, column):
    return any(math.isfinite(v)
               for run in runs for job in run.jobs for v in job.values(column))


def _has_nonzero(runs, column):
    return any(math.isfinite(v) and v != 0
               for run in runs for job in run.jobs for v in job.values(column))


def _default_kswapd(panels, runs):
    """The default layout's kswapd panel where kswapd never ran (inside a
    memory cgroup it does not: the jobs reclaim themselves) gives way to
    where the jobs' time went, else to the reclaim the jobs did, else to
    the host's reclaim, else to nothing: no panel shows only zeros."""
    if _has_nonzero(runs, "kswapd_cpu_pct"):
        return panels
    for name in ("time", "job_reclaim", "reclaim"):
        if _has_nonzero(runs, SHORT_NAMES[name][0]) or \
                (name == "time" and _has_data(runs, "time_cpu_pct")):
            return [Panel(name, SHORT_NAMES[name]) if p.name == "kswapd" else p
                    for p in panels]
    return [p for p in panels if p.name != "kswapd"]


def _expand_time(panels, groups):
    """A time panel becomes one per job that has the shares, in the
    jobs' order (a single empty one, saying so, where none has)."""
    out = []
    for p in panels:
        if p.name != "time":
            out.append(p)
            continue
        jobs = [(ri, job, shift) for ri, group, shift in groups for job in group
                if any(math.isfinite(v) for v in job.values("time_cpu_pct"))]
        out += [Panel(p.name, p.columns, job=j) for j in jobs] or [p]
    return out


def _draw_time(ax, job, shift, label, legend):
    """A job's shares stacked over its rows' midpoints; a row without
    them (not read, not root) is a gap."""
    xs, ys = [], [[] for _ in TIME_COLUMNS]
    for r in job.rows:
        dt = r["dt_s"] if math.isfinite(r["dt_s"]) else 0.0
        xs.append(r["t_s"] - dt / 2 - shift)
        for k, c in enumerate(TIME_COLUMNS):
            ys[k].append(r[c])
    ax.stackplot(xs, ys, colors=TIME_COLOURS, labels=TIME_WORDS, linewidth=0)
    ax.set_ylim(0, 100)
    ax.set_ylabel("time %%\n%s" % (label if len(label) <= 24 else label[:23] + "~"))
    if legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  fontsize="small", frameon=False)


def build_figure(paths, metrics=None, title=None, align=False, moments=None,
                 cache_full=True, yscale="auto"):
    """Read the CSV files and draw them; return the matplotlib Figure.

    paths: CSV file names. metrics: a --metrics string, a list of names, or
    None for the default panels. align: measure time from each job's start
    (concurrent jobs keep their common start) so stonewalled jobs overlay,
    as in the paper's figures; otherwise time since the run started.
    moments: {job name: t_s} of cache-full moments (faultline's JSON);
    None: found in the CSV by the rule above. cache_full: draw them, a
    vertical dashed line per job in its colour (fig.cache_full holds
    {label: x} of the lines drawn).
    yscale: the throughput panel's axis, "auto" (log when the jobs' rates
    are more than LOG_RATIO apart), "log" or "linear".
    """
    # Figure without pyplot: no display, no global figure registry.
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    import matplotlib

    if isinstance(metrics, (list, tuple)):
        metrics = ",".join(metrics)
    if yscale not in YSCALES:
        raise PlotError("unknown y scale %r (%s)" % (yscale, ", ".join(YSCALES)))
    panels = resolve_metrics(metrics)
    runs = [read_csv(p) for p in paths]
    prefixes = _unique_prefixes(runs)

    colours = matplotlib.rcParams["axes.prop_cycle"].by_key().get(
        "color", ["C%d" % i for i in range(10)])
    job_style = {}          # id(job) -> (colour, line style, label)
    groups = []             # (run index, [jobs], shift)
    n = 0
    for ri, run in enumerate(runs):
        for group in _overlap_groups(run.jobs):
            shift = min(j.start() for j in group) if align else 0.0
            groups.append((ri, group, shift))
            for job in group:
                # Past the palette, repeat colours with a dashed line.
                job_style[id(job)] = (colours[n % len(colours)],
                                      "-" if n < len(colours) else "--",
                                      prefixes[ri] + job.label)
                n += 1

    if metrics is None or metrics.strip().lower() == "iops":
        panels = _default_kswapd(panels, runs)
    panels = _expand_time(panels, groups)
    fig = Figure(figsize=(10, 1.2 + 2.0 * len(panels)),
                 constrained_layout=True)
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]

    ramp = []               # union of every job's ramp spans
    for a, b in sorted(span for _, group, shift in groups
                       for job in group for span in _ramp_spans(job, shift)):
        if ramp and a <= ramp[-1][1]:
            ramp[-1][1] = max(ramp[-1][1], b)
        else:
            ramp.append([a, b])

    full_x = {}             # job label -> x of its cache-full line
    if cache_full:
        for ri, group, shift in groups:
            for job in group:
                t = (moments.get(job.name) if moments is not None
                     else cache_full_t(job))
                if t is not None:
                    full_x[job_style[id(job)][2]] = (t - shift,
                                                     job_style[id(job)][0])
    fig.cache_full = {k: x for k, (x, _) in full_x.items()}

    shown = None            # labels already in a legend above
    time_legend = True      # the parts' key, once
    for ax, panel in zip(axes, panels):
        if panel.job is not None:
            ri, job, shift = panel.job
            _draw_time(ax, job, shift, job_style[id(job)][2], time_legend)
            time_legend = False
            ax.grid(True, alpha=0.3)
            for a, b in ramp:
                ax.axvspan(a, b, color="0.85", alpha=0.6, linewidth=0, zorder=0)
            continue
        columns = [c for c in panel.columns
                   if c not in panel.optional or _has_data(runs, c)]
        log = _log_axis(runs, panel.columns[0], yscale)
        zeros = False       # a 0 drawn as a mark under a log axis
        for ci, column in enumerate(columns):
            # Colour names the job, line style the column: only the first
            # column's lines carry labels, the styles get a key of their own.
            hide = "_" if ci else ""
            shared_n = 0
            for ri, group, shift in groups:
                series = None
                if column in SYSTEM_COLUMNS and len(group) > 1:
                    series = _shared_series(group, column)
                if series is not None:
                    # Concurrent jobs: the host's value once, not N copies.
                    times, values = series
                    dts = [_median_dt(j) for j in group]
                    dt = min((d for d in dts if math.isfinite(d)),
                             default=math.nan)
                    t, v = _with_breaks(times, values, dt)
                    names = "host (%s)" % " + ".join(j.name for j in group)
                    ax.plot([x - shift for x in t], v,
                            color=SHARED_COLOURS[shared_n
                                                 % len(SHARED_COLOURS)],
                            linestyle=COLUMN_STYLES[ci % len(COLUMN_STYLES)],
                            linewidth=1.2,
                            label=hide + prefixes[ri] + names)
                    shared_n += 1
                    continue
                for job in group:
                    colour, style, label = job_style[id(job)]
                    if ci:
                        style = COLUMN_STYLES[ci % len(COLUMN_STYLES)]
                    values = job.values(column)
                    if len(columns) > 1 and not any(map(math.isfinite,
                                                        values)):
                        continue    # e.g. cgroup of a job without mem_limit
                    t, v = _with_breaks(job.times(), values, _median_dt(job))
                    ax.plot([x - shift for x in t], v, color=colour,
                            linestyle=style, linewidth=1.2,
                            label=hide + label)
                    if log and job.issues(column):
                        # A log axis has no 0: a measured 0 (a stall) is a
                        # mark on the axis's bottom edge, not a lost point.
                        tz = [x - shift for x, y in zip(t, v) if y == 0]
                        if tz:
                            ax.scatter(tz, [0] * len(tz), color=colour,
                                       marker="v", s=18, clip_on=False,
                                       transform=ax.get_xaxis_transform(),
                                       zorder=3, label="_zero")
                            zeros = True
        ax.set_ylabel(panel.ylabel + (" (log)" if log else ""))
        ax.grid(True, alpha=0.3)
        for a, b in ramp:
            ax.axvspan(a, b, color="0.85", alpha=0.6, linewidth=0, zorder=0)
        for x, colour in full_x.values():
            # A collection spanning the axes' height, not a data line: it
            # is no series of the panel and leaves its y range alone.
            ax.vlines(x, 0, 1, transform=ax.get_xaxis_transform(),
                      colors=colour, linestyles="dashed", linewidth=1.0,
                      alpha=0.9, zorder=1, gid="cache_full")

        ys = [y for line in ax.get_lines() for y in line.get_ydata()
              if math.isfinite(y)]
        if not ys:
            ax.text(0.5, 0.5, "no data: %s empty in every row (not readable "
                    "on the recording host)" % ", ".join(columns),
                    transform=ax.transAxes, ha="center", va="center",
                    color="0.4", fontsize="small")
            ax.set_ylim(0, 1)
            ax.set_yticks([])
        elif log and any(y > 0 for y in ys):
            ax.set_yscale("log", nonpositive="mask")
            pos = [y for y in ys if y > 0]
            ax.set_ylim(min(pos) / 2, max(pos) * 2)
        elif min(ys) >= 0:
            # Rates and sizes start at zero: a collapse reads as one.
            ax.set_ylim(0, max(ys) * 1.05 or 1)

        handles, labels = ax.get_legend_handles_labels()
        # A legend where a panel has lines not named above: the top panel
        # names the jobs, a later one its shared host lines or extra columns.
        keys = []
        if len(columns) > 1:
            keys = [Line2D([], [], color="0.3",
                           linestyle=COLUMN_STYLES[i % len(COLUMN_STYLES)],
                           label=LINE_SUFFIX.get(c, c))
                    for i, c in enumerate(columns)]
        if zeros:
            keys.append(Line2D([], [], color="0.3", marker="v",
                               linestyle="none", label="0 (no I/O)"))
        if shown is None or set(labels) - shown or keys:
            new = [(h, l) for h, l in zip(handles, labels)
                   if shown is None or l not in shown]
            handles = [h for h, _ in new] + keys
            if shown is None and ramp:
                handles.append(Patch(color="0.85", label="ramp time"))
            if shown is None and full_x:
                handles.append(Line2D([], [], color="0.3",
                                      linestyle=(0, (4, 2)),
                                      label="cache full (its job's colour)"))
            ax.legend(handles=handles, loc="upper left",
                      bbox_to_anchor=(1.01, 1.0), fontsize="small",
                      frameon=False)
            shown = (shown or set()) | set(labels)

    axes[-1].set_xlabel("time since job start (s)" if align
                        else "time (s)")
    fig.suptitle(title if title is not None
                 else ", ".join(os.path.basename(p) for p in paths))
    return fig


def output_format(path):
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in OUTPUT_FORMATS:
        raise PlotError("-o %s: unknown output format %r (use .png, .svg "
                        "or .pdf)" % (path, "." + ext if ext else ""))
    return ext


HELP_EPILOG = """\
default panels, top to bottom (the paper's figures): throughput (MiB/s),
TLB shootdowns/s, kswapd CPU %%, page cache MiB (plus each job's cgroup MiB,
dashed, when the CSV has mem_limit jobs, and how much of its targets is
cached, dotted, when the CSV has target_cached_mib), device read MiB/s.
Where kswapd never ran (inside a memory cgroup the jobs reclaim themselves),
its panel gives way to where each job's time went (the time_*_pct shares of
delayacct=1, stacked, one panel per job), else to the jobs' own reclaim
(job_direct_reclaim_per_s), else to the host's (pgscan_per_s), else to
nothing: no default panel shows only zeros. `--metrics time` draws the
shares alone.

--metrics takes a comma-separated list of short names or CSV column names,
one panel each, in the order given:
%s
`--metrics iops` alone draws the default panels with IOPS on top.

Lines: one per job, labelled "job (engine)", coloured the same in every
panel; with several files the label starts with the file name. In a panel of
several columns (cache, cpu, reclaim) the line style tells the column.
System-wide columns (TLB, kswapd, reclaim, page cache, dirty, device, CPU)
repeat on every job's row of an interval, so jobs that ran at the same time
share one line, black or grey, labelled "host (jobA + jobB)"; a stonewalled
job, running alone, draws them in its own colour. Empty cells (a source the
host could not read) are gaps, never zeros. Ramp-time intervals are shaded.

A dashed vertical line in a job's colour marks its cache-full moment: the
first interval whose cache (cgroup_mib, else page_cache_mib) is at 95 %% of
its peak with eviction seen then or one interval later (target_evicted_mib
grew; without that column, pgsteal_per_s > 0); --json RUN.json takes faultline's own moments
instead (for mem_limit jobs it uses the limit as the ceiling).

Throughput axes (reads, and the writes panels): logarithmic when one job's
median rate is under 1/%d of another's (a collapsed mmap job next to
io_uring would otherwise sit on the zero line), else linear; only jobs that
issue the panel's direction count (by their rw). --log and --linear decide
instead. On a log axis an interval with no I/O at all is a triangle on the
axis's bottom edge.

--compare A.json B.json draws two runs side by side instead: for each job
(matched by name), bars of IOPS, MiB/s and p99 latency of the reads, and of
the writes when a job wrote, one colour per run; the files are faultline's
JSON (--output-format=json) or fio's. The same log rule applies to each
panel.

exit status: 0 figure written; 1 it could not be written; 2 bad input or
usage (not a faultline CSV or JSON, unknown metric or output format).
"""


def _short_name_table():
    return "\n".join("  %-11s %s" % (k, "+".join(v))
                     for k, v in SHORT_NAMES.items())


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="faultline-plot",
        description="Plot faultline CSV time series (faultline --csv=FILE):\n"
                    "one panel per metric over a shared time axis, one line "
                    "per job.",
        epilog=HELP_EPILOG % (_short_name_table(), LOG_RATIO),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv", nargs="*", metavar="CSV",
                   help="faultline CSV file(s)")
    p.add_argument("--compare", nargs=2, metavar=("A.json", "B.json"),
                   help="bar chart of two runs' JSON instead: IOPS, MiB/s "
                        "and p99 latency per job")
    p.add_argument("-o", "--output", required=True, metavar="FIG",
                   help="output file; format from the suffix: .png .svg .pdf")
    p.add_argument("--metrics", metavar="LIST",
                   help="panels to draw (default: throughput,tlb,kswapd,"
                        "cache,dev)")
    p.add_argument("--title", metavar="T",
                   help="figure title (default: the CSV file names)")
    p.add_argument("--json", metavar="JSON",
                   help="faultline's JSON of the same run: take each job's "
                        "cache-full moment from it (jobs[].faultline.phases) "
                        "instead of finding it in the CSV")
    p.add_argument("--no-cache-full", action="store_true",
                   help="do not mark the cache-full moments")
    p.add_argument("--align", action="store_true",
                   help="time from each job's start, so stonewalled jobs "
                        "overlay as in the paper's figures (concurrent jobs "
                        "keep their common start)")
    scale = p.add_mutually_exclusive_group()
    scale.add_argument("--log", dest="yscale", action="store_const",
                       const="log", default="auto",
                       help="logarithmic throughput axis (default: when one "
                            "job's rate is under 1/%d of another's)"
                            % LOG_RATIO)
    scale.add_argument("--linear", dest="yscale", action="store_const",
                       const="linear", help="linear throughput axis")
    args = p.parse_args(argv)
    if args.compare and args.csv:
        p.error("--compare takes two JSON files, not CSV files as well")
    if not args.compare and not args.csv:
        p.error("give CSV file(s), or --compare A.json B.json")
    if args.compare and (args.metrics or args.align):
        p.error("--metrics and --align draw CSV time series, not --compare")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        fmt = output_format(args.output)
        if args.compare:
            import faultline_compare
            fig = faultline_compare.build_compare_figure(
                args.compare[0], args.compare[1], args.title, args.yscale)
        else:
            moments = read_json_moments(args.json) if args.json else None
            fig = build_figure(args.csv, args.metrics, args.title, args.align,
                               moments, not args.no_cache_full,
                               yscale=args.yscale)
    except PlotError as e:
        print("faultline-plot: %s" % e, file=sys.stderr)
        return 2
    try:
        fig.savefig(args.output, format=fmt, dpi=120)
    except OSError as e:
        print("faultline-plot: %s: cannot write: %s"
              % (args.output, e.strerror or e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
