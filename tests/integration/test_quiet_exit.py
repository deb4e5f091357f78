"""A process that loaded and used the embedded model closes it in an exit hook, before the
interpreter unloads llama.cpp (left to the garbage collector, its destructor printed "Exception
ignored in: <function Llama.__del__>" at the end of a full test run)."""

import subprocess
import sys

from tests.conftest import ROOT

SCRIPT = """
from pathlib import Path
from rag.llm.llamacpp import LlamaCppLLM
from rag.llm.models import shipped_model_path
import atexit
llm = LlamaCppLLM(shipped_model_path("smollm2", Path("data/models")))
print(llm.complete([{"role": "user", "content": "hi"}], max_tokens=3))
atexit._run_exitfuncs()  # what the interpreter runs at exit, before it tears modules down
print("closed" if not llm._contexts else "still loaded")
"""


def test_a_process_that_used_the_model_exits_quietly():
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "closed"  # the exit hook freed the model
    assert len(run.stdout.strip().splitlines()) > 1  # and it really generated first
    assert "Exception ignored" not in run.stderr, run.stderr[-2000:]
