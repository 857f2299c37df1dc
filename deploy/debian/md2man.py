#!/usr/bin/python3
"""Writes a man page (roff, gzipped) from the small Markdown subset docs/sluice.8.md uses, at build
time (cmake/SluicePackage.cmake). A script of its own rather than pandoc, which Debian ships at
170 MB installed for this one page.

The subset: a first line `# name(section)`; `## HEADING` (.SH) and `### Heading` (.SS);
paragraphs; `- ` list items; a term line followed by `: description` lines (.TP); ``` fences;
inline `code` and **bold** (bold), *emphasis* (italic), [text](link) (the text).

usage: md2man.py PAGE.md OUTPUT.gz"""
import gzip
import re
import sys


def escape(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def inline(text):
    # Links keep their text; code and bold are bold, emphasis italic. Escaping first is safe:
    # none of the markers contains a backslash or a hyphen.
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    text = escape(text)
    text = re.sub(r"`([^`]+)`", r"\\fB\1\\fR", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", text)
    text = re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"\\fI\1\\fR", text)
    return text


def convert(lines):
    title = re.fullmatch(r"# (\S+)\((\d)\)", lines[0].strip())
    if not title:
        sys.exit("md2man.py: the first line must be '# name(section)'")
    name, section = title.groups()
    out = [f'.TH "{name.upper()}" "{section}" "" "Sluice" "System Administration"']
    paragraph = []  # lines of the paragraph, list item or definition being collected
    starts_block = True

    def flush():
        nonlocal paragraph
        if paragraph:
            out.extend(paragraph)
        paragraph = []

    i = 1
    while i < len(lines):
        line = lines[i].rstrip("\n")
        i += 1
        if line.startswith("```"):
            flush()
            out += [".PP", ".RS 4", ".nf"]
            while i < len(lines) and not lines[i].startswith("```"):
                out.append(escape(lines[i].rstrip("\n")) or ".sp")
                i += 1
            i += 1
            out += [".fi", ".RE"]
            starts_block = True
        elif line.startswith("## "):
            flush()
            out.append(".SH " + escape(line[3:].strip().upper()))
            starts_block = True
        elif line.startswith("### "):
            flush()
            out.append(".SS " + inline(line[4:].strip()))
            starts_block = True
        elif not line.strip():
            flush()
            starts_block = True
        elif line.startswith("- "):
            flush()
            paragraph = [".IP \\(bu 2", inline(line[2:].strip())]
            starts_block = False
        elif line.startswith(": "):
            # The line before was the term: the one-line paragraph collected so far.
            lines_so_far = [p for p in paragraph if p != ".PP"]
            if len(lines_so_far) == 1 and not paragraph[0].startswith((".TP", ".IP")):
                paragraph = [".TP", lines_so_far[0]]
            elif not paragraph or paragraph[0] != ".TP":
                sys.exit(f"md2man.py: line {i}: a ': ' description without a term line before it")
            paragraph.append(inline(line[2:].strip()))
            starts_block = False
        else:
            if starts_block:
                flush()
                # A heading starts a paragraph already.
                paragraph = ([] if out[-1].startswith((".SH", ".SS")) else [".PP"]) + [inline(line.strip())]
            else:
                paragraph.append(inline(line.strip()))
            starts_block = False
    flush()
    return "\n".join(out) + "\n"


source, target = sys.argv[1], sys.argv[2]
page = convert(open(source, encoding="utf-8").readlines())
# mtime 0 and no file name: the same page gives the same bytes (lintian wants no time stamp).
with open(target, "wb") as f:
    with gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as z:
        z.write(page.encode("utf-8"))
