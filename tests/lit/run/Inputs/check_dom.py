"""Counts what a rendered report's DOM holds (html.parser, no dependencies)."""
import sys
from html.parser import HTMLParser


class Counter(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows = 0
        self.nodes = 0
        self.timelines = []
        self.stages = []
        self.waits = []
        self.in_table = False
        self.keys = 0
        self.labels = []
        self.calls = []
        self.zoom = False
        self.notes = 0
        self.arrows = False
        self.error = None
        self.verdicts = 0
        self.figures = {"host": 0, "gap": 0, "devices": 0}
        self.title = ""
        self.in_title = False
        self.verdict_text = ""
        self.in_verdict = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html" and "data-script-error" in a:
            self.error = a["data-script-error"]
        if tag == "title" and not self.title:
            self.in_title = True
        if tag == "div" and a.get("class") == "verdict":
            self.verdicts += 1
            self.in_verdict = True
        if tag == "table" and a.get("class") in self.figures:
            self.figures[a.get("class")] += 1
        if tag == "input" and a.get("id") == "arrows":
            self.arrows = True
        if tag == "table" and a.get("id") == "timings":
            self.in_table = True
        elif tag == "tr" and self.in_table:
            self.rows += 1
        elif tag == "g" and a.get("class") == "node":
            self.nodes += 1
        elif tag == "svg" and a.get("class") == "timeline":
            self.timelines.append(a.get("data-lowering"))
            self.stages.append(0)
            self.waits.append(0)
            self.labels.append(0)
            self.calls.append(0)
        elif tag == "rect" and a.get("class") == "stage":
            self.stages[-1] += 1
        elif tag == "line" and a.get("class") == "wait":
            self.waits[-1] += 1
        elif tag == "span" and a.get("class") == "key" or tag == "label" and a.get("class") == "key":
            self.keys += 1
        elif tag == "text" and a.get("class") == "label":
            self.labels[-1] += 1
        elif tag == "rect" and a.get("class") == "call":
            self.calls[-1] += 1
        elif tag == "input" and a.get("id") == "zoom":
            self.zoom = True
        elif tag == "p" and a.get("class") == "note":
            self.notes += 1

    def handle_endtag(self, tag):
        if tag == "table":
            self.in_table = False
        if tag == "title":
            self.in_title = False
        if tag == "div":
            self.in_verdict = False

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        if self.in_verdict:
            self.verdict_text += data


c = Counter()
c.feed(open(sys.argv[1]).read())
print("timing rows:", c.rows - 1)  # less the header
print("dag nodes:", c.nodes)
print("timelines:", " ".join(c.timelines))
print("stage boxes per timeline:", " ".join(map(str, c.stages)))
print("wait arrows per timeline:", " ".join(map(str, c.waits)))
print("legend keys:", c.keys, "zoom:", "yes" if c.zoom else "no")
print("labelled boxes per timeline:", " ".join(map(str, c.labels)))
print("host calls per timeline:", " ".join(map(str, c.calls)))
print("notes:", c.notes)
print("title:", c.title)
print("verdicts:", c.verdicts, "near the line:", "yes" if "flips" in c.verdict_text else "no")
print("figures:", " ".join(f"{k} {v}" for k, v in c.figures.items()))
print("arrows toggle:", "yes" if c.arrows else "no")
print("script error:", c.error or "none")
