"""The tool-search benchmark's data: a registry of real tool descriptions and known-item
queries paraphrased from them (issue 10, docs/BENCHMARKS.md).

The registry is JSON Lines in the format of SPEC §11, one tool an object (`id`, `name`,
`description`, `input_schema`, `tags`, `category`, and an `executor` that names an HTTP
endpoint nobody calls), from real text: the npm and PyPI package
summaries of the package lists given with --packages (TSV with a header; `name` first,
`summary` last), then Debian's package descriptions (`apt-cache dumpavail`: the short one, and
each paragraph of the long one as a tool of its own; the installed packages' when apt has no
lists), then, to reach the size asked for,
copies of those under new ids, as forks and mirrors fill real registries.

A query names one tool without its name: the tool's description with the words of its name
removed, about a quarter of the other words dropped, about three in ten of the rest replaced
by a WordNet synonym (Debian's wordnet-base) and neighbouring words swapped. Both are
deterministic for a seed.

    tools = build_registry(1_000_000, packages_dir)      # [{"id": ..., ...}, ...]
    queries = paraphrase_queries(tools, 600, seed=11)    # [{"query": ..., "id": ...}, ...]
"""

import collections
import csv
import os
import random
import re
import subprocess

WORDNET = "/usr/share/wordnet"
WORD = re.compile(r"[A-Za-z][A-Za-z0-9']+")


def _package_lists(packages_dir):
    """(id, name, summary) of each package with a summary in npm.tsv and pypi.tsv."""
    for source in ("npm", "pypi"):
        path = os.path.join(packages_dir or "", f"{source}.tsv")
        if not packages_dir or not os.path.exists(path):
            continue
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            next(rows, None)
            for row in rows:
                if len(row) >= 2 and row[-1].strip():
                    yield f"{source}:{row[0]}", row[0], row[-1].strip(), source


def _debian_descriptions():
    """(id, name, text, section) of each Debian package and paragraph of its description:
    every package apt knows of, or, when its lists are empty, the installed ones."""
    out = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True,
                         errors="replace", check=False).stdout
    if "Package:" not in out and os.path.exists("/var/lib/dpkg/status"):
        with open("/var/lib/dpkg/status", encoding="utf-8", errors="replace") as f:
            out = f.read()
    for stanza in out.split("\n\n"):
        fields, key = {}, None
        for line in stanza.split("\n"):
            if line.startswith(" ") and key:
                fields[key] += "\n" + line[1:]
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        name = fields.get("Package")
        description = fields.get("Description") or fields.get("Description-en")
        if not name or not description:
            continue
        short, _, long = description.partition("\n")
        section = fields.get("Section", "misc").split("/")[-1]
        yield f"debian:{name}", name, short, section
        for i, paragraph in enumerate(p for p in long.split("\n.\n") if p.strip()):
            text = " ".join(paragraph.split())
            if len(text.split()) >= 6:
                yield f"debian:{name}#{i + 1}", name, text, section


def build_registry(size, packages_dir=None):
    """`size` tools (fewer only when no source has any), ids unique."""
    tools, seen = [], set()
    for sources in (_package_lists(packages_dir), _debian_descriptions()):
        for tool_id, name, text, category in sources:
            if tool_id in seen:
                continue
            seen.add(tool_id)
            tools.append({"id": tool_id, "name": name, "description": text,
                          "input_schema": {"type": "object"}, "tags": [category],
                          "category": category,
                          "executor": {"type": "http", "method": "GET",
                                       "url": "https://tools.example/run/" + tool_id}})
            if len(tools) >= size:
                return tools
    originals = len(tools)
    for i in range(size - originals):
        if originals == 0:
            break
        tool = dict(tools[i % originals])
        tool["id"] = f"{tool['id']}~mirror{i // originals + 1}"
        tools.append(tool)
    return tools


def load_synonyms(root=WORDNET, senses=2):
    """word -> one-word synonyms from the word's first `senses` synsets in WordNet."""
    synonyms = collections.defaultdict(set)
    for pos in ("noun", "verb", "adj", "adv"):
        members = {}
        with open(f"{root}/data.{pos}", encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue
                parts = line.split()
                count = int(parts[3], 16)
                members[parts[0]] = [parts[4 + 2 * i].lower().split("(")[0]
                                     for i in range(count)]
        with open(f"{root}/index.{pos}", encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue
                parts = line.split()
                lemma, synsets, pointers = parts[0], int(parts[2]), int(parts[3])
                offsets = parts[6 + pointers:6 + pointers + synsets][:senses]
                for offset in offsets:
                    for word in members.get(offset, ()):
                        if word != lemma and "_" not in word and "_" not in lemma:
                            synonyms[lemma].add(word)
    return synonyms


def paraphrase_queries(tools, count, seed=11, synonyms=None):
    """`count` known-item queries, each {"query": text, "id": the tool it names}."""
    rng = random.Random(seed)
    synonyms = synonyms if synonyms is not None else load_synonyms()
    order = list(range(len(tools)))
    rng.shuffle(order)
    queries = []
    for index in order:
        if len(queries) >= count:
            break
        tool = tools[index]
        if "~mirror" in tool["id"]:
            continue  # a copy has the same text as its original: no known item
        name_words = {p.lower() for p in re.split(r"[^A-Za-z0-9]+", tool["name"]) if p}
        name_words.add(tool["name"].lower())
        words = [w for w in WORD.findall(tool["description"]) if w.lower() not in name_words]
        if len(words) < 6:
            continue
        kept = [w for w in words if rng.random() > 0.25] or words
        if len(kept) < 4:
            kept = words[:4]
        said = []
        for word in kept:
            choices = synonyms.get(word.lower())
            said.append(rng.choice(sorted(choices)) if choices and rng.random() < 0.3
                        else word.lower())
        for _ in range(len(said) // 3):
            i = rng.randrange(len(said) - 1)
            said[i], said[i + 1] = said[i + 1], said[i]
        queries.append({"query": " ".join(said), "id": tool["id"]})
    return queries
