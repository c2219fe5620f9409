"""Peak memory of extracting one long document: parsed whole against parsed a window at a time.

    python -m bench.extraction_memory --chars 300000

Each way runs in a process of its own, so each peak (``ru_maxrss``) is its own. The parser's
memory grows with the text it holds; windows (``memory.graph.document_facts.EXTRACTION_WINDOW``)
bound it whatever the document's length.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from datetime import date

from bench.mcp_calls import ROOT, setup_environment

SENTENCE = (
    "On 3 March 2026 Priya Shah became head of support at BigCo. BigCo signed the enterprise plan for "
    "$48,500 a year. Sam Carter will send the contract to Initech by Friday."
)


def measure(way: str, chars: int) -> None:
    import django

    django.setup()
    from memory.extraction import sentences as pipeline
    from memory.graph import document_facts

    starts, text = [], ""
    while len(text) < chars:
        starts.append(len(text))
        text += f"{SENTENCE} Note {len(starts)}.\n\n"
    pipeline.extract("Warm up.", document_date=date(2026, 1, 1), known=[])
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    started = time.perf_counter()
    if way == "whole":
        result = pipeline.extract(text, document_date=date(2026, 1, 1), known=[])
    else:
        result = document_facts._extract_in_windows(text, starts, document_date=date(2026, 1, 1), known=[])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    seconds = time.perf_counter() - started
    print(
        f"{way:8} {len(text):>9,} chars  {seconds:6.1f} s  {len(result.facts):>6} facts  "
        f"peak {peak:>6} MB (model loaded: {loaded} MB)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=300_000)
    parser.add_argument("--way", choices=["whole", "windows"])
    args = parser.parse_args()
    if args.way:
        measure(args.way, args.chars)
        return
    env = setup_environment()
    for way in ("whole", "windows"):
        command = [sys.executable, "-m", "bench.extraction_memory", "--way", way, "--chars", str(args.chars)]
        subprocess.run(command, env=env, cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
