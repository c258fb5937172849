#!/usr/bin/env python3
"""Measure how faithfully a wiki keeps its sources.

Reads the RAW source files with Python's html.parser (HTML) or as text
(Markdown, plain text, JSON transcripts' contents) -- independent of
prose's own readers -- and the wiki's pages, and prints per collection:
the share of the sources' 8-word runs readable in the wiki, search recall
over the sources' code spans (prose wiki search --json, no limit), and
for the wiki: pages named after navigation words, titles with a pilcrow or
a suffix three or more different titles share (a site name), pages sharing
one title, duplicate and near-empty pages, folder depth against the
input's.

Markdown sources are rendered with markdown-it-py (CommonMark) when it is
installed, so link targets and markup do not count as text; without it
they are stripped by pattern.

usage: wiki_measure.py PROSE VAULT NAME=DIR [NAME=DIR ...]
"""
import collections
import html.parser
import json
import os
import re
import subprocess
import sys

try:  # CommonMark for Markdown sources, when the machine has it (Debian: python3-markdown-it)
    from markdown_it import MarkdownIt
except ImportError:
    MarkdownIt = None

SKIP = {"script", "style", "head", "title", "noscript", "template", "svg"}
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


class Text(html.parser.HTMLParser):
    def __init__(self, code_tags=("code", "tt", "samp", "kbd")):
        super().__init__(convert_charrefs=True)
        self.parts, self.codes, self.depth, self.code, self.cur = [], [], 0, 0, []
        self.code_tags = code_tags
        self.title = ""
        self.in_title = False

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self.in_title = True
        if tag in SKIP:
            self.depth += 1
        if tag in self.code_tags:
            self.code += 1
            self.cur = []
        if tag in ("p", "div", "li", "td", "th", "dt", "dd", "br", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "tr"):
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        if tag in SKIP and self.depth:
            self.depth -= 1
        if tag in self.code_tags and self.code:
            self.code -= 1
            if self.code == 0 and self.depth == 0:
                self.codes.append("".join(self.cur).strip())

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        if self.depth:
            return
        self.parts.append(data)
        if self.code:
            self.cur.append(data)


def read_source(path):
    raw = open(path, encoding="utf-8", errors="replace").read()
    ext = os.path.splitext(path)[1].lower()
    if ext in (".md", ".markdown"):
        # YAML front matter is the document's metadata (MkDocs, Hugo and
        # GitHub show it as no text), which a CommonMark renderer would
        # read as a rule and a paragraph.
        raw = re.sub(r"\A---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", "", raw, count=1, flags=re.S)
        if MarkdownIt is not None:
            # What a reader of the Markdown sees: rendered by a CommonMark
            # implementation that is not prose's, link targets left out.
            raw = MarkdownIt("commonmark").enable("table").enable("strikethrough").render(raw)
            ext = ".html"
        else:
            # Without a renderer: leave out what a reader never sees, the
            # targets of links and images and reference definitions.
            raw = re.sub(r"(?m)^\s{0,3}\[[^\]]+\]:\s*\S+.*$", "", raw)
            raw = re.sub(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)", "]", raw)
    if ext in (".html", ".htm", ".xhtml"):
        p = Text()
        p.feed(raw)
        return "".join(p.parts), p.codes
    if ext in (".json", ".jsonl", ".ndjson"):
        texts = []
        try:
            data = json.loads(raw)
            msgs = data.get("messages", []) if isinstance(data, dict) else data
        except ValueError:
            msgs = [json.loads(l) for l in raw.splitlines() if l.strip()]
        for m in msgs:
            c = m.get("content", "")
            texts.append(c if isinstance(c, str) else " ".join(x if isinstance(x, str) else x.get("text", "") for x in c))
        raw = "\n\n".join(texts)
    codes = re.findall(r"`([^`\n]+)`", raw) if ext != ".txt" else []
    return raw, codes


def words(text):
    return [w.lower() for w in WORD.findall(text)]


def shingles(ws, n=8):
    return {tuple(ws[i:i + n]) for i in range(len(ws) - n + 1)}


def main():
    prose, vault = sys.argv[1], sys.argv[2]
    cols = [a.split("=", 1) for a in sys.argv[3:]]
    wiki = os.path.join(vault, "published", "wiki")
    pages = {}
    for root, _, files in os.walk(wiki):
        for f in files:
            if f.endswith(".html"):
                p = os.path.join(root, f)
                t = Text()
                t.feed(open(p, encoding="utf-8").read())
                rel = os.path.relpath(p, wiki)
                body = re.sub(r"prose:meta.*?-->", "", "".join(t.parts), flags=re.S)
                pages[rel] = (t.title.strip(), body)
    wiki_sh = set()
    for rel, (_, body) in pages.items():
        wiki_sh |= shingles(words(body))
    content = {r: v for r, v in pages.items() if os.path.basename(r) != "README.html"}
    nav_words = {"next", "previous", "prev", "up", "home", "index", "contents", "top", "back", "skip"}
    # A page that mirrors a source file of the same name (a collection's
    # own index.html) is the source's name, not one prose gave it.
    mirrored = set()
    for _, d in cols:
        for root, dirs, files in os.walk(d):
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), d)
                stem = os.path.splitext(rel)[0].lower()
                mirrored.add(stem)
                # A folder's leading "_" (Sphinx's _modules, _sources) is
                # not kept in the wiki's path.
                mirrored.add("/".join(c.lstrip("_") or c for c in stem.split("/")))
                # A folder named with a dot (Debian's policy.html/) is kept
                # as policy-html/ in the wiki's path.
                parts = stem.split("/")
                mirrored.add("/".join([c.lstrip("_").replace(".", "-") or c for c in parts[:-1]] + parts[-1:]))
    nav_pages = [r for r in content if re.sub(r"-\d+$", "", os.path.splitext(os.path.basename(r))[0]) in nav_words
                 and os.path.splitext(r.split("/", 1)[-1])[0].lower() not in mirrored]
    for r in nav_pages:
        print(f"nav-word page: {r}", file=sys.stderr)
    pilcrow = [r for r, (t, _) in content.items() if "¶" in t or "§" in t]
    # A site suffix ("Title - Site", "Title (Manual)") ends three or more
    # different titles; one title a collection gives several pages itself
    # (Doxygen's "Class Members - Functions" on each letter's page) is
    # counted apart, as repeated titles.
    suffixes = collections.defaultdict(set)
    for t, _ in content.values():
        m = re.search(r"(\s[-–—|:]\s.+|\s\([^()]+\))$", t)
        if m:
            suffixes[m.group(1)].add(t)
    site = {s for s, ts in suffixes.items() if len(ts) >= 3}
    shared = 0
    for t, _ in content.values():
        m = re.search(r"(\s[-–—|:]\s.+|\s\([^()]+\))$", t)
        if m and m.group(1) in site:
            shared += 1
            print(f"title with a site suffix: {t}", file=sys.stderr)
    titles = collections.Counter(t for t, _ in content.values())
    repeated = sum(n for n in titles.values() if n > 1)
    bodies = collections.Counter(re.sub(r"\s+", " ", b).strip() for _, b in content.values())
    dups = sum(n - 1 for n in bodies.values() if n > 1)
    near_empty = sum(1 for _, b in content.values() if len(words(b)) < 25)
    wiki_depth = max((r.count("/") for r in pages), default=0)
    print("| collection | files | source MB | 8-word runs kept | code spans found by search | input depth |")
    print("|---|---|---|---|---|---|")
    for name, d in cols:
        total = kept = 0
        worst = []
        spans = set()
        nfiles = 0
        size = 0
        depth = 0
        for root, dirs, files in os.walk(d):
            dirs[:] = [x for x in dirs if not x.startswith(".")]
            for f in files:
                if f.startswith(".") or os.path.splitext(f)[1].lower() not in (".md", ".markdown", ".txt", ".html", ".htm", ".xhtml", ".json", ".jsonl"):
                    continue
                p = os.path.join(root, f)
                nfiles += 1
                size += os.path.getsize(p)
                depth = max(depth, os.path.relpath(p, d).count("/") + 1)
                text, codes = read_source(p)
                sh = shingles(words(text))
                total += len(sh)
                kept += len(sh & wiki_sh)
                if sh:
                    lost = sorted(sh - wiki_sh)
                    worst.append((len(sh & wiki_sh) / len(sh), os.path.relpath(p, d), " ".join(lost[0]) if lost else ""))
                spans |= {c for c in codes if 2 < len(c) <= 40 and re.fullmatch(r"[A-Za-z_][\w.:-]*", c)}
        found = 0
        for c in sorted(spans):
            out = subprocess.run([prose, "--vault", vault, "--json", "wiki", "search", "--limit", "100000", c], capture_output=True, text=True).stdout
            try:
                hits = json.loads(out)
                hits = hits.get("hits", hits.get("results", [])) if isinstance(hits, dict) else hits
            except ValueError:
                hits = []
            if hits:
                found += 1
            else:
                print(f"|   not found by search: {c}", file=sys.stderr)
        share = 100.0 * kept / total if total else 100.0
        recall = f"{found}/{len(spans)} ({100.0 * found / len(spans):.0f} %)" if spans else "no code spans"
        print(f"| {name} | {nfiles} | {size / 1e6:.2f} | {share:.1f} % | {recall} | {depth} |")
        for share_f, rel, example in sorted(worst)[:int(os.environ.get("MEASURE_WORST", "0"))]:
            print(f"|   worst: {rel} | {100 * share_f:.0f} % | e.g. lost: {example} |", file=sys.stderr)
    print()
    print(f"wiki: {len(content)} pages; named after navigation words: {len(nav_pages)}; titles with ¶/§: {len(pilcrow)}; "
          f"titles with a site suffix (one ending 3+ different titles): {shared}; pages sharing their title with another: {repeated}; duplicate pages: {dups}; near-empty (<25 words): {near_empty}; folder depth: {wiki_depth}")


if __name__ == "__main__":
    main()
