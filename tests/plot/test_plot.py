"""Tests for plot/faultline-plot (plot/faultline_plot.py).

Run with plot/run-tests, which picks the same Python as the tool. Each test
checks one behaviour, on the CSVs in tests/fixtures/csv or on small files it
writes itself. The last line printed is "N passed, N failed".
"""

import contextlib
import io
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

STONEWALL = os.path.join(FIXTURES, "x86-stonewall-randread.csv")  # 3 jobs
ARM64 = os.path.join(FIXTURES, "arm64-memlimit-scan.csv")   # 2, concurrent
RAMP = os.path.join(FIXTURES, "x86-ramp-seqscan.csv")       # 2, concurrent

HEADER = ",".join(fp.COLUMNS)


def row(t, job="j", engine="psync", mib="100", tlb="5", ramp="0", dt="1"):
    """A CSV line with every column filled in, a few of them chosen."""
    cells = {c: "1" for c in fp.COLUMNS}
    cells.update(t_s=str(t), epoch_ms=str(1000 * t), dt_s=dt, job=job,
                 engine=engine, rw="randread", ramp=ramp, mib_s=mib,
                 tlb_shootdowns_per_s=tlb)
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
