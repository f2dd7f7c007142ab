"""Scale-out engine for ``verifier eval --engine ray``: a pool of Ray actors, kept for the run.

Each actor holds one :class:`~verifier.nli.NLIDetector`; GPUs per actor are configurable. Ray
is an optional extra: ``pip install 'nli-verifier[ray]'``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np

from verifier.errors import ConfigurationError, require

if TYPE_CHECKING:
    from verifier.batch import EvalConfig

logger = logging.getLogger(__name__)


class _NLIActor:
    """One NLI model per actor: a Ray actor class (:meth:`score`), or a Ray Data callable."""

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

    def score(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """:meth:`__call__`, as an actor method."""
        return self(batch)


class RayScorer:
    """Callable ``pairs -> (n, 3)`` that scores over a pool of Ray actors.

    The actors (each loads the model once) are made on the first call and kept for the
    calls after it, one per chunk of the run: a Ray Data pipeline built per call started a
    new pool and loaded the model again for every chunk (~6 s each on a CPU).

    Args:
        cfg: The evaluation config (model, device, dtype, batch size, actors, GPUs per actor).
    """

    def __init__(self, cfg: EvalConfig) -> None:
        self.ray = require("ray", extra="ray")
        if cfg.ray_actors <= 0:
            raise ValueError(f"ray_actors must be > 0, got {cfg.ray_actors}")
        if cfg.ray_gpus_per_actor < 0:
            raise ValueError(f"ray_gpus_per_actor must be >= 0, got {cfg.ray_gpus_per_actor}")
        if cfg.model is not None:  # a missing folder: said here, not by dying actors
            from verifier.nli import local_model_path

            local_model_path(cfg.model)
        bs = 64 if cfg.batch_size == "auto" else int(cfg.batch_size)
        self.batch_size = bs
        self._actors: list[Any] | None = None  # made on the first call, kept
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
        if self.gpus > 0:  # an actor no node can hold waits for ever
            have = float(self.ray.cluster_resources().get("GPU", 0))
            if have < self.gpus:
                raise ConfigurationError(
                    f"ray_gpus_per_actor (--ray-gpus-per-actor) is {self.gpus}, but the Ray "
                    f"cluster has {have:g} GPUs: no actor could start, and the run would "
                    f"wait for ever")
            if have < self.gpus * self.actors:
                logger.warning("the Ray cluster has %g GPUs for %d actors of %g: %d run at "
                               "once", have, self.actors, self.gpus, int(have // self.gpus))

    def __call__(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """Score ``pairs`` on the actor pool; returns ``(n, 3)`` in input order.

        Raises:
            UnscoredPairs: Some pairs were bad input (a claim too long for the window, say):
                it holds the other pairs' probabilities and each bad pair's reason.
        """
        from ray.util import ActorPool

        if self._actors is None:
            remote = self.ray.remote(num_gpus=self.gpus)(_NLIActor)
            self._actors = [remote.remote(self.init_parameters) for _ in range(self.actors)]
        bs = self.batch_size
        batches = [{"idx": np.arange(i, min(i + bs, len(pairs))),
                    "premise": np.asarray([p for p, _ in pairs[i:i + bs]], dtype=object),
                    "hypothesis": np.asarray([h for _, h in pairs[i:i + bs]], dtype=object)}
                   for i in range(0, len(pairs), bs)]
        out = np.zeros((len(pairs), 3), dtype=np.float32)
        reasons: dict[int, str] = {}
        try:
            for batch in ActorPool(self._actors).map(lambda a, b: a.score.remote(b), batches):
                out[batch["idx"]] = batch["probs"]
                reasons.update((int(i), str(e)) for i, e in zip(batch["idx"], batch["error"],
                                                                strict=True) if e)
        except self.ray.exceptions.RayError as exc:  # an actor died (its model did not load)
            lines = [x for x in str(exc).strip().splitlines() if x.strip()]
            raise ConfigurationError(f"the Ray engine failed: {lines[-1] if lines else exc!r}"
                                     ) from exc
        if reasons:
            from verifier.batch import UnscoredPairs

            raise UnscoredPairs(out, reasons)
        return out
