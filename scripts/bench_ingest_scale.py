#!/usr/bin/env python3
"""Inputs of scripts/bench-ingest-scale.sh, made of real documents.

    bench_ingest_scale.py OUT

writes under OUT:
  docs1000/    the 1,000 real HTML, Markdown and text files nearest 12 KB in size
               (about 10 MB in all) from /usr/share/doc and Go's doc
               directory, their folders kept;
  manual.html  one HTML manual of just under 16 MiB: the bodies of the
               real HTML files one after another, each under a heading
               of its own (many headings), repeated until it is full;
  plain.txt    one plain-text file of just under 16 MiB: the text of the
               same documents as paragraphs, with a heading only every
               4 MiB (few headings: the split must still bound the pages).

The Valgrind, Node.js and pip documentation is left out (kept for an
independent check). The same machine gives the same files.
"""
import html
import html.parser
import os
import re
import subprocess
import sys

LIMIT = 16 << 20
SKIP = re.compile(r"valgrind|nodejs|/node|/pip|python3-pip", re.I)


def real_files():
    roots = ["/usr/share/doc"]
    goroot = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True).stdout.strip()
    if goroot:
        roots.append(os.path.join(goroot, "doc"))
    out = []
    for root in roots:
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for f in sorted(files):
                p = os.path.join(d, f)
                if SKIP.search(p) or os.path.islink(p) or not os.path.isfile(p):
                    continue
                low = f.lower()
                if low.endswith((".html", ".htm", ".md", ".txt")) or low.startswith("readme") and "." not in low:
                    out.append(p)
    return out


class Text(html.parser.HTMLParser):
    """The text of an HTML body, a paragraph per block."""

    BLOCK = {"p", "div", "li", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "dt", "dd", "br", "table", "blockquote"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1
        elif tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


class Clean(html.parser.HTMLParser):
    """An HTML body rewritten with the structural elements alone, every
    element closed: a real page's text and headings, without a generator's
    unclosed tags, so that pages put one after another stay one manual."""

    KEEP = {"h1", "h2", "h3", "h4", "h5", "h6", "p", "pre", "ul", "ol", "li", "dl", "dt", "dd",
            "table", "tr", "td", "th", "blockquote", "code"}
    VOID_BLOCK = {"br", "hr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.stack, self.skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "nav", "header", "footer"):
            self.skip += 1
        elif self.skip:
            return
        elif tag in self.KEEP:
            if tag in ("p", "li", "dt", "dd", "tr", "td", "th") and tag in self.stack:
                self.close(tag)
            self.out.append("<%s>" % tag)
            self.stack.append(tag)
        elif tag in self.VOID_BLOCK:
            self.out.append("\n" if "pre" in self.stack else "<br>")

    def close(self, tag):
        while self.stack:
            t = self.stack.pop()
            self.out.append("</%s>" % t)
            if t == tag:
                break

    def handle_endtag(self, tag):
        if tag in ("script", "style", "nav", "header", "footer"):
            self.skip = max(0, self.skip - 1)
        elif not self.skip and tag in self.stack:
            self.close(tag)

    def handle_data(self, data):
        if not self.skip:
            self.out.append(html.escape(data, quote=False))

    def text(self):
        self.close(None)
        return "".join(self.out)


def clean_body(text):
    c = Clean()
    c.feed(body_of(text))
    c.close_all = None
    return c.text()


def body_of(text):
    m = re.search(r"<body[^>]*>(.*)</body>", text, re.S | re.I)
    return m.group(1) if m else text


def read(p):
    with open(p, "rb") as f:
        return f.read().decode("utf-8", "replace")


def main():
    out = sys.argv[1]
    files = real_files()
    # 1,000 documents of about 10 MB in all, whatever is installed: the
    # 1,000 whose sizes are nearest 12,000 bytes (ties by path), in path
    # order. A fixed size, so the figures of other days compare: the
    # 1,000 largest had grown to 44 MB as packages were installed.
    chosen = sorted(sorted(files, key=lambda p: (abs(os.path.getsize(p) - 12_000), p))[:1000])
    for p in chosen:
        rel = p.lstrip("/").replace("usr/share/doc/", "doc/")
        dst = os.path.join(out, "docs1000", rel)
        if not os.path.splitext(dst)[1]:
            dst += ".txt"
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(open(p, "rb").read())

    pages = [p for p in files if p.lower().endswith((".html", ".htm"))]
    head = "<!DOCTYPE html>\n<html><head><title>A manual of real documents</title></head><body>\n<h1>A manual of real documents</h1>\n"
    tail = "</body></html>\n"
    size = len(head.encode()) + len(tail.encode())
    chunks, rnd = [], 0
    while size < LIMIT:
        rnd += 1
        for p in pages:
            part = "<h1>%s (%d)</h1>\n%s\n" % (html.escape(os.path.basename(p)), rnd, clean_body(read(p)))
            b = len(part.encode())
            if size + b > LIMIT:
                size = LIMIT
                break
            chunks.append(part)
            size += b
    with open(os.path.join(out, "manual.html"), "w") as f:
        f.write(head + "".join(chunks) + tail)

    paras = []
    for p in files:
        t = read(p)
        if p.lower().endswith((".html", ".htm")):
            x = Text()
            x.feed(body_of(t))
            t = "".join(x.parts)
        for para in re.split(r"\n\s*\n", t):
            para = " ".join(para.split())
            if len(para) > 40:
                paras.append(para)
    chunks, size, n, next_heading = [], 0, 0, 0
    while size < LIMIT - 4096:
        for para in paras:
            if size >= next_heading:
                n += 1
                h = "Part %d\n=======\n\n" % n
                chunks.append(h)
                size += len(h.encode())
                next_heading += 4 << 20
            b = len(para.encode()) + 2
            if size + b > LIMIT - 4096:
                size = LIMIT
                break
            chunks.append(para + "\n\n")
            size += b
    with open(os.path.join(out, "plain.txt"), "w") as f:
        f.write("".join(chunks))


main()
