from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from rag.generation import (
    Generator,
    HFGenerator,
    OpenAICompatibleGenerator,
    StaticGenerator,
    build_prompt,
)
from verifier.types import Evidence

WORDS = "paris is the capital of france berlin germany river city a an and big small".split()


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<unk>", "<eos>", *WORDS])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    folder = tmp_path_factory.mktemp("tiny-lm")
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", eos_token="<eos>",
                                  pad_token="<eos>")
    tok.save_pretrained(folder)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=128, eos_token_id=1, pad_token_id=1,
                      bos_token_id=None)
    LlamaForCausalLM(cfg).eval().save_pretrained(folder)
    return folder


def test_generation_logprobs_match_teacher_forcing(tiny_lm) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gen = HFGenerator(str(tiny_lm), max_new_tokens=8, device="cpu")
    g = gen.generate("paris is the capital of")[0]
    assert g.tokens and len(g.tokens) == len(g.token_logprobs) == len(g.token_offsets)
    assert "".join(g.tokens) == g.text
    assert all(g.text[a:b] == t for (a, b), t in zip(g.token_offsets, g.tokens, strict=True))
    tok = AutoTokenizer.from_pretrained(tiny_lm)
    model = AutoModelForCausalLM.from_pretrained(tiny_lm).eval()
    prompt_ids = tok("paris is the capital of", return_tensors="pt")["input_ids"]
    new_ids = tok(g.text, add_special_tokens=False, return_tensors="pt")["input_ids"]
    ids = torch.cat([prompt_ids, new_ids], dim=1)
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=ids).logits[0, :-1].float(), -1)
    start = prompt_ids.shape[1]
    expected = [float(logp[start - 1 + i, t]) for i, t in enumerate(new_ids[0].tolist())]
    assert g.token_logprobs == pytest.approx(expected, abs=1e-4)
    scored = gen.score("paris is the capital of", g.text)
    assert scored.token_logprobs == pytest.approx(expected, abs=1e-4)


def test_generation_sampling_n_and_seed(tiny_lm) -> None:
    gen = HFGenerator(str(tiny_lm), max_new_tokens=6, temperature=1.0, seed=3, device="cpu")
    a = gen.generate("paris is", n=3)
    b = gen.generate("paris is", n=3)
    assert len(a) == 3 and [x.text for x in a] == [x.text for x in b]
    assert HFGenerator(str(tiny_lm), max_new_tokens=4, device="cpu").generate("paris", n=2)[0] \
        is not None


def test_generation_argument_errors(tiny_lm) -> None:
    with pytest.raises(ValueError, match="max_new_tokens must be a positive int, got 0"):
        HFGenerator(max_new_tokens=0)
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        HFGenerator(temperature=-1)
    with pytest.raises(ValueError, match="n must be > 0, got 0"):
        HFGenerator(str(tiny_lm)).generate("paris", n=0)
    with pytest.raises(ValueError, match="prompt must be a non-empty str"):
        StaticGenerator("x").generate(" ")


def test_generation_static_and_protocol() -> None:
    g = StaticGenerator("Paris is in France.", tokens=["Paris", " is"], token_logprobs=[-0.1, -2])
    out = g.generate("q", n=2)
    assert [x.text for x in out] == ["Paris is in France."] * 2
    assert out[0].token_logprobs == (-0.1, -2.0)
    assert isinstance(g, Generator)
    assert StaticGenerator("x").generate("q")[0].token_logprobs is None


def test_generation_prompt_numbers_passages() -> None:
    p = build_prompt("Where is Paris?", [Evidence("Paris is in France.", "d1"),
                                         Evidence("Berlin  is\nin Germany.", "d2")])
    assert "[1] Paris is in France." in p and "[2] Berlin is in Germany." in p
    assert p.index("[2]") < p.index("Question: Where is Paris?")


def test_generation_openai_backend_against_local_server(monkeypatch) -> None:
    seen = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen["body"], seen["auth"] = body, self.headers.get("Authorization")
            choice = {"message": {"content": "Paris is"}, "logprobs": {"content": [
                {"token": "Paris", "logprob": -0.5}, {"token": " is", "logprob": -0.25}]}}
            data = json.dumps({"choices": [choice] * body["n"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("MY_KEY", "sk-test")
        gen = OpenAICompatibleGenerator("m", base_url=f"http://127.0.0.1:{server.server_port}/v1",
                                        api_key_env="MY_KEY")
        out = gen.generate("hello", n=2)
    finally:
        server.shutdown()
    assert len(out) == 2 and out[0].text == "Paris is"
    assert out[0].token_logprobs == (-0.5, -0.25) and out[0].token_offsets == ((0, 5), (5, 8))
    assert seen["auth"] == "Bearer sk-test" and seen["body"]["logprobs"] is True
    assert "sk-test" not in json.dumps(gen.to_dict())


@pytest.mark.slow
def test_generation_embedded_smollm2_gives_logprobs() -> None:
    gen = HFGenerator(max_new_tokens=8)
    g = gen.generate("What is the capital of France?")[0]
    assert g.text.strip() and len(g.token_logprobs) == len(g.tokens) > 0
    assert all(lp <= 0 for lp in g.token_logprobs)
