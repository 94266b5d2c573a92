#!/usr/bin/env python3
"""verdict_html.py - one self-contained verdict.html from faultline --verdict's
verdict.json and CSV: the verdict text, tables of every number, the host
facts, the exact command and job text of every run, and matplotlib figures
embedded as PNG data URIs (no file beside it, readable offline).

  verdict_html.py [--no-figures REASON] verdict.json verdict.csv -o verdict.html

The page's contents list names every figure and table; each one's id is
an element of the page (tests/e2e/verdict.sh checks that).
"""
import base64
import csv
import html
import io
import json
import sys


def esc(x):
    return html.escape("" if x is None else str(x))


def num(v, unit=""):
    if v is None:
        return "-"
    if isinstance(v, float):
        s = "%.0f" % v if abs(v) >= 100 else "%.2f" % v
    else:
        s = str(v)
    return s + (" " + unit if unit else "")


def fig_png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def figures(doc, rows, plt):
    """(id, title, data URI) per figure."""
    out = []
    wls = doc["workloads"]
    # 1: each workload's engines, median with the range over rounds.
    if wls:
        fig, axes = plt.subplots(1, len(wls), figsize=(3.2 * len(wls), 3.2), squeeze=False)
        for ax, w in zip(axes[0], wls):
            names, med, lo, hi = [], [], [], []
            for key, e in w["engines"].items():
                if not e["ok"]:
                    continue
                names.append(key)
                med.append(e["median"])
                lo.append(e["median"] - e["lo"])
                hi.append(e["hi"] - e["median"])
            ax.bar(range(len(names)), med, yerr=[lo, hi], capsize=3,
                   color=["tab:green" if n == w["winner"] and not w["tie"] else "tab:gray" for n in names])
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels(names, rotation=45, ha="right", fontsize=7)
            ax.set_title(w["key"] + (" (tie)" if w["tie"] else ""), fontsize=9)
            ax.set_ylabel(w["unit"], fontsize=8)
        fig.suptitle("median per engine, bars: range over rounds; green: the winner (none on a tie)",
                     fontsize=9)
        fig.tight_layout()
        out.append(("fig-throughput", "Throughput per workload and engine", fig_png(fig)))
        plt.close(fig)
    # 2: per-second throughput of every run of round 1, one panel per workload.
    by_job = {}
    for r in rows:
        try:
            by_job.setdefault(r["job"], []).append((float(r["t_s"]), float(r["iops"] or "nan"),
                                                   float(r["mib_s"] or "nan"),
                                                   float(r["tlb_shootdowns_per_s"] or "nan")))
        except (KeyError, ValueError):
            continue
    if by_job and wls:
        fig, axes = plt.subplots(len(wls), 2, figsize=(10, 2.4 * len(wls)), squeeze=False)
        for i, w in enumerate(wls):
            col = 2 if w["unit"] == "MiB/s" else 1
            for job, pts in sorted(by_job.items()):
                if not job.startswith("v-%s-" % w["key"]) or not job.endswith("-r1"):
                    continue
                label = job[len("v-%s-" % w["key"]):-3]
                axes[i][0].plot([p[0] for p in pts], [p[col] for p in pts], label=label)
                axes[i][1].plot([p[0] for p in pts], [p[3] for p in pts], label=label)
            axes[i][0].set_ylabel(w["unit"], fontsize=8)
            axes[i][0].set_title(w["key"] + ": throughput per interval (round 1)", fontsize=9)
            axes[i][1].set_title(w["key"] + ": TLB shootdowns/s, system-wide", fontsize=9)
            axes[i][0].legend(fontsize=6)
        axes[-1][0].set_xlabel("s into the run", fontsize=8)
        fig.tight_layout()
        out.append(("fig-timeseries", "Throughput and TLB shootdowns over time", fig_png(fig)))
        plt.close(fig)
    return out


def main(argv):
    nofig = None
    if len(argv) > 2 and argv[1] == "--no-figures":
        nofig = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) != 5 or argv[3] != "-o":
        print("usage: verdict_html.py [--no-figures REASON] verdict.json verdict.csv -o verdict.html",
              file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)
    rows = []
    try:
        with open(argv[2], newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        nofig = nofig or "the CSV could not be read: %s" % e
    figs = []
    if nofig is None:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            figs = figures(doc, rows, plt)
        except ImportError as e:
            nofig = "matplotlib is not available (%s): install python3-matplotlib" % e

    tables = [("tab-verdict", "The verdict per workload"), ("tab-engines", "Every engine's numbers"),
              ("tab-evidence", "Evidence"), ("tab-host", "Host facts"), ("tab-plan", "The plan"),
              ("tab-runs", "Every run: command and job text")]
    p = []
    w = p.append
    w("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>faultline verdict</title>")
    w("<style>body{font-family:sans-serif;max-width:72em;margin:1em auto}table{border-collapse:collapse}"
      "td,th{border:1px solid #bbb;padding:2px 6px;font-size:90%}pre{background:#f4f4f4;padding:4px;"
      "font-size:80%}img{max-width:100%}</style></head><body>\n")
    w("<h1>faultline verdict: mmap or a buffer pool?</h1>\n")
    w("<p>Command: <code>%s</code>; %s s of a %s s budget%s.</p>\n" % (
        esc(doc["command"]), num(doc["elapsed_s"]), num(doc["plan"]["budget_s"]),
        " (interrupted)" if doc.get("interrupted") else ""))
    w("<h2>Contents</h2><ul id='contents'>\n")
    for tid, title in tables:
        w("<li><a href='#%s'>table: %s</a></li>\n" % (tid, esc(title)))
    for fid, title, _ in figs:
        w("<li><a href='#%s'>figure: %s</a></li>\n" % (fid, esc(title)))
    w("</ul>\n")
    if nofig is not None:
        w("<p id='no-figures'><b>No figures:</b> %s. The tables below hold every number.</p>\n" % esc(nofig))

    w("<h2 id='tab-verdict-h'>The verdict per workload</h2><table id='tab-verdict'><tr><th>workload</th>"
      "<th>winner</th><th>ratio over runner-up</th><th>range over rounds</th><th>tie</th><th>verdict</th></tr>\n")
    for wl in doc["workloads"]:
        w("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n" % (
            esc(wl["name"]), esc(wl["winner"]), num(wl["ratio"]),
            "%s-%s (%d rounds)" % (num(wl["ratio_lo"]), num(wl["ratio_hi"]), wl["ratio_rounds"])
            if wl["ratio_rounds"] > 1 else "one round", "yes" if wl["tie"] else "no", esc(wl["headline"])))
    w("</table>\n")

    w("<h2>Every engine's numbers</h2><table id='tab-engines'><tr><th>workload</th><th>engine</th>"
      "<th>median</th><th>lowest</th><th>highest</th><th>per round</th><th>error</th></tr>\n")
    for wl in doc["workloads"]:
        for key, e in wl["engines"].items():
            w("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n" % (
                esc(wl["key"]), esc(e["name"]), num(e["median"], wl["unit"]), num(e["lo"]), num(e["hi"]),
                ", ".join(num(v) for v in e["per_round"]), esc(e["error"] or "")))
    w("</table>\n")

    w("<h2>Evidence</h2><table id='tab-evidence'><tr><th>workload</th><th>sentence</th><th>number</th>"
      "<th>threshold</th><th>source</th></tr>\n")
    for wl in doc["workloads"]:
        for s in wl["evidence"]:
            w("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n" % (
                esc(wl["key"]), esc(s["text"]), num(s["value"]), num(s["threshold"]), esc(s["source"])))
    w("</table>\n")

    w("<h2>Host facts</h2><table id='tab-host'><tr><th>fact</th><th>value</th></tr>\n")
    for k, v in doc["host"].items():
        w("<tr><td>%s</td><td>%s</td></tr>\n" % (esc(k), esc(v)))
    for s in doc["host_facts"]:
        w("<tr><td>%s</td><td>%s</td></tr>\n" % (esc(s["key"]), esc(s["text"])))
    w("</table>\n")

    w("<h2>The plan</h2><table id='tab-plan'><tr><th>item</th><th>value</th></tr>\n")
    for k, v in doc["plan"].items():
        w("<tr><td>%s</td><td>%s</td></tr>\n" % (esc(k), esc(v)))
    w("</table>\n")

    for fid, title, uri in figs:
        w("<h2>%s</h2><figure id='%s'><img alt='%s' src='%s'><figcaption>%s</figcaption></figure>\n" % (
            esc(title), fid, esc(title), uri, esc(title)))

    w("<h2>Every run: command and job text</h2><p>Save the job text as the file the command names "
      "and run the command; the scratch file is laid out again when missing.</p>"
      "<table id='tab-runs'><tr><th>run</th><th>result</th><th>command</th><th>job text</th></tr>\n")
    for ln in doc["lines"]:
        res = ln["skipped"] or num(ln["value"], ln["unit"])
        w("<tr><td>%s</td><td>%s</td><td><code>%s</code></td><td><pre>%s</pre></td></tr>\n" % (
            esc(ln["job"]), esc(res), esc(ln["command"]), esc(ln["job_text"])))
    w("</table>\n</body></html>\n")

    with open(argv[4], "w") as f:
        f.write("".join(p))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
