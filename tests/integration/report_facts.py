#!/usr/bin/python3
"""Reads back what `mlsup report` wrote (report.md's tables, report.svg's data attributes, report.html) and
compares one kind of fact with the event log (`mlsup events --json`) or status (`mlsup status --json`).

usage: report_facts.py CHECK REPORT_DIR EVENTS_JSONL STATUS_JSON
CHECK: attempts, endings, steps, jobs, failures, exclusions, svg, html, goodput. Exits 0 when they agree, else
prints what differs and exits 1. Python's standard library only.
"""
import html.parser
import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def markdown_table(text, heading):
    """The rows of the table under '## heading' as dicts by column (a cell's \\| is a |)."""
    lines = text.split("\n")
    at = lines.index("## " + heading)
    rows = []
    for line in lines[at + 1:]:
        if not line.strip() and not rows:
            continue
        if not line.startswith("|"):
            break
        cells, cell, i = [], "", 1
        while i < len(line):
            if line[i] == "\\" and i + 1 < len(line) and line[i + 1] == "|":
                cell += "|"
                i += 1
            elif line[i] == "|":
                cells.append(cell.strip())
                cell = ""
            else:
                cell += line[i]
            i += 1
        rows.append(cells)
    header, body = rows[0], [r for r in rows[2:]]
    return [dict(zip(header, r)) for r in body]


def events_facts(events):
    """Per (run, attempt): the job submitted and, once ended, its class and step; the exclusions; from the events."""
    facts, exclusions = {}, []
    for e in events:
        key = (e.get("campaign"), e.get("attempt"))
        if e.get("event") in ("submitted", "adopted"):
            facts.setdefault(key, {})["job"] = str(e.get("job_id"))
        elif e.get("event") == "attempt-ended":
            facts.setdefault(key, {}).update(ending=e.get("class"), step=str(e.get("step")))
        elif e.get("event") == "excluded":
            exclusions.append((e.get("campaign"), e.get("node"), str(e.get("attempt"))))
    return facts, sorted(exclusions)


def svg_attempts(root):
    return [el.attrib for el in root.iter(SVG + "rect") if "attempt" in el.attrib.get("class", "").split()]


class Page(html.parser.HTMLParser):
    """What the page holds: its elements by name, and the attempt marks of its inline SVG."""

    def __init__(self):
        super().__init__()
        self.tags, self.attempts = {}, 0

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        a = dict(attrs)
        if tag == "rect" and "attempt" in (a.get("class") or "").split():
            self.attempts += 1
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.tags["fetched:" + value] = 1


def main():
    check, folder, events_path, status_path = sys.argv[1:5]
    md = open(folder + "/report.md").read()
    attempts = markdown_table(md, "Attempts")
    rows = {(a["run"], int(a["attempt"])): a for a in attempts}
    svg = ET.parse(folder + "/report.svg").getroot()
    marks = {(m["data-run"], int(m["data-attempt"])): m for m in svg_attempts(svg)}
    events = [json.loads(l) for l in open(events_path) if l.strip()]
    ev, excluded = events_facts(events)
    status = json.load(open(status_path))
    problems = []
    if check == "attempts":
        if sorted(rows) != sorted(ev):
            problems.append("report.md's attempts %s, the events' %s" % (sorted(rows), sorted(ev)))
    elif check == "endings":
        for key, e in ev.items():
            if key not in rows or rows[key]["ending"] != e.get("ending", "running"):
                problems.append("%s: report.md %s, events %s" % (key, rows.get(key, {}).get("ending"), e.get("ending")))
    elif check == "steps":
        for key, e in ev.items():
            if key not in rows or rows[key]["to step"] != e.get("step"):
                problems.append("%s: report.md step %s, events %s" % (key, rows.get(key, {}).get("to step"), e.get("step")))
    elif check == "jobs":
        for key, e in ev.items():
            if key not in rows or rows[key]["job"] != e.get("job"):
                problems.append("%s: report.md job %s, events %s" % (key, rows.get(key, {}).get("job"), e.get("job")))
    elif check == "svg":
        if sorted(marks) != sorted(ev):
            problems.append("report.svg's attempts %s, the events' %s" % (sorted(marks), sorted(ev)))
        for key, e in ev.items():
            m = marks.get(key, {})
            seen = (m.get("data-ending"), m.get("data-step"), m.get("data-job"))
            if seen != (e.get("ending"), e.get("step"), e.get("job")):
                problems.append("%s: report.svg %s, events %s" % (key, seen, (e.get("ending"), e.get("step"), e.get("job"))))
    elif check == "failures":
        crosses = sorted((p.attrib["data-run"], int(p.attrib["data-attempt"])) for p in svg.iter(SVG + "path")
                         if p.attrib.get("class") == "failure")
        failed = sorted(k for k, e in ev.items() if e.get("ending") in ("failed", "hang", "node_fail", "out_of_memory",
                                                                        "boot_fail", "lost"))
        if crosses != failed or not failed:
            problems.append("report.svg's failure marks %s, the events' failures %s" % (crosses, failed))
    elif check == "exclusions":
        table = sorted((r["run"], r["node"], r["attempt"]) for r in markdown_table(md, "Exclusions"))
        diamonds = sorted((p.attrib["data-run"], p.attrib["data-node"], p.attrib["data-attempt"])
                          for p in svg.iter(SVG + "path") if p.attrib.get("class") == "exclusion")
        if not (table == diamonds == excluded) or not excluded:
            problems.append("report.md %s, report.svg %s, events %s" % (table, diamonds, excluded))
    elif check == "html":
        page = Page()
        page.feed(open(folder + "/report.html").read())
        fetched = [t for t in page.tags if t.startswith("fetched:")]
        if page.tags.get("svg") != 1 or page.attempts != len(marks) or fetched or page.tags.get("script"):
            problems.append("report.html: %d svg, %d attempt marks (report.svg: %d), fetches %s, %d scripts" %
                            (page.tags.get("svg", 0), page.attempts, len(marks), fetched, page.tags.get("script", 0)))
    elif check == "goodput":
        runs = {r["run"]: r for r in markdown_table(md, "Runs")}
        for s in status:
            g, said = s["time"]["goodput"], runs.get(s["campaign"], {}).get("goodput", "?")
            agree = said == "-" if g is None else said.endswith("%") and abs(float(said[:-1]) - g * 100) < 0.051
            if not agree:
                problems.append("%s: report.md goodput %s, status %s" % (s["campaign"], said, g))
    else:
        problems.append("no check " + check)
    for p in problems:
        print(p)
    if not problems:
        print("%s: %d attempts agree" % (check, len(ev)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
