"""faultline-plot --compare: two runs side by side, from their JSON.

For each job (matched by jobname, in the order the first file lists them,
then the second's own), one group of bars per panel: IOPS, MiB/s and p99
latency of the reads, and the same of the writes when a job of either run
wrote, one colour per run. The files are faultline's JSON
(--output-format=json or json+) or fio's: only fields both write are read
(jobs[].jobname; read.iops, read.bw in KiB/s, the 99th percentile of
clat_ns or lat_ns, and write's), so a fio run and a faultline run of the
same job file compare too.

read_run() -> CompareRun, build_compare_figure() -> matplotlib Figure;
faultline_plot.main() is the command line.
"""

import json
import math
import os

from plotcommon import YSCALES, PlotError, wants_log

# The panels: (key in CompareJob, y label); the write panels only when a
# job of either run wrote, the read panels unless no job read.
READ_PANELS = (
    ("iops", "IOPS"),
    ("mib_s", "MiB/s"),
    ("p99_us", "p99 latency\nus"),
)
WRITE_PANELS = (
    ("w_iops", "write IOPS"),
    ("w_mib_s", "write MiB/s"),
    ("w_p99_us", "write p99\nlatency us"),
)
PANELS = READ_PANELS + WRITE_PANELS

# fio's percentile key (printed with "%f").
P99 = "99.000000"

RUN_COLOURS = ("C0", "C1")


class CompareJob:
    """One job's figures; NaN where the file has none (latency off, or no
    write object in an old file). reads/writes: requests it completed in
    each direction (0 when it did not issue that direction)."""

    def __init__(self, name, iops, mib_s, p99_us, w_iops=math.nan,
                 w_mib_s=math.nan, w_p99_us=math.nan, reads=math.nan,
                 writes=math.nan):
        self.name = name
        self.iops = iops
        self.mib_s = mib_s
        self.p99_us = p99_us
        self.w_iops = w_iops
        self.w_mib_s = w_mib_s
        self.w_p99_us = w_p99_us
        self.reads = reads
        self.writes = writes


class CompareRun:
    """One JSON file: its label and its jobs by name, in order."""

    def __init__(self, path, label, jobs):
        self.path = path
        self.label = label
        self.jobs = jobs            # list of CompareJob

    def job(self, name):
        return next((j for j in self.jobs if j.name == name), None)


def _number(x):
    """A JSON number as float; NaN for null, absent or not a number."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return math.nan
    return float(x)


def _p99_us(read):
    """The 99th percentile in us: clat_ns (fio's default home of its
    percentiles), else lat_ns (fio's lat_percentiles=1)."""
    for key in ("clat_ns", "lat_ns"):
        pct = (read.get(key) or {}).get("percentile") or {}
        v = _number(pct.get(P99))
        if math.isfinite(v):
            return v / 1000.0
    return math.nan


def read_run(path):
    """Read one faultline or fio JSON file; raise PlotError when it is not
    one (with what is wrong)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise PlotError("%s: cannot read: %s" % (path, e.strerror or e))
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise PlotError("%s: not JSON (%s); --compare reads faultline's "
                        "--output-format=json or fio's" % (path, e)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise PlotError("%s: not faultline or fio JSON: no \"jobs\" array"
                        % path)
    jobs = []
    for i, j in enumerate(doc["jobs"]):
        if not isinstance(j, dict) or not isinstance(j.get("read"), dict):
            raise PlotError("%s: jobs[%d] has no \"read\" object" % (path, i))
        name = j.get("jobname")
        if not isinstance(name, str):
            raise PlotError("%s: jobs[%d] has no jobname" % (path, i))
        r = j["read"]
        w = j.get("write") if isinstance(j.get("write"), dict) else {}
        jobs.append(CompareJob(name, _number(r.get("iops")),
                               _number(r.get("bw")) / 1024.0, _p99_us(r),
                               _number(w.get("iops")),
                               _number(w.get("bw")) / 1024.0, _p99_us(w),
                               _number(r.get("total_ios")),
                               _number(w.get("total_ios"))))
    if not jobs:
        raise PlotError("%s: no jobs" % path)
    stem = os.path.splitext(os.path.basename(path))[0]
    return CompareRun(path, stem, jobs)


def panels_for(runs):
    """The panels two runs need: the writes' when any job wrote, the
    reads' unless every job only wrote."""
    jobs = [j for r in runs for j in r.jobs]
    wrote = any(j.writes > 0 for j in jobs)
    read = not wrote or any(not j.writes > 0 or j.reads > 0 for j in jobs)
    return (READ_PANELS if read else ()) + (WRITE_PANELS if wrote else ())


def _job_names(a, b):
    names = [j.name for j in a.jobs]
    names += [j.name for j in b.jobs if j.name not in names]
    return names


def _panel_log(runs, names, key, yscale):
    if yscale == "linear":
        return False
    if yscale == "log":
        return True
    values = [getattr(r.job(n), key) for r in runs for n in names
              if r.job(n) is not None]
    return wants_log(values)


def build_compare_figure(path_a, path_b, title=None, yscale="auto"):
    """Read two runs' JSON and draw them side by side; return the Figure."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    if yscale not in YSCALES:
        raise PlotError("unknown y scale %r (%s)" % (yscale, ", ".join(YSCALES)))
    runs = [read_run(path_a), read_run(path_b)]
    if runs[0].label == runs[1].label:
        runs[0].label, runs[1].label = path_a, path_b
    names = _job_names(*runs)
    common = [n for n in names if all(r.job(n) for r in runs)]
    if not common:
        raise PlotError("%s and %s have no job name in common (%s vs %s)"
                        % (path_a, path_b,
                           ", ".join(j.name for j in runs[0].jobs),
                           ", ".join(j.name for j in runs[1].jobs)))

    width = 0.38
    panels = panels_for(runs)
    fig = Figure(figsize=(max(6.0, 1.6 + 1.3 * len(names)),
                          2.5 * len(panels)),
                 constrained_layout=True)
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    xs = list(range(len(names)))
    for ax, (key, ylabel) in zip(axes, panels):
        log = _panel_log(runs, names, key, yscale)
        drawn = []
        for ri, run in enumerate(runs):
            offset = (ri - 0.5) * width
            for x, n in zip(xs, names):
                job = run.job(n)
                v = getattr(job, key) if job else math.nan
                if not math.isfinite(v) or (log and v <= 0):
                    # Not measured, not in this run, or 0 on a log axis:
                    # say so where the bar would be, never draw a made-up one.
                    ax.text(x + offset, 0.02, "n/a" if not math.isfinite(v)
                            else "0", transform=ax.get_xaxis_transform(),
                            ha="center", va="bottom", fontsize="x-small",
                            color=RUN_COLOURS[ri], rotation=90)
                    continue
                ax.bar(x + offset, v, width, color=RUN_COLOURS[ri],
                       label="_" + run.label)
                drawn.append(v)
        if log and drawn:
            ax.set_yscale("log")
            pos = [v for v in drawn if v > 0]
            ax.set_ylim(min(pos) / 2, max(pos) * 2)
        ax.set_ylabel(ylabel + (" (log)" if log else ""))
        ax.grid(True, axis="y", alpha=0.3)
    axes[-1].set_xticks(xs)
    axes[-1].set_xticklabels(names, rotation=20, ha="right")
    axes[0].legend(handles=[Patch(color=RUN_COLOURS[i], label=r.label)
                            for i, r in enumerate(runs)],
                   loc="upper left", bbox_to_anchor=(1.01, 1.0),
                   fontsize="small", frameon=False)
    fig.suptitle(title if title is not None
                 else "%s vs %s" % (runs[0].label, runs[1].label))
    return fig

