#!/usr/bin/env python3
"""verdict_html.py - one self-contained verdict.html from faultline --verdict's
verdict.json and CSV, opening with the answer (issue 31): the first screen
holds, per workload, one line (the winner, the ratio and its range over
rounds, or a tie) and one small figure (each engine's result with its spread
across rounds, and the concurrency it ran at). Then the evidence sentences,
the host facts, the plan, every engine's numbers, the runs over time, and the
reproduction: the exact command of every run with its job text folded in a
<details>. Figures are matplotlib PNGs embedded as data URIs: no file beside
the page, readable offline.

  verdict_html.py [--no-figures REASON] verdict.json verdict.csv -o verdict.html

Every figure and table the contents list names is an element of the page
(tests/verdict-html-check); each workload's answer is an element of class
"answer" holding its line and its figure, which tests/verdict-html-render
finds on the first screen of a 1280x800 window.
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


def fig_png(fig, dpi=90):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def label(key, e):
    """An engine's name on a figure: its key and, below, its concurrency."""
    c = e.get("concurrency")
    return key + ("\n" + c if c else "")


def figures_of(e):
    """An engine's figures by the measure that decided its workload (its
    "rank"; an older verdict.json has only the workload's own)."""
    r = e.get("rank") or e
    return r["median"], r["lo"], r["hi"], r["per_round"]


def measure(w):
    """The x axis: what decided the answer, and which way is better."""
    unit = w.get("rank_unit") or w["unit"]
    lower = w.get("better") == "lower"
    if w.get("by") == "time_s":
        what = "seconds to replay all of it (as fast as it goes)"
    elif w.get("rate_held_by_none"):
        what = "IOPS delivered (%s)" % ("no engine kept up with the trace" if w.get("paced")
                                        else "no engine held the rate")
    elif w.get("paced"):
        what = "p99 latency (us) at the trace's own pace, engines that kept up"
    else:
        what = unit
    return "%s, %s is better" % (what, "lower" if lower else "higher"), lower


def answer_figure(w, plt):
    """One workload, by the measure that decided it: a horizontal bar per
    ranked engine at its median, the range over rounds as an error bar and
    each round as a dot; the winner green (none on a tie), so the green bar
    is the best of the bars. An engine out of the ranking is no competitor:
    one that fell behind the rate (or did not keep up with a trace) has no
    bar, only why; a replay's depth cell (what the traced program might
    have done with more reads in flight) is drawn pale and dotted, marked
    as that."""
    eng = [(k, e) for k, e in w["engines"].items() if e["ok"]]
    xlabel, lower = measure(w)
    fig, ax = plt.subplots(figsize=(4.3, 0.42 * max(len(eng), 2) + 0.55))
    if not eng:
        ax.text(0.5, 0.5, "no engine gave a result", ha="center", va="center", fontsize=9)
        ax.set_axis_off()
        return fig
    ys = list(range(len(eng)))[::-1]
    labels = []
    drawn = []
    for y, (k, e) in zip(ys, eng):
        med, lo, hi, per = figures_of(e)
        ranked = e.get("ranked", True)
        if not ranked and not e.get("whatif"):
            ax.text(0.01, y, e.get("behind") or "not ranked", va="center", fontsize=6,
                    color="tab:red", transform=ax.get_yaxis_transform())
            labels.append(label(k, e))
            continue
        won = ranked and k == w["winner"] and not w["tie"]
        whatif = not ranked
        cut = e.get("rounds_cut_short")
        ax.barh(y, med, height=0.6, color="tab:green" if won else "#dce6f0" if whatif else "#b0b0b0",
                hatch=".." if whatif else "//" if cut else None,
                edgecolor="#7090b0" if whatif else "#707070" if cut else "none")
        ax.errorbar(med, y, xerr=[[med - lo], [hi - med]], fmt="none", ecolor="black", capsize=3, lw=1)
        pts = [v for v in per if v is not None]
        ax.plot(pts, [y] * len(pts), "o", ms=3, color="black")
        drawn += [lo, hi]
        labels.append(label(k, e) + ("\n(what-if, not ranked)" if whatif else "") +
                      ("\n(cut short: estimated)" if cut else ""))
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xlabel(xlabel, fontsize=7)
    ax.tick_params(axis="x", labelsize=7)
    # Times that span decades (an engine the plan's bound cut short, its
    # time estimated from its rate): a log axis, so the others show.
    if drawn and min(drawn) > 0 and max(drawn) / min(drawn) > 20:
        ax.set_xscale("log")
        ax.set_xlim(left=min(drawn) / 1.5)
    else:
        ax.set_xlim(left=0)
    fig.tight_layout()
    return fig


def timeseries(doc, rows, plt):
    """Per-second throughput and TLB shootdowns of every run of round 1."""
    by_job = {}
    for r in rows:
        try:
            by_job.setdefault(r["job"], []).append((float(r["t_s"]), float(r["iops"] or "nan"),
                                                   float(r["mib_s"] or "nan"),
                                                   float(r["tlb_shootdowns_per_s"] or "nan")))
        except (KeyError, ValueError):
            continue
    wls = doc["workloads"]
    runs = {}
    for ln in doc["lines"]:
        if ln["round"] == 1 and ln["job"] in by_job:
            runs.setdefault(ln["workload"], []).append((ln["engine"], ln["job"]))
    if not runs:
        return None
    fig, axes = plt.subplots(len(wls), 2, figsize=(10, 2.4 * len(wls)), squeeze=False)
    for i, w in enumerate(wls):
        col = 2 if w["unit"] == "MiB/s" else 1
        for eng, job in runs.get(w["key"], []):
            pts = by_job[job]
            axes[i][0].plot([p[0] for p in pts], [p[col] for p in pts], label=eng)
            axes[i][1].plot([p[0] for p in pts], [p[3] for p in pts], label=eng)
        axes[i][0].set_ylabel("MiB/s" if col == 2 else "IOPS", fontsize=8)
        axes[i][0].set_title(w["key"] + ": throughput per interval (round 1)", fontsize=9)
        axes[i][1].set_title(w["key"] + ": TLB shootdowns/s, system-wide", fontsize=9)
        if runs.get(w["key"]):
            axes[i][0].legend(fontsize=6)
    axes[-1][0].set_xlabel("s into the run", fontsize=8)
    fig.tight_layout()
    return fig


def figures(doc, rows, plt):
    """{workload key: data URI} for the answers, and [(id, title, URI)] for the rest."""
    answers = {}
    for w in doc["workloads"]:
        fig = answer_figure(w, plt)
        answers[w["key"]] = fig_png(fig)
        plt.close(fig)
    rest = []
    fig = timeseries(doc, rows, plt)
    if fig is not None:
        rest.append(("fig-timeseries", "Throughput and TLB shootdowns over time", fig_png(fig)))
        plt.close(fig)
    return answers, rest


STYLE = """body{font-family:sans-serif;max-width:84em;margin:0.5em auto;padding:0 0.5em;font-size:15px}
h1{font-size:1.25em;margin:0.2em 0}p.sub{margin:0.1em 0 0.5em;font-size:80%;color:#444}
#answers{display:grid;grid-template-columns:repeat(auto-fill,minmax(24em,1fr));gap:0.5em}
.answer{border:1px solid #ccc;border-radius:4px;padding:0.3em 0.5em}
.answer p{margin:0 0 0.2em;font-size:85%}.answer figure{margin:0}
.answer img{max-width:100%;max-height:13em}
table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 6px;font-size:85%;vertical-align:top}
pre{background:#f4f4f4;padding:4px;font-size:80%;margin:0}img{max-width:100%}
details summary{cursor:pointer;font-size:85%}"""


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
    answers, figs = {}, []
    if nofig is None:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            answers, figs = figures(doc, rows, plt)
        except ImportError as e:
            nofig = "matplotlib is not available (%s): install python3-matplotlib" % e

    wls = doc["workloads"]
    plan = doc["plan"]
    p = []
    w = p.append
    w("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>faultline verdict</title>")
    w("<style>%s</style></head><body>\n" % STYLE)
    w("<h1>faultline verdict: mmap or a buffer pool?</h1>\n")
    # A job-file verdict's workloads may each have their own memory.
    mems = sorted({wl.get("memory_budget_bytes") or plan["memory_budget_bytes"] for wl in wls}) or \
        [plan["memory_budget_bytes"]]
    w("<p class='sub'>%d workload%s%s; memory budget %s MiB; %s s of a %s s budget%s. "
      "<code>%s</code></p>\n" % (
          len(wls), "" if len(wls) == 1 else "s",
          " from " + esc(plan["jobfile"]) if plan.get("jobfile") else "",
          ", ".join("%.0f" % (m / 1048576.0) for m in mems), num(doc["elapsed_s"]), num(plan["budget_s"]),
          " (interrupted)" if doc.get("interrupted") else "", esc(doc["command"])))

    # The answer: a line and a figure per workload, the first screen.
    w("<div id='answers'>\n")
    for wl in wls:
        w("<div class='answer' id='answer-%s'><p><b>%s</b></p>\n" % (esc(wl["key"]), esc(wl["headline"])))
        if wl["key"] in answers:
            t = "%s: each engine's %s, median (bar), range over rounds (whisker), rounds (dots)" % (
                wl["name"], measure(wl)[0])
            w("<figure id='fig-answer-%s'><img alt='%s' src='%s'></figure>\n" % (
                esc(wl["key"]), esc(t), answers[wl["key"]]))
        w("</div>\n")
    w("</div>\n")
    if nofig is not None:
        w("<p id='no-figures'><b>No figures:</b> %s. The tables below hold every number.</p>\n" % esc(nofig))

    tables = [("tab-evidence", "Evidence"), ("tab-host", "Host facts"), ("tab-plan", "The plan"),
              ("tab-cells", "What each cell ran: memory, threads, depth"),
              ("tab-engines", "Every engine's numbers"), ("tab-runs", "Reproduction: every run's command and job text")]
    w("<h2>Contents</h2><ul id='contents'>\n")
    for wl in wls:
        if wl["key"] in answers:
            w("<li><a href='#fig-answer-%s'>figure: %s, the answer</a></li>\n" % (esc(wl["key"]), esc(wl["name"])))
    for tid, title in tables:
        w("<li><a href='#%s'>table: %s</a></li>\n" % (tid, esc(title)))
    for fid, title, _ in figs:
        w("<li><a href='#%s'>figure: %s</a></li>\n" % (fid, esc(title)))
    w("</ul>\n")

    w("<h2>Evidence</h2>\n")
    for wl in wls:
        w("<h3>%s</h3><ul>\n" % esc(wl["name"]))
        for s in wl["evidence"]:
            w("<li>%s</li>\n" % esc(s["text"]))
        w("</ul>\n")
    w("<table id='tab-evidence'><tr><th>workload</th><th>key</th><th>number</th>"
      "<th>threshold</th><th>source</th></tr>\n")
    for wl in wls:
        for s in wl["evidence"]:
            w("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n" % (
                esc(wl["key"]), esc(s["key"]), num(s["value"]), num(s["threshold"]), esc(s["source"])))
    w("</table>\n")

    w("<h2>Host facts</h2><ul>\n")
    for s in doc["host_facts"]:
        w("<li>%s</li>\n" % esc(s["text"]))
    w("</ul><table id='tab-host'><tr><th>fact</th><th>value</th></tr>\n")
    for k, v in doc["host"].items():
        w("<tr><td>%s</td><td>%s</td></tr>\n" % (esc(k), esc(v)))
    w("</table>\n")

    w("<h2>The plan</h2><table id='tab-plan'><tr><th>item</th><th>value</th></tr>\n")
    for k, v in plan.items():
        # What each cell ran is the next table; with job files the
        # threads are each job's, not the plan's.
        if k == "cells" or (k == "threads" and v is None):
            continue
        if k == "memory_budget_bytes" and plan.get("jobfile"):
            k = "memory_budget_bytes (for jobs that set none)"
        w("<tr><td>%s</td><td>%s</td></tr>\n" % (esc(k), esc(v)))
    w("</table>\n")
    w("<h3>What each cell ran</h3><table id='tab-cells'><tr><th>workload</th><th>engine</th>"
      "<th>memory</th><th>threads</th><th>depth</th></tr>\n")
    for c in plan.get("cells") or []:
        mem = "no cache (O_DIRECT)" if c["memory_limit"] is None else "%s %s MiB" % (
            c["memory_limit"], num(c["memory_bytes"] / 1048576.0))
        w("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n" % (
            esc(c["workload"]), esc(c["engine"]), esc(mem), esc(c["threads"]), esc(c["iodepth"])))
    w("</table>\n")

    w("<h2>Every engine's numbers</h2><table id='tab-engines'><tr><th>workload</th><th>engine</th>"
      "<th>concurrency</th><th>median</th><th>lowest</th><th>highest</th><th>per round</th>"
      "<th>note</th></tr>\n")
    for wl in wls:
        for key, e in wl["engines"].items():
            w("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
              "<td>%s</td></tr>\n" % (
                  esc(wl["key"]), esc(e["name"]), esc(e.get("concurrency") or ""),
                  num(e["median"], wl["unit"]), num(e["lo"]), num(e["hi"]),
                  ", ".join(num(v) for v in e["per_round"]), esc(e["error"] or e.get("behind") or "")))
    w("</table>\n")

    for fid, title, uri in figs:
        w("<h2>%s</h2><figure id='%s'><img alt='%s' src='%s'><figcaption>%s</figcaption></figure>\n" % (
            esc(title), fid, esc(title), uri, esc(title)))

    w("<h2>Reproduction</h2><p>Every run's job file is in <code>verdict-jobs/</code> beside this page; "
      "run the command there (or save the job text under the name it gives). A scratch file is laid "
      "out again when missing.</p>"
      "<table id='tab-runs'><tr><th>run</th><th>result</th><th>command</th></tr>\n")
    for ln in doc["lines"]:
        res = ln["skipped"] or num(ln["value"], ln["unit"])
        w("<tr><td>%s</td><td>%s</td><td><code>%s</code><details><summary>job text</summary>"
          "<pre>%s</pre></details></td></tr>\n" % (
              esc(ln["job"]), esc(res), esc(ln["command"]), esc(ln["job_text"])))
    w("</table>\n</body></html>\n")

    with open(argv[4], "w") as f:
        f.write("".join(p))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
