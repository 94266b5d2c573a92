"""faultline-plot: draw faultline's CSV time series (SPEC 7 and 11).

One panel per metric, stacked over a shared time axis, one line per job: the
layout of the figures in Crotty et al., "Are You Sure You Want to Use MMAP in
Your DBMS?" (throughput per engine, with TLB shootdowns and kswapd below).

Reading, choosing panels and drawing are separate so tests can check the
figure without saving it: read_csv() -> Run, resolve_metrics() -> [Panel],
build_figure() -> matplotlib Figure; main() is the command line.

Only the standard library and matplotlib (no pandas), so that Debian's
python3-matplotlib is all a host needs.
"""

import argparse
import csv
import io
import math
import os
import sys

# SPEC 7's columns, then SPEC 10's write columns, then bufpool's pool
# columns (SPEC 3): the header, exactly and in this order.
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
COLUMNS = READ_COLUMNS + WRITE_COLUMNS + POOL_COLUMNS
# A CSV of a faultline from before the write columns, or the pool's,
# still reads; the columns it lacks are empty (NaN).
OLDER_HEADERS = (READ_COLUMNS, READ_COLUMNS + WRITE_COLUMNS)
TEXT_COLUMNS = ("job", "engine", "rw")

# Columns the sampler reads once per interval for the whole host and repeats
# on every job's row (SPEC 6). cgroup_mib (one cgroup per mem_limit job) and
# cpu_probe_per_s (a job option) belong to their job.
SYSTEM_COLUMNS = frozenset((
    "tlb_shootdowns_per_s", "kswapd_cpu_pct", "pgscan_per_s", "pgsteal_per_s",
    "page_cache_mib", "dirty_mib", "dev_read_mib_s", "dev_read_iops",
    "cpu_user_pct", "cpu_sys_pct", "cpu_iowait_pct",
    "writeback_mib", "dev_write_mib_s", "dev_write_iops",
))

# Short names for --metrics; any numeric column name works as well.
SHORT_NAMES = {
    "throughput": ("mib_s",),
    "iops": ("iops",),
    "tlb": ("tlb_shootdowns_per_s",),
    "kswapd": ("kswapd_cpu_pct",),
    "cache": ("page_cache_mib", "cgroup_mib"),
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
}

# The paper's figure, top to bottom.
DEFAULT_METRICS = ("throughput", "tlb", "kswapd", "cache", "dev")

# A column that a default panel shows only when the CSV has values for it:
# cgroup_mib exists only for jobs with mem_limit.
OPTIONAL_IN_DEFAULT = frozenset(("cgroup_mib",))

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
}

# Line styles of the 2nd, 3rd, ... column of a panel; colour is the job's.
COLUMN_STYLES = ("-", "--", ":", "-.")

# Colours of lines that stand for several concurrent jobs at once.
SHARED_COLOURS = ("black", "dimgray", "darkgray")

OUTPUT_FORMATS = ("png", "svg", "pdf")


class PlotError(Exception):
    """Bad input or usage: main() prints the message and exits 2."""


class Job:
    """One job's rows of one CSV file, in time order."""

    def __init__(self, name, engine):
        self.name = name
        self.engine = engine
        self.label = "%s (%s)" % (name, engine)
        self.rows = []          # dicts: column -> float (NaN when empty)

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
    if tuple(got) == COLUMNS or tuple(got) in OLDER_HEADERS:
        return tuple(got)
    what = "not a faultline CSV"
    missing = [c for c in COLUMNS if c not in got]
    extra = [c for c in got if c not in COLUMNS]
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
        i = next(i for i, (a, b) in enumerate(zip(got, COLUMNS)) if a != b)
        detail = "header column %d is %r, expected %r (columns out of order)" \
            % (i + 1, got[i], COLUMNS[i])
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
        row = {c: math.nan for c in COLUMNS}
        for column, cell in zip(columns, cells):
            if column in TEXT_COLUMNS:
                row[column] = cell.strip()
            else:
                row[column] = _parse_number(path, lineno, column, cell)
        if not math.isfinite(row["t_s"]):
            raise PlotError("%s: line %d: t_s is empty" % (path, lineno))
        key = (row["job"], row["engine"])
        job = by_key.get(key)
        if job is None:
            job = by_key[key] = Job(row["job"], row["engine"])
            run.jobs.append(job)
        job.rows.append(row)

    if not run.jobs:
        raise PlotError("%s: no data rows, only the header (the run recorded "
                        "no interval)" % path)
    for job in run.jobs:
        job.rows.sort(key=lambda r: r["t_s"])
    return run


class Panel:
    """One axes: the columns drawn in it and its y label."""

    def __init__(self, name, columns, optional=()):
        self.name = name
        self.columns = tuple(columns)
        self.optional = frozenset(optional)  # drawn only when they have data
        self.ylabel = AXIS_LABELS.get(columns[0], columns[0])

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


def _has_data(runs, column):
    return any(math.isfinite(v)
               for run in runs for job in run.jobs for v in job.values(column))


def build_figure(paths, metrics=None, title=None, align=False):
    """Read the CSV files and draw them; return the matplotlib Figure.

    paths: CSV file names. metrics: a --metrics string, a list of names, or
    None for the default panels. align: measure time from each job's start
    (concurrent jobs keep their common start) so stonewalled jobs overlay,
    as in the paper's figures; otherwise time since the run started.
    """
    # Figure without pyplot: no display, no global figure registry.
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    import matplotlib

    if isinstance(metrics, (list, tuple)):
        metrics = ",".join(metrics)
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

    shown = None            # labels already in a legend above
    for ax, panel in zip(axes, panels):
        columns = [c for c in panel.columns
                   if c not in panel.optional or _has_data(runs, c)]
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
        ax.set_ylabel(panel.ylabel)
        ax.grid(True, alpha=0.3)
        for a, b in ramp:
            ax.axvspan(a, b, color="0.85", alpha=0.6, linewidth=0, zorder=0)

        ys = [y for line in ax.get_lines() for y in line.get_ydata()
              if math.isfinite(y)]
        if not ys:
            ax.text(0.5, 0.5, "no data: %s empty in every row (not readable "
                    "on the recording host)" % ", ".join(columns),
                    transform=ax.transAxes, ha="center", va="center",
                    color="0.4", fontsize="small")
            ax.set_ylim(0, 1)
            ax.set_yticks([])
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
        if shown is None or set(labels) - shown or keys:
            new = [(h, l) for h, l in zip(handles, labels)
                   if shown is None or l not in shown]
            handles = [h for h, _ in new] + keys
            if shown is None and ramp:
                handles.append(Patch(color="0.85", label="ramp time"))
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
dashed, when the CSV has mem_limit jobs), device read MiB/s.

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

exit status: 0 figure written; 1 it could not be written; 2 bad input or
usage (not a faultline CSV, unknown metric or output format).
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
        epilog=HELP_EPILOG % _short_name_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv", nargs="+", metavar="CSV",
                   help="faultline CSV file(s)")
    p.add_argument("-o", "--output", required=True, metavar="FIG",
                   help="output file; format from the suffix: .png .svg .pdf")
    p.add_argument("--metrics", metavar="LIST",
                   help="panels to draw (default: throughput,tlb,kswapd,"
                        "cache,dev)")
    p.add_argument("--title", metavar="T",
                   help="figure title (default: the CSV file names)")
    p.add_argument("--align", action="store_true",
                   help="time from each job's start, so stonewalled jobs "
                        "overlay as in the paper's figures (concurrent jobs "
                        "keep their common start)")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        fmt = output_format(args.output)
        fig = build_figure(args.csv, args.metrics, args.title, args.align)
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
