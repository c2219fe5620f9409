"""Brain's processes stay offline: loading the embedding model leaves no trace of onnxruntime's
usage reporting (a device id and an event store under ~/.cache/Microsoft, uploads to Microsoft)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOAD_THE_MODEL = """
import django
django.setup()
from memory.index.embedding import MiniLMEmbedder
assert MiniLMEmbedder().embed(["offline"]).shape == (1, 384)
"""


def test_loading_the_embedding_model_starts_no_usage_reporting(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env.update(HOME=str(tmp_path), DJANGO_SETTINGS_MODULE="brain.settings")
    subprocess.run([sys.executable, "-c", LOAD_THE_MODEL], cwd=ROOT, env=env, check=True, timeout=120)
    assert not (tmp_path / ".cache" / "Microsoft").exists()
