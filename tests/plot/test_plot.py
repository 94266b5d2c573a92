"""Tests for plot/faultline-plot (plot/faultline_plot.py), and for the
answer figure of plot/verdict-html (plot/verdict_html.py).

Run with plot/run-tests, which picks the same Python as the tool. Each test
checks one behaviour, on the CSVs in tests/fixtures/csv or on small files it
writes itself. The last line printed is "N passed, N failed".
"""

import contextlib
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PLOT_DIR = os.path.join(ROOT, "plot")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "csv")
sys.path.insert(0, PLOT_DIR)

import faultline_plot as fp  # noqa: E402
import matplotlib.colors  # noqa: E402
import faultline_compare as fc  # noqa: E402
import verdict_html as vh  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

STONEWALL = os.path.join(FIXTURES, "x86-stonewall-randread.csv")  # 3 jobs
ARM64 = os.path.join(FIXTURES, "arm64-memlimit-scan.csv")   # 2, concurrent
RAMP = os.path.join(FIXTURES, "x86-ramp-seqscan.csv")       # 2, concurrent
# Recorded: the paper's figure 2 with two mmap jobs collapsed to ~0.4 MiB/s
# next to ~85 and ~150 MiB/s (4 stonewalled jobs).
FIG2 = os.path.join(FIXTURES, "x86-fig2-memlimit.csv")

HEADER = ",".join(fp.COLUMNS)


def row(t, job="j", engine="psync", mib="100", tlb="5", ramp="0", dt="1",
        rw="randread", **more):
    """A CSV line with every column filled in, a few of them chosen."""
    cells = {c: "1" for c in fp.COLUMNS}
    cells.update(t_s=str(t), epoch_ms=str(1000 * t), dt_s=dt, job=job,
                 engine=engine, rw=rw, ramp=ramp, mib_s=mib,
                 tlb_shootdowns_per_s=tlb, **more)
    return ",".join(cells[c] for c in fp.COLUMNS)


def run_main(argv):
    """main() in-process: (exit status, stderr text)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            status = fp.main(argv)
        except SystemExit as e:       # argparse usage errors
            status = e.code
    return status, err.getvalue()


def ydata(line):
    return [float(y) for y in line.get_ydata()]


class TmpDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, content, mode="w"):
        path = os.path.join(self.tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, mode) as f:
            f.write(content)
        return path


def time_cells(cpu, blkio, reclaim=0.0):
    """time_* cells adding to 100."""
    other = 100.0 - cpu - blkio - reclaim
    return dict(zip(fp.TIME_COLUMNS, ("%.1f" % v for v in
                                      (cpu, 0, blkio, reclaim, 0, 0, 0, other))))


class TimePanelTests(TmpDirTest):
    """Where the time went (issue 38): stacked shares, one panel per job,
    and in the default layout in place of a kswapd that never ran."""

    def csv(self, kswapd="0", time=True, job_reclaim="0", pgscan="0"):
        lines = [HEADER]
        for t in (1, 2, 3):
            for job in ("a", "b"):
                cells = time_cells(10, 60 if job == "a" else 30, 5) if time \
                    else {c: "" for c in fp.TIME_COLUMNS}
                lines.append(row(t, job=job, kswapd_cpu_pct=kswapd,
                                 job_direct_reclaim_per_s=job_reclaim,
                                 pgscan_per_s=pgscan, pgsteal_per_s=pgscan, **cells))
        return self.write("t.csv", "\n".join(lines) + "\n")

    def labels(self, fig):
        return [a.get_ylabel() for a in fig.axes]

    def test_kswapd_that_never_ran_gives_way_to_each_job_s_time(self):
        labels = self.labels(fp.build_figure([self.csv()]))
        self.assertNotIn("kswapd\nCPU %", labels)
        self.assertEqual(labels[2:4], ["time %\na (psync)", "time %\nb (psync)"])
        self.assertEqual(len(labels), 6)

    def test_kswapd_that_ran_stays(self):
        labels = self.labels(fp.build_figure([self.csv(kswapd="3")]))
        self.assertIn("kswapd\nCPU %", labels)
        self.assertFalse(any(l.startswith("time %") for l in labels))

    def test_without_shares_the_jobs_own_reclaim_then_the_host_s(self):
        labels = self.labels(fp.build_figure([self.csv(time=False, job_reclaim="40")]))
        self.assertEqual(labels[2], "job's reclaim\nentries/s")
        labels = self.labels(fp.build_figure([self.csv(time=False, pgscan="900")]))
        self.assertEqual(labels[2], "reclaim\npages/s")

    def test_nothing_to_show_drops_the_panel(self):
        labels = self.labels(fp.build_figure([self.csv(time=False)]))
        self.assertEqual(len(labels), 4)
        self.assertNotIn("kswapd\nCPU %", labels)

    def test_shares_stacked_to_100(self):
        fig = fp.build_figure([self.csv()], "time")
        self.assertEqual(len(fig.axes), 2)
        ax = fig.axes[0]
        self.assertEqual(ax.get_ylim(), (0.0, 100.0))
        # One filled area per part; the top of the stack is 100 at every row.
        polys = ax.collections
        self.assertEqual(len(polys), len(fp.TIME_COLUMNS))
        top = max(v[1] for v in polys[-1].get_paths()[0].vertices)
        self.assertAlmostEqual(top, 100.0, places=6)

    def test_no_shares_anywhere_says_so(self):
        fig = fp.build_figure([self.csv(time=False)], "time")
        self.assertEqual(len(fig.axes), 1)
        self.assertIn("no data", fig.axes[0].texts[0].get_text())


class PanelTests(unittest.TestCase):
    def test_default_has_five_panels(self):
        fig = fp.build_figure([STONEWALL])
        self.assertEqual(len(fig.axes), 5)
        self.assertEqual([a.get_ylabel() for a in fig.axes],
                         ["throughput\nMiB/s", "TLB\nshootdowns/s",
                          "kswapd\nCPU %", "page cache\nMiB",
                          "device read\nMiB/s"])

    def test_metrics_selects_panels_in_order(self):
        fig = fp.build_figure([STONEWALL], "lat99,tlb,throughput")
        self.assertEqual([a.get_ylabel() for a in fig.axes],
                         ["latency p99\nus", "TLB\nshootdowns/s",
                          "throughput\nMiB/s"])

    def test_metrics_take_column_names(self):
        fig = fp.build_figure([STONEWALL], ["dirty_mib", "pgscan_per_s"])
        self.assertEqual(len(fig.axes), 2)

    def test_iops_alone_replaces_throughput_in_default(self):
        fig = fp.build_figure([STONEWALL], "iops")
        self.assertEqual(len(fig.axes), 5)
        self.assertEqual(fig.axes[0].get_ylabel(), "throughput\nIOPS")

    def test_shared_time_axis(self):
        fig = fp.build_figure([STONEWALL])
        self.assertEqual(fig.axes[-1].get_xlabel(), "time (s)")
        shared = fig.axes[0].get_shared_x_axes()
        for ax in fig.axes[1:]:
            self.assertTrue(shared.joined(fig.axes[0], ax))

    def test_unknown_metric_is_an_error(self):
        with self.assertRaises(fp.PlotError) as cm:
            fp.resolve_metrics("throughput,bogus")
        self.assertIn("bogus", str(cm.exception))

    def test_text_column_is_not_a_metric(self):
        with self.assertRaises(fp.PlotError):
            fp.resolve_metrics("engine")


class LineTests(TmpDirTest):
    def test_stonewalled_jobs_one_line_each_in_every_panel(self):
        fig = fp.build_figure([STONEWALL])
        for ax in fig.axes:
            self.assertEqual(len(ax.get_lines()), 3, ax.get_ylabel())
        self.assertEqual([line.get_label() for line in fig.axes[0].get_lines()],
                         ["rand-mmap (mmap)", "rand-psync (psync)",
                          "rand-io_uring (io_uring)"])

    def test_job_keeps_its_colour_across_panels(self):
        fig = fp.build_figure([STONEWALL])
        top = [line.get_color() for line in fig.axes[0].get_lines()]
        for ax in fig.axes[1:]:
            self.assertEqual([line.get_color() for line in ax.get_lines()], top)

    def test_concurrent_jobs_share_one_system_line(self):
        fig = fp.build_figure([RAMP], "throughput,tlb,probe")
        thr, tlb, probe = fig.axes
        self.assertEqual(len(thr.get_lines()), 2)
        self.assertEqual(len(tlb.get_lines()), 1)
        self.assertEqual(tlb.get_lines()[0].get_label(),
                         "host (seq-mmap + seq-libaio)")
        self.assertEqual(len(probe.get_lines()), 2)   # per-job column

    def test_system_column_that_differs_per_job_is_drawn_per_job(self):
        path = self.write("d.csv", "\n".join(
            [HEADER, row(1, "a", tlb="5"), row(1, "b", tlb="7"),
             row(2, "a", tlb="5"), row(2, "b", tlb="7")]) + "\n")
        fig = fp.build_figure([path], "tlb")
        self.assertEqual(len(fig.axes[0].get_lines()), 2)

    def test_job_columns_are_per_job(self):
        path = self.write("j.csv", "\n".join(
            [HEADER, row(1, "a"), row(1, "b"), row(2, "a"), row(2, "b")])
            + "\n")
        fig = fp.build_figure([path], "job_tlb")
        self.assertEqual(len(fig.axes[0].get_lines()), 2)

    def test_csv_without_job_columns_reads_them_as_missing(self):
        # The recorded CSVs predate SPEC 15's job_* columns.
        run = fp.read_csv(STONEWALL)
        r = run.jobs[0].rows[0]
        self.assertTrue(math.isnan(r["job_tlb_ipi_per_s"]))
        self.assertTrue(math.isfinite(r["mib_s"]))
        fig = fp.build_figure([STONEWALL], "job_tlb")
        texts = [t.get_text() for t in fig.axes[0].texts]
        self.assertTrue(any("no data" in t for t in texts), texts)

    def test_empty_cells_are_gaps_not_zeros(self):
        fig = fp.build_figure([ARM64], "tlb,dev")
        tlb, dev = fig.axes
        for line in tlb.get_lines():
            self.assertTrue(all(math.isnan(y) for y in ydata(line)))
        (line,) = dev.get_lines()
        pts = dict(zip(line.get_xdata(), ydata(line)))
        self.assertTrue(math.isnan(pts[7.0]) and math.isnan(pts[8.0]))
        self.assertNotIn(0.0, pts.values())
        self.assertTrue(math.isfinite(pts[6.0]))

    def test_write_columns(self):
        path = self.write("w.csv", "\n".join(
            [HEADER, row(1, "a"), row(1, "b"), row(2, "a"), row(2, "b")]) + "\n")
        fig = fp.build_figure([path], "writes,flush,writeback,dev_write")
        self.assertEqual([a.get_ylabel() for a in fig.axes],
                         ["writes\nMiB/s", "flushes/s", "write-back\nMiB",
                          "device write\nMiB/s"])
        self.assertEqual(len(fig.axes[0].get_lines()), 2)   # per job
        self.assertEqual(len(fig.axes[2].get_lines()), 2)   # host: write-back, dirty

    def test_pool_columns(self):
        path = self.write("p.csv", "\n".join(
            [HEADER, row(1, "a"), row(1, "b"), row(2, "a"), row(2, "b")]) + "\n")
        fig = fp.build_figure([path], "pool,evict")
        self.assertEqual([a.get_ylabel() for a in fig.axes],
                         ["pool hits\n%", "pool\nevictions/s"])
        self.assertEqual(len(fig.axes[0].get_lines()), 2)   # per job

    def test_csv_from_before_the_pool_columns_reads(self):
        cols = fp.READ_COLUMNS + fp.WRITE_COLUMNS
        body = [",".join(cols)] + [",".join(r.split(",")[:len(cols)])
                                   for r in (row(1, "a"), row(2, "a"))]
        run = fp.read_csv(self.write("old.csv", "\n".join(body) + "\n"))
        for job in run.jobs:
            self.assertTrue(all(math.isnan(v) for v in job.values("pool_hit_pct")))
            self.assertTrue(all(math.isfinite(v) for v in job.values("w_mib_s")))

    def test_csv_from_before_the_write_columns_reads(self):
        run = fp.read_csv(STONEWALL)
        for job in run.jobs:
            self.assertTrue(all(math.isnan(v) for v in job.values("w_mib_s")))
            self.assertTrue(all(math.isfinite(v) for v in job.values("mib_s")))

    def test_csv_with_write_columns_but_no_job_columns_reads(self):
        # A faultline between SPEC 10 and SPEC 15: the job_* cells are
        # missing, the write columns read.
        cols = fp.READ_COLUMNS + fp.WRITE_COLUMNS
        line = ",".join("a" if c in fp.TEXT_COLUMNS else "2" for c in cols)
        path = self.write("rw.csv", ",".join(cols) + "\n" + line + "\n")
        r = fp.read_csv(path).jobs[0].rows[0]
        self.assertEqual(r["w_mib_s"], 2.0)
        self.assertTrue(math.isnan(r["job_tlb_ipi_per_s"]))

    def test_header_missing_a_job_column_still_reads(self):
        # The appended groups are found by name: a CSV without the job_*
        # columns (an older faultline) reads, its job panels empty.
        cols = [c for c in fp.COLUMNS if not c.startswith("job_")]
        row = ["0"] * len(cols)
        row[cols.index("job")] = "a"
        path = self.write("m.csv", ",".join(cols) + "\n" + ",".join(row) + "\n")
        fp.read_csv(path)

    def test_header_missing_a_spec7_column_names_it(self):
        cols = [c for c in fp.COLUMNS if c != "majflt_per_s"]
        path = self.write("m.csv", ",".join(cols) + "\n")
        with self.assertRaises(fp.PlotError) as cm:
            fp.read_csv(path)
        self.assertIn("majflt_per_s", str(cm.exception))

    def test_column_with_no_values_says_so(self):
        fig = fp.build_figure([ARM64], "tlb")
        texts = [t.get_text() for t in fig.axes[0].texts]
        self.assertTrue(any("no data" in t for t in texts), texts)

    def test_cgroup_drawn_only_where_it_has_values(self):
        fig = fp.build_figure([ARM64])
        labels = [line.get_label() for line in fig.axes[3].get_lines()]
        # page cache once for the concurrent pair, cgroup for the mem_limit
        # job only (the other job has no cgroup).
        self.assertEqual(len(labels), 2)
        fig = fp.build_figure([STONEWALL])
        self.assertEqual(len(fig.axes[3].get_lines()), 3)

    def test_missing_interval_breaks_the_line(self):
        path = self.write("g.csv", "\n".join(
            [HEADER, row(1), row(2), row(5), row(6)]) + "\n")
        (line,) = fp.build_figure([path], "throughput").axes[0].get_lines()
        ys = ydata(line)
        self.assertEqual(len(ys), 5)
        self.assertTrue(math.isnan(ys[2]))

    def test_ramp_rows_are_shaded_and_still_drawn(self):
        fig = fp.build_figure([RAMP], "throughput")
        ax = fig.axes[0]
        spans = [p.get_xy() for p in ax.patches]
        self.assertEqual(len(spans), 1)
        xs = [x for x, _ in spans[0]]
        self.assertAlmostEqual(min(xs), 0.0)
        self.assertAlmostEqual(max(xs), 3.0)
        first_x = min(ax.get_lines()[0].get_xdata())
        self.assertAlmostEqual(first_x, 0.5)      # ramp row kept
        self.assertEqual(len(fp.build_figure([STONEWALL]).axes[0].patches), 0)

    def test_align_starts_each_stonewalled_job_at_zero(self):
        fig = fp.build_figure([STONEWALL], "throughput", align=True)
        firsts = [min(line.get_xdata()) for line in fig.axes[0].get_lines()]
        for x in firsts:
            self.assertLess(x, 1.01)
        self.assertIn("job start", fig.axes[-1].get_xlabel())


class CacheFullTests(TmpDirTest):
    """The cache-full moment: the same rule as faultline's phases.c (its
    unit test finds t=8 and t=4 on these same two files)."""

    def marks(self, fig, ax=0):
        return [c for c in fig.axes[ax].collections
                if c.get_gid() == "cache_full"]

    def test_moment_from_the_csv(self):
        fig = fp.build_figure([STONEWALL])
        self.assertEqual(fig.cache_full, {"rand-mmap (mmap)": 8.0})
        # One dashed mark in every panel, in the job's colour.
        mmap_line = fig.axes[0].get_lines()[0]
        for i in range(len(fig.axes)):
            (mark,) = self.marks(fig, i)
            self.assertEqual(tuple(mark.get_colors()[0][:3]),
                             matplotlib.colors.to_rgb(mmap_line.get_color()))
        fig = fp.build_figure([ARM64])
        self.assertEqual(fig.cache_full["scan-mmap (mmap)"], 4.0)

    def test_recorded_fig2_moments_are_the_cgroup_column_s(self):
        path = os.path.join(FIXTURES, "x86-fig2-memlimit-1g.csv")
        fig = fp.build_figure([path])
        run = fp.read_csv(path)
        for job in run.jobs:
            cg = [(r["t_s"], r["cgroup_mib"]) for r in job.rows]
            peak = max((v for _, v in cg if math.isfinite(v)), default=0)
            want = next((t for t, v in cg
                         if math.isfinite(v) and v >= 0.95 * peak), None)
            if job.engine == "mmap":
                self.assertEqual(fig.cache_full[job.label], want)
            else:
                # O_DIRECT: its target is never evicted, whatever the
                # host's reclaim does for other processes.
                self.assertNotIn(job.label, fig.cache_full)

    def test_aligned_moment_is_since_the_job_start(self):
        fig = fp.build_figure([STONEWALL], align=True)
        self.assertEqual(fig.cache_full, {"rand-mmap (mmap)": 8.0})

    def test_no_eviction_no_moment(self):
        # Cache rising then flat, an eviction source that never moves.
        lines = [HEADER]
        for t in range(1, 9):
            cells = dict(zip(fp.COLUMNS, row(t).split(",")))
            cells.update(page_cache_mib=str(min(100 * t, 400)),
                         pgsteal_per_s="0", target_evicted_mib="0",
                         cgroup_mib="")
            lines.append(",".join(cells[c] for c in fp.COLUMNS))
        path = self.write("fit.csv", "\n".join(lines) + "\n")
        self.assertEqual(fp.build_figure([path]).cache_full, {})
        # The evicted gauge starts to grow at t=6: the moment is t=5, the
        # row before (4 reaches 400 MiB but nothing was evicted by 5).
        rows = []
        for t in range(1, 9):
            cells = dict(zip(fp.COLUMNS, row(t).split(",")))
            cells.update(page_cache_mib=str(min(100 * t, 400)),
                         pgsteal_per_s="0", cgroup_mib="",
                         target_evicted_mib=str(max(0, t - 5) * 10))
            rows.append(",".join(cells[c] for c in fp.COLUMNS))
        path = self.write("evict.csv", "\n".join([HEADER] + rows) + "\n")
        self.assertEqual(fp.build_figure([path]).cache_full, {"j (psync)": 5.0})

    def test_moment_from_faultline_json(self):
        js = self.write("run.json", json.dumps({"jobs": [
            {"jobname": "rand-mmap",
             "faultline": {"phases": {"cache_full": True, "t_s": 9.0}}},
            {"jobname": "rand-psync",
             "faultline": {"phases": {"cache_full": False, "t_s": None}}}]}))
        moments = fp.read_json_moments(js)
        self.assertEqual(moments, {"rand-mmap": 9.0})
        fig = fp.build_figure([STONEWALL], moments=moments)
        self.assertEqual(fig.cache_full, {"rand-mmap (mmap)": 9.0})
        status, err = run_main([STONEWALL, "--json", js, "-o",
                                os.path.join(self.tmp, "f.png")])
        self.assertEqual(status, 0, err)
        status, err = run_main([STONEWALL, "--json", self.write("x.json", "{"),
                                "-o", os.path.join(self.tmp, "g.png")])
        self.assertEqual(status, 2)
        self.assertIn("not faultline JSON", err)

    def test_no_cache_full_flag(self):
        fig = fp.build_figure([STONEWALL], cache_full=False)
        self.assertEqual(fig.cache_full, {})
        self.assertEqual(self.marks(fig), [])


class ExplainColumnTests(TmpDirTest):
    def test_columns_found_by_name_after_others(self):
        # Columns of other branches (unknown here) between the write
        # columns and this issue's: read by name, the rest ignored.
        cols = list(fp.READ_COLUMNS + fp.WRITE_COLUMNS) + \
            ["pool_hit_pct", "job_csw_per_s"] + list(fp.EXPLAIN_COLUMNS)
        cells = {c: "1" for c in cols}
        cells.update(t_s="1", epoch_ms="1000", dt_s="1", job="j",
                     engine="mmap", rw="randread", ramp="0",
                     target_cached_mib="123.5", psi_mem_some_pct="",
                     pool_hit_pct="97.5")
        path = self.write("x.csv", ",".join(cols) + "\n" +
                          ",".join(cells[c] for c in cols) + "\n")
        run = fp.read_csv(path)
        r = run.jobs[0].rows[0]
        self.assertEqual(r["target_cached_mib"], 123.5)
        self.assertTrue(math.isnan(r["psi_mem_some_pct"]))
        fig = fp.build_figure([path], "residency,pressure,amp,cpu4k,refault")
        self.assertEqual(len(fig.axes), 5)

    def test_default_cache_panel_shows_target_residency(self):
        lines = [HEADER] + [row(t) for t in (1, 2, 3)]
        path = self.write("t.csv", "\n".join(lines) + "\n")
        ax = fp.build_figure([path]).axes[3]
        styles = [l.get_linestyle() for l in ax.get_lines()]
        # page cache (solid), cgroup (dashed), target cached (dotted)
        self.assertEqual(styles, ["-", "--", ":"])
        ax = fp.build_figure([STONEWALL]).axes[3]
        self.assertEqual({l.get_linestyle() for l in ax.get_lines()}, {"-"})

    def test_older_csv_has_empty_explain_columns(self):
        run = fp.read_csv(STONEWALL)
        self.assertTrue(all(math.isnan(v)
                            for v in run.jobs[0].values("target_cached_mib")))

    def test_duplicate_column_refused(self):
        cols = list(fp.READ_COLUMNS) + ["read_amp", "read_amp"]
        path = self.write("d.csv", ",".join(cols) + "\n")
        status, err = run_main([path, "-o", os.path.join(self.tmp, "f.png")])
        self.assertEqual(status, 2, err)
        self.assertIn("read_amp", err)


class MultiFileTests(TmpDirTest):
    def test_lines_from_every_file_with_unique_labels(self):
        fig = fp.build_figure([STONEWALL, RAMP])
        labels = [line.get_label() for line in fig.axes[0].get_lines()]
        self.assertEqual(len(labels), 5)
        self.assertEqual(len(set(labels)), 5)
        self.assertIn("x86-stonewall-randread: rand-mmap (mmap)", labels)
        self.assertIn("x86-ramp-seqscan: seq-libaio (libaio)", labels)
        # System panel: 3 stonewalled jobs + 1 shared line for the pair.
        self.assertEqual(len(fig.axes[1].get_lines()), 4)

    def test_same_file_name_in_two_directories(self):
        text = "\n".join([HEADER, row(1), row(2)]) + "\n"
        a = self.write("a/run.csv", text)
        b = self.write("b/run.csv", text)
        labels = [line.get_label()
                  for line in fp.build_figure([a, b]).axes[0].get_lines()]
        self.assertEqual(len(set(labels)), 2)


class BadInputTests(TmpDirTest):
    def assertRejected(self, path, *words):
        status, err = run_main([path, "-o", os.path.join(self.tmp, "f.png")])
        self.assertEqual(status, 2, err)
        self.assertIn(path, err)
        for w in words:
            self.assertIn(w, err)
        self.assertNotIn("Traceback", err)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "f.png")))

    def test_other_csv(self):
        self.assertRejected(self.write("o.csv", "a,b,c\n1,2,3\n"),
                            "not a faultline CSV")

    def test_mpi_csv_draws_the_all_rows(self):
        """An MPI launch's CSV: host and rank appended; the rank=all rows
        are the job's line, the ranks' own rows are not drawn."""
        lines = [HEADER + ",host,rank"]
        for t in (1, 2, 3):
            lines += [row(t, mib="10") + ",h,0", row(t, mib="20") + ",h,1",
                      row(t, mib="30") + ",,all"]
        path = self.write("mpi.csv", "\n".join(lines) + "\n")
        run = fp.read_csv(path)
        self.assertEqual([j.name for j in run.jobs], ["j"])
        self.assertEqual([r["mib_s"] for r in run.jobs[0].rows], [30.0] * 3)

    def test_missing_column(self):
        cols = [c for c in fp.COLUMNS if c != "kswapd_cpu_pct"]
        self.assertRejected(self.write("m.csv", ",".join(cols) + "\n"),
                            "missing", "kswapd_cpu_pct")

    def test_columns_out_of_order(self):
        cols = list(fp.COLUMNS)
        cols[8], cols[9] = cols[9], cols[8]
        self.assertRejected(self.write("s.csv", ",".join(cols) + "\n"),
                            "column 9", "'mib_s'")

    def test_no_header(self):
        self.assertRejected(self.write("n.csv", row(1) + "\n"),
                            "not a faultline CSV")

    def test_binary_file(self):
        self.assertRejected(self.write("b.csv", b"\x89PNG\r\n\x1a\n\0\0",
                                       "wb"), "binary")

    def test_empty_file(self):
        self.assertRejected(self.write("e.csv", ""), "empty")

    def test_header_only(self):
        self.assertRejected(self.write("h.csv", HEADER + "\n"),
                            "no data rows")

    def test_short_row_in_the_middle(self):
        self.assertRejected(self.write("r.csv", "\n".join(
            [HEADER, row(1), "2,2000,1,j", row(3)]) + "\n"),
            "line 3", "fields")

    def test_not_a_number(self):
        self.assertRejected(self.write("x.csv", "\n".join(
            [HEADER, row(1, mib="fast")]) + "\n"), "mib_s", "fast")

    def test_missing_file(self):
        self.assertRejected(os.path.join(self.tmp, "nope.csv"), "cannot read")

    def test_cut_off_last_line_is_ignored(self):
        # A killed run can leave a partial last line without a newline.
        path = self.write("k.csv", "\n".join(
            [HEADER, row(1), row(2), "3,3000,1,j,ps"]))
        status, err = run_main([path, "-o", os.path.join(self.tmp, "k.png")])
        self.assertEqual(status, 0, err)
        self.assertIn("incomplete", err)

    def test_unknown_metric(self):
        status, err = run_main([STONEWALL, "--metrics", "tlb,nonsense",
                                "-o", os.path.join(self.tmp, "f.png")])
        self.assertEqual(status, 2)
        self.assertIn("nonsense", err)

    def test_unknown_output_suffix(self):
        status, err = run_main([STONEWALL, "-o",
                                os.path.join(self.tmp, "f.bmp")])
        self.assertEqual(status, 2)
        self.assertIn("unknown output format", err)

    def test_unwritable_output(self):
        status, err = run_main([STONEWALL, "-o",
                                os.path.join(self.tmp, "no/such/f.png")])
        self.assertEqual(status, 1)
        self.assertIn("cannot write", err)


class OutputTests(TmpDirTest):
    MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF", "svg": None}

    def test_each_format(self):
        for fmt, magic in self.MAGIC.items():
            with self.subTest(fmt=fmt):
                out = os.path.join(self.tmp, "fig." + fmt)
                status, err = run_main([STONEWALL, ARM64, "-o", out,
                                        "--title", "t"])
                self.assertEqual(status, 0, err)
                with open(out, "rb") as f:
                    data = f.read()
                self.assertGreater(len(data), 1000)
                if magic:
                    self.assertTrue(data.startswith(magic))
                else:
                    self.assertIn(b"<svg", data[:1000])


class LauncherTests(TmpDirTest):
    """The shell entry points, as make and users run them."""

    def test_launcher_draws_a_png(self):
        out = os.path.join(self.tmp, "l.png")
        p = subprocess.run([os.path.join(PLOT_DIR, "faultline-plot"),
                            RAMP, "-o", out], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_launcher_bad_csv_exits_2_without_traceback(self):
        bad = self.write("bad.csv", "hello\n")
        p = subprocess.run([os.path.join(PLOT_DIR, "faultline-plot"),
                            bad, "-o", os.path.join(self.tmp, "f.png")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("bad.csv", p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_no_matplotlib_names_the_package(self):
        env = dict(os.environ, FAULTLINE_PYTHON="/nonexistent/python3")
        p = subprocess.run([os.path.join(PLOT_DIR, "faultline-plot"),
                            RAMP, "-o", os.path.join(self.tmp, "f.png")],
                           capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("python3-matplotlib", p.stderr)


def in_view(ax, line):
    """True when every finite point of @line lies inside @ax's y limits."""
    lo, hi = ax.get_ylim()
    ys = [y for y in ydata(line) if math.isfinite(y)]
    return bool(ys) and all(lo <= y <= hi for y in ys)


class LogScaleTests(TmpDirTest):
    def test_rule(self):
        self.assertFalse(fp.wants_log([1.0, 100.0]))
        self.assertTrue(fp.wants_log([0.9, 100.0]))
        self.assertTrue(fp.wants_log([0.0, 5.0]))
        self.assertFalse(fp.wants_log([0.0, 0.0]))
        self.assertFalse(fp.wants_log([math.nan, 5.0]))
        self.assertFalse(fp.wants_log([7.0]))

    def test_figure_2_collapsed_and_fast_jobs_both_visible(self):
        fig = fp.build_figure([FIG2], align=True)
        ax = fig.axes[0]
        self.assertEqual(ax.get_yscale(), "log")
        self.assertIn("(log)", ax.get_ylabel())
        lines = ax.get_lines()
        self.assertEqual([line.get_label() for line in lines],
                         ["mmap-normal (mmap)", "mmap-random (mmap)",
                          "mmap-sequential (mmap)",
                          "io_uring-direct (io_uring)"])
        lo, hi = ax.get_ylim()
        for line in lines:
            self.assertTrue(in_view(ax, line), line.get_label())
        # The collapsed job is far off the bottom: a decade and more of
        # axis below the fast one, not squashed onto zero.
        slow = max(ydata(lines[0]))
        fast = max(ydata(lines[3]))
        self.assertGreater(math.log10(fast) - math.log10(slow), 2)
        self.assertGreater(math.log10(slow) - math.log10(lo), 0.2)

    def test_only_throughput_panels_turn_log(self):
        fig = fp.build_figure([FIG2], "throughput,iops,tlb,dev")
        self.assertEqual([a.get_yscale() for a in fig.axes],
                         ["log", "log", "linear", "linear"])

    def test_close_rates_stay_linear(self):
        ax = fp.build_figure([STONEWALL]).axes[0]
        self.assertEqual(ax.get_yscale(), "linear")
        self.assertEqual(ax.get_ylim()[0], 0)

    def test_log_and_linear_decide(self):
        self.assertEqual(fp.build_figure([STONEWALL], yscale="log")
                         .axes[0].get_yscale(), "log")
        self.assertEqual(fp.build_figure([FIG2], yscale="linear")
                         .axes[0].get_yscale(), "linear")
        with self.assertRaises(fp.PlotError):
            fp.build_figure([FIG2], yscale="logarithmic")

    def test_no_io_interval_is_a_mark_on_the_bottom_edge(self):
        path = self.write("z.csv", "\n".join(
            [HEADER, row(1, "fast", mib="2000"), row(1, "slow", mib="1"),
             row(2, "fast", mib="2100"), row(2, "slow", mib="0"),
             row(3, "fast", mib="1900"), row(3, "slow", mib="1.5")]) + "\n")
        ax = fp.build_figure([path], "throughput").axes[0]
        self.assertEqual(ax.get_yscale(), "log")
        (marks,) = ax.collections
        self.assertEqual([tuple(p) for p in marks.get_offsets()], [(2.0, 0.0)])
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        self.assertIn("0 (no I/O)", labels)

    def test_writes_panel_turns_log_too(self):
        # mmap writes without a flush next to O_DIRECT ones, far apart
        path = self.write("w.csv", "\n".join(
            [HEADER] + [row(t, "fast", rw="randwrite", mib="0", iops="0",
                            w_mib_s="900", w_iops="230000")
                        for t in (1, 2, 3)]
            + [row(t, "slow", rw="randwrite", mib="0", iops="0",
                   w_mib_s="2", w_iops="500") for t in (1, 2, 3)]) + "\n")
        fig = fp.build_figure([path], "writes,wiops")
        self.assertEqual([a.get_yscale() for a in fig.axes], ["log", "log"])

    def test_a_direction_a_job_does_not_issue_is_no_collapse(self):
        # A read job and a write-only job: the write job's read rate of 0
        # and the read job's write rate of 0 make neither panel log, and
        # are no "no I/O" marks.
        path = self.write("rw.csv", "\n".join(
            [HEADER] + [row(t, "reader", mib="150", w_mib_s="0", w_iops="0")
                        for t in (1, 2, 3)]
            + [row(t, "writer", rw="write", mib="0", iops="0",
                   w_mib_s="80") for t in (1, 2, 3)]) + "\n")
        fig = fp.build_figure([path], "throughput,writes")
        self.assertEqual([a.get_yscale() for a in fig.axes],
                         ["linear", "linear"])
        # ... while a reader that stalls still turns the read panel log
        path = self.write("rw2.csv", "\n".join(
            [HEADER] + [row(t, "reader", mib="150") for t in (1, 2, 3)]
            + [row(t, "stalled", mib=m) for t, m in ((1, "0.5"), (2, "0"),
                                                     (3, "0.4"))]
            + [row(t, "writer", rw="write", mib="0", iops="0",
                   w_mib_s="80") for t in (1, 2, 3)]) + "\n")
        ax = fp.build_figure([path], "throughput").axes[0]
        self.assertEqual(ax.get_yscale(), "log")
        (marks,) = ax.collections
        self.assertEqual([tuple(p) for p in marks.get_offsets()], [(2.0, 0.0)])

    def test_command_line_log_options(self):
        out = os.path.join(self.tmp, "f.png")
        status, err = run_main([STONEWALL, "-o", out, "--log"])
        self.assertEqual(status, 0, err)
        status, err = run_main([STONEWALL, "-o", out, "--log", "--linear"])
        self.assertEqual(status, 2)
        self.assertIn("not allowed with", err)


def fio_json(jobs, fio=False):
    """A JSON document shaped as faultline's (or, @fio, fio's) with @jobs:
    (name, iops, bw KiB/s, p99 ns or None)."""
    out = []
    for name, iops, bw, p99 in jobs:
        lat = {"min": 1, "max": 2, "mean": 1.5, "stddev": 0.1, "N": 10}
        pct = {"percentile": {"50.000000": 1, "99.000000": p99}} \
            if p99 is not None else {}
        read = {"iops": iops, "bw": bw, "clat_ns": dict(lat, **pct),
                "lat_ns": dict(lat) if fio else dict(lat, **pct)}
        out.append({"jobname": name, "read": read})
    doc = {"fio version": "fio-3.33" if fio else "faultline-0.1.0",
           "jobs": out}
    if not fio:
        doc["faultline"] = {"version": "0.1.0"}
    return json.dumps(doc)


def rw_json(jobs):
    """faultline-shaped JSON with reads and writes: @jobs of (name,
    (read iops, bw, p99 ns, total_ios), (write iops, bw, p99 ns, total_ios))."""
    def direction(iops, bw, p99, total):
        lat = {"min": 1, "max": 2, "mean": 1.5, "stddev": 0.1, "N": total,
               "percentile": {"99.000000": p99}}
        return {"iops": iops, "bw": bw, "total_ios": total, "clat_ns": lat,
                "lat_ns": lat}
    return json.dumps({"fio version": "faultline-0.1.0", "jobs": [
        {"jobname": n, "read": direction(*r), "write": direction(*w)}
        for n, r, w in jobs]})


def bars(ax):
    """(x centre, height) of each bar in @ax, in drawing order."""
    return [(round(p.get_x() + p.get_width() / 2, 3), p.get_height())
            for p in ax.patches]


class CompareTests(TmpDirTest):
    def test_bars_per_job_and_run(self):
        a = self.write("a.json", fio_json([("mmap", 1000, 4000, 50000),
                                           ("uring", 2000, 8000, 20000)]))
        b = self.write("b.json", fio_json([("mmap", 1500, 6000, 40000),
                                           ("uring", 2500, 10000, 15000)]))
        fig = fc.build_compare_figure(a, b)
        iops, mib, p99 = fig.axes
        self.assertEqual([h for _, h in bars(iops)], [1000, 2000, 1500, 2500])
        self.assertEqual([h for _, h in bars(mib)],
                         [4000 / 1024, 8000 / 1024, 6000 / 1024, 10000 / 1024])
        self.assertEqual([h for _, h in bars(p99)], [50, 20, 40, 15])
        self.assertEqual([t.get_text() for t in p99.get_xticklabels()],
                         ["mmap", "uring"])
        self.assertEqual(iops.get_yscale(), "linear")
        legend = [t.get_text() for t in iops.get_legend().get_texts()]
        self.assertEqual(legend, ["a", "b"])

    def test_fio_json_compares_with_faultline_json(self):
        a = self.write("fio.json", fio_json([("j", 1000, 4000, 30000)], fio=True))
        b = self.write("fl.json", fio_json([("j", 1100, 4400, 28000)]))
        fig = fc.build_compare_figure(a, b)
        self.assertEqual([h for _, h in bars(fig.axes[2])], [30, 28])

    def test_missing_figures_say_n_a(self):
        a = self.write("a.json", fio_json([("j", 1000, 4000, None),
                                           ("only-a", 5, 20, 10)]))
        b = self.write("b.json", fio_json([("j", 900, 3600, 1000)]))
        fig = fc.build_compare_figure(a, b)
        iops, _, p99 = fig.axes
        self.assertEqual(len(bars(iops)), 3)
        self.assertEqual(len(bars(p99)), 2)     # a's j has no latency
        texts = [t.get_text() for t in p99.texts] + \
            [t.get_text() for t in iops.texts]
        # p99 of a's j; only-a's p99 and IOPS in b, which lacks it
        self.assertEqual(texts.count("n/a"), 3)

    def test_log_axis_when_runs_are_far_apart(self):
        a = self.write("a.json", fio_json([("mmap", 100, 400, 10000000)]))
        b = self.write("b.json", fio_json([("mmap", 200000, 800000, 20000)]))
        fig = fc.build_compare_figure(a, b)
        self.assertEqual([ax.get_yscale() for ax in fig.axes],
                         ["log", "log", "log"])
        fig = fc.build_compare_figure(a, b, yscale="linear")
        self.assertEqual(fig.axes[0].get_yscale(), "linear")

    def test_write_panels_when_a_job_wrote(self):
        a = self.write("a.json", rw_json([
            ("mix", (1000, 4000, 50000, 1000), (500, 2000, 90000, 500)),
            ("wr", (0, 0, 0, 0), (300, 1200, 70000, 300))]))
        b = self.write("b.json", rw_json([
            ("mix", (1200, 4800, 40000, 1200), (600, 2400, 80000, 600)),
            ("wr", (0, 0, 0, 0), (350, 1400, 60000, 350))]))
        fig = fc.build_compare_figure(a, b)
        self.assertEqual(len(fig.axes), 6)
        w_iops, w_mib, w_p99 = fig.axes[3:]
        self.assertEqual([h for _, h in bars(w_iops)], [500, 300, 600, 350])
        self.assertEqual([h for _, h in bars(w_p99)], [90, 70, 80, 60])
        self.assertIn("write", w_mib.get_ylabel())
        # only writes in both runs: the write panels alone
        a = self.write("wa.json", rw_json([("wr", (0, 0, 0, 0), (300, 1200, 70000, 300))]))
        b = self.write("wb.json", rw_json([("wr", (0, 0, 0, 0), (350, 1400, 60000, 350))]))
        fig = fc.build_compare_figure(a, b)
        self.assertEqual([ax.get_ylabel() for ax in fig.axes],
                         [label for _, label in fc.WRITE_PANELS])
        # and a read-only pair keeps its three read panels (fio_json has
        # no write object at all, as an older faultline file)
        a = self.write("ra.json", fio_json([("j", 1, 4, 1)]))
        self.assertEqual(len(fc.build_compare_figure(a, a).axes), 3)

    def test_bad_input(self):
        good = self.write("g.json", fio_json([("j", 1, 4, 1)]))
        cases = {
            "not.json": ("hello", "not JSON"),
            "nojobs.json": ('{"fio version": "x"}', "no \"jobs\""),
            "noread.json": ('{"jobs": [{"jobname": "j"}]}', "no \"read\""),
            "empty.json": ('{"jobs": []}', "no jobs"),
            "other.json": (fio_json([("k", 1, 4, 1)]), "no job name in common"),
        }
        for name, (content, msg) in cases.items():
            with self.subTest(name=name):
                path = self.write(name, content)
                with self.assertRaises(fp.PlotError) as cm:
                    fc.build_compare_figure(good, path)
                self.assertIn(msg, str(cm.exception))

    def test_command_line(self):
        a = self.write("a.json", fio_json([("j", 1000, 4000, 50000)]))
        b = self.write("b.json", fio_json([("j", 1500, 6000, 40000)]))
        out = os.path.join(self.tmp, "c.png")
        status, err = run_main(["--compare", a, b, "-o", out])
        self.assertEqual(status, 0, err)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        status, err = run_main(["--compare", a, b, STONEWALL, "-o", out])
        self.assertEqual(status, 2)
        status, err = run_main(["-o", out])
        self.assertEqual(status, 2)
        status, err = run_main(["--compare", a, os.path.join(self.tmp, "x.json"),
                                "-o", out])
        self.assertEqual(status, 2)
        self.assertIn("cannot read", err)


def engine(median, per=None, ranked=True, rank=None, **more):
    """An engine of a verdict.json workload; rank: its figures by the
    measure that decided, when that is not the workload's own."""
    e = {"ok": True, "median": median, "lo": median, "hi": median,
         "per_round": per or [median], "concurrency": "1 thread", "ranked": ranked}
    if rank is not None:
        e["rank"] = {"median": rank, "lo": rank, "hi": rank, "per_round": [rank]}
    e.update(more)
    return e


class VerdictAnswerFigureTests(unittest.TestCase):
    """The answer figure marks the best engine by the measure that decided,
    never the worst: the green bar is the best of the bars drawn."""

    def bars(self, w):
        fig = vh.answer_figure(w, plt)
        ax = fig.axes[0]
        out = [(p.get_width(), matplotlib.colors.to_hex(p.get_facecolor()))
               for p in ax.patches]
        plt.close(fig)
        return out

    def green(self, bars):
        g = [wd for wd, c in bars if c == matplotlib.colors.to_hex("tab:green")]
        self.assertEqual(len(g), 1, bars)
        return g[0]

    def test_lower_p99_wins_and_out_of_ranking_has_no_green(self):
        # The winner held the pace; one with a lower p99 did not keep up
        # (no bar), and the depth what-if, faster still, is not green.
        w = {"key": "t", "unit": "us p99", "better": "lower", "winner": "bufpool", "tie": False,
             "paced": True, "engines": {
                 "mmap-normal": engine(50.0, ranked=False, behind="did not keep up: 10 of 100 IOPS"),
                 "mmap-random": engine(500.0),
                 "bufpool": engine(300.0),
                 "io_uring-depth": engine(100.0, ranked=False, whatif="if the program could have had 8")}}
        bars = self.bars(w)
        self.assertEqual(len(bars), 3)           # the one behind has no bar
        ranked = [wd for wd, c in bars if c in (matplotlib.colors.to_hex("tab:green"), "#b0b0b0")]
        self.assertEqual(self.green(bars), min(ranked))

    def test_rate_no_engine_held_draws_the_iops_that_decided(self):
        # No engine held the rate: delivered IOPS decided, higher is
        # better; the p99 of the winner is the worst, and must not be drawn.
        w = {"key": "t", "unit": "us p99", "rank_unit": "IOPS", "better": "higher",
             "rate_held_by_none": True, "winner": "io_uring-depth", "tie": False, "engines": {
                 "mmap-random": engine(900.0, rank=2000.0),
                 "bufpool": engine(800.0, rank=3000.0),
                 "io_uring-depth": engine(3482.0, rank=80000.0)}}
        bars = self.bars(w)
        self.assertEqual(self.green(bars), 80000.0)
        self.assertEqual(self.green(bars), max(wd for wd, _ in bars))

    def test_replay_time_lowest_is_green(self):
        w = {"key": "t", "unit": "s", "by": "time_s", "better": "lower", "winner": "bufpool",
             "tie": False, "engines": {
                 "mmap-normal": engine(7.67, rounds_cut_short=1),
                 "mmap-random": engine(0.56 * 1.2),
                 "bufpool": engine(0.56)}}
        bars = self.bars(w)
        self.assertEqual(self.green(bars), min(wd for wd, _ in bars))

    def test_a_tie_has_no_green(self):
        w = {"key": "t", "unit": "s", "by": "time_s", "better": "lower", "winner": "bufpool",
             "tie": True, "engines": {"mmap-random": engine(0.58), "bufpool": engine(0.56)}}
        self.assertNotIn(matplotlib.colors.to_hex("tab:green"), [c for _, c in self.bars(w)])


class CountingResult(unittest.TextTestResult):
    """Counts passes too, for the summary line CI reads."""

    passed = 0

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1


def main():
    suite = unittest.defaultTestLoader.loadTestsFromModule(
        sys.modules[__name__])
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2,
                                     resultclass=CountingResult)
    result = runner.run(suite)
    failed = (len(result.failures) + len(result.errors)
              + len(result.unexpectedSuccesses))
    # A test with failing subtests is in failures, not a success.
    sys.stdout.flush()
    print("%d passed, %d failed" % (result.passed, failed))
    return 1 if failed or not result.wasSuccessful() else 0


if __name__ == "__main__":
    sys.exit(main())
