"""Shared fixtures: no network, tiny random-weight models built in-process."""

from __future__ import annotations

import os
import socket
import string
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

_VOCAB_WORDS = (
    "the a an is was are of in on and or not no to for by with at from as it this that "
    "paris france capital city river seine london england berlin germany country population "
    "million billion year born died film actor music band album song released american "
    "british french german president company founded war world first second largest small "
    "big old new north south east west water sea mountain red blue green man woman dog cat "
    "people he she they his her their has had have be been one two three four five"
).split()


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Block outgoing sockets except to loopback (Ray and local servers use it)."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address, *args, **kwargs):  # type: ignore[no-untyped-def]
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and (
            host.startswith("127.") or host in ("localhost", "::1") or host.startswith("/")
        ):
            return real_connect(self, address, *args, **kwargs)
        if self.family == getattr(socket, "AF_UNIX", None):
            return real_connect(self, address, *args, **kwargs)
        raise RuntimeError(f"network access blocked in tests: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded)


def _write_tiny_tokenizer(folder: Path) -> None:
    from transformers import BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab += list(string.ascii_lowercase) + list(string.digits) + list(string.punctuation)
    vocab += _VOCAB_WORDS
    vocab += ["##" + c for c in string.ascii_lowercase + string.digits]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)


def save_tiny_llama(folder: Path, vocab_size: int, eos_id: int, *, layers: int = 2,
                    positions: int = 128) -> Path:
    """Save a tiny random LlamaForCausalLM (seed 0) next to a tokenizer already in ``folder``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=positions, eos_token_id=eos_id,
                      pad_token_id=eos_id, bos_token_id=None)
    LlamaForCausalLM(cfg).eval().save_pretrained(folder)
    return folder


def make_tiny_classifier(
    folder: Path, id2label: dict[int, str], *, seed: int = 0, max_position_embeddings: int = 128
) -> Path:
    """Save a tiny random BertForSequenceClassification with the given ``id2label``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    _write_tiny_tokenizer(folder)
    vocab_size = len((folder / "vocab.txt").read_text().split())
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_position_embeddings,
        num_labels=len(id2label),
        id2label={int(k): v for k, v in id2label.items()},
        label2id={v: int(k) for k, v in id2label.items()},
    )
    torch.manual_seed(seed)
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_nli_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random 3-class NLI checkpoint (entailment, neutral, contradiction)."""
    return make_tiny_classifier(
        tmp_path_factory.mktemp("tiny-nli"), {0: "entailment", 1: "neutral", 2: "contradiction"}
    )


@pytest.fixture(scope="session")
def tiny_embedding_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random sentence-transformers model folder (BERT + mean pooling)."""
    import torch
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers >= 6 moved the modules
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:  # pragma: no cover
        from sentence_transformers import models  # type: ignore[no-redef]
    from transformers import BertConfig, BertModel

    folder = tmp_path_factory.mktemp("tiny-st")
    hf = folder / "hf"
    _write_tiny_tokenizer(hf)
    vocab_size = len((hf / "vocab.txt").read_text().split())
    torch.manual_seed(0)
    BertModel(
        BertConfig(
            vocab_size=vocab_size,
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=128,
        )
    ).save_pretrained(hf)
    word = models.Transformer(str(hf), max_seq_length=64)
    dim_fn = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    pool = models.Pooling(dim_fn(), pooling_mode="mean")
    out = folder / "st"
    SentenceTransformer(modules=[word, pool], device="cpu").save(str(out))
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:  # pragma: no cover
        has_cuda = False
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords and not has_cuda:
            item.add_marker(skip_gpu)
