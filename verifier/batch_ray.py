"""Scale-out engine for ``verifier eval --engine ray``: Ray Data ``map_batches`` over an actor pool.

Each actor holds one :class:`~verifier.nli.NLIDetector`; GPUs per actor are configurable. Ray
is an optional extra: ``pip install 'nli-verifier[ray]'``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np

from verifier.errors import require

if TYPE_CHECKING:
    from verifier.batch import EvalConfig

logger = logging.getLogger(__name__)


class _NLIActor:
    """A Ray Data callable class: one NLI model per actor."""

    def __init__(self, init_parameters: dict[str, Any]) -> None:
        from verifier.nli import NLIDetector

        self.detector = NLIDetector(**init_parameters)
        self.detector.warm_up()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        from verifier.batch import _score_isolating_bad_pairs

        pairs = list(zip(batch["premise"].tolist(), batch["hypothesis"].tolist(), strict=True))
        # bad input (a claim too long for the window) is isolated here, in the actor, as the
        # local engine does it; the driver gets each bad pair's reason instead of its row
        scored = _score_isolating_bad_pairs(self.detector.predict, pairs)
        probs = np.zeros((len(pairs), 3), dtype=np.float32)
        errors = []
        for k, s in enumerate(scored):
            if isinstance(s, str):
                errors.append(s)
            else:
                probs[k] = s[0]
                errors.append("")
        return {"idx": batch["idx"], "probs": probs, "error": np.asarray(errors, dtype=object)}


class RayScorer:
    """Callable ``pairs -> (n, 3)`` that scores with Ray Data over an actor pool.

    Args:
        cfg: The evaluation config (model, device, dtype, batch size, actors, GPUs per actor).
    """

    def __init__(self, cfg: EvalConfig) -> None:
        self.ray = require("ray", extra="ray")
        if cfg.ray_actors <= 0:
            raise ValueError(f"ray_actors must be > 0, got {cfg.ray_actors}")
        if cfg.ray_gpus_per_actor < 0:
            raise ValueError(f"ray_gpus_per_actor must be >= 0, got {cfg.ray_gpus_per_actor}")
        bs = 64 if cfg.batch_size == "auto" else int(cfg.batch_size)
        self.batch_size = bs
        self.actors = cfg.ray_actors
        self.gpus = cfg.ray_gpus_per_actor
        self.init_parameters = {"model_name_or_path": cfg.model, "device": cfg.device,
                                "batch_size": bs, "max_length": cfg.max_length,
                                "dtype": cfg.dtype,
                                "hypothesis_sentences": cfg.hypothesis_sentences,
                                "show_progress_bar": False}
        if not self.ray.is_initialized():
            self.ray.init(include_dashboard=False, ignore_reinit_error=True,
                          log_to_driver=False, configure_logging=False)

    def __call__(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """Score ``pairs`` on the actor pool; returns ``(n, 3)`` in input order.

        Raises:
            UnscoredPairs: Some pairs were bad input (a claim too long for the window, say):
                it holds the other pairs' probabilities and each bad pair's reason.
        """
        import ray.data

        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        items = [{"idx": i, "premise": p, "hypothesis": h} for i, (p, h) in enumerate(pairs)]
        ds = ray.data.from_items(items).map_batches(
            _NLIActor,
            fn_constructor_kwargs={"init_parameters": self.init_parameters},
            batch_size=self.batch_size,
            batch_format="numpy",
            concurrency=self.actors,
            num_gpus=self.gpus,
        )
        out = np.zeros((len(pairs), 3), dtype=np.float32)
        reasons: dict[int, str] = {}
        for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
            out[batch["idx"]] = batch["probs"]
            reasons.update((int(i), str(e)) for i, e in zip(batch["idx"], batch["error"],
                                                            strict=True) if e)
        if reasons:
            from verifier.batch import UnscoredPairs

            raise UnscoredPairs(out, reasons)
        return out
