"""A calibrated meta-classifier over named detector features, persisted as JSON (no pickle).

``MetaClassifier`` is a scikit-learn estimator: parameters are stored untouched in
``__init__``, learned state ends in ``_``, ``fit`` returns ``self`` and ``predict_proba`` checks
that it is fitted. Missing features (``NaN``: a detector that was turned off, a draft without
log-probs) are imputed with the training median and flagged by a missing-indicator column.

Calibration: out-of-fold probabilities of the underlying estimator (a multinomial logistic
regression, or gradient-boosted trees with ``estimator="boosting"``) are mapped per class by
isotonic regression (or a sigmoid), then renormalised; the final estimator is refit on all
the data. Boosted trees are stored as plain arrays and evaluated with numpy, so a loaded file
does not depend on scikit-learn's private tree classes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from verifier.checking import is_int, is_real

FORMAT = "nli-verifier.meta-classifier.v1"
#: Estimators a :class:`MetaClassifier` can wrap.
ESTIMATORS: tuple[str, str] = ("logistic", "boosting")


class MetaClassifier(ClassifierMixin, BaseEstimator):
    """Calibrated multinomial logistic regression (or boosted trees) over named features.

    Args:
        feature_names: Column names, in ``X`` order (``None``: the column names of a pandas
            ``DataFrame`` ``X``, else ``f0, f1, ...``). A ``DataFrame`` given to ``fit`` or
            ``predict_proba`` is read by its column names, in any order.
        C: Inverse regularisation strength (``estimator="logistic"``).
        calibration: ``"isotonic"``, ``"sigmoid"`` or ``"none"``.
        cv: Folds for the out-of-fold probabilities the calibrators are fitted on.
        random_state: Seed of the fold split (and of the boosting).
        estimator: ``"logistic"`` (linear in the features) or ``"boosting"`` (scikit-learn's
            ``GradientBoostingClassifier``: interactions and thresholds of the features).
        n_estimators, learning_rate, max_leaf_nodes, min_samples_leaf: the boosting's
            trees (``estimator="boosting"`` only).

    Example:
        >>> import numpy as np
        >>> X = np.r_[np.random.default_rng(0).normal(0, 1, (60, 2)),
        ...           np.random.default_rng(1).normal(3, 1, (60, 2))]
        >>> y = np.array(["Insufficient_Info"] * 60 + ["Supported"] * 60)
        >>> str(MetaClassifier(["a", "b"]).fit(X, y).predict([[3.0, 3.0]])[0])
        'Supported'
    """

    def __init__(self, feature_names: Sequence[str] | None = None, C: float = 1.0,
                 calibration: Literal["isotonic", "sigmoid", "none"] = "isotonic", cv: int = 3,
                 random_state: int = 0,
                 estimator: Literal["logistic", "boosting"] = "logistic",
                 n_estimators: int = 100, learning_rate: float = 0.1,
                 max_leaf_nodes: int = 15, min_samples_leaf: int = 40) -> None:
        self.feature_names = feature_names
        self.C = C
        self.calibration = calibration
        self.cv = cv
        self.random_state = random_state
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf

    # ------------------------------------------------------------------ features
    def _prepare(self, X: Any, *, fit: bool) -> np.ndarray:
        columns = _frame_columns(X)
        names: list[str] | None
        if not fit:
            names = list(self.feature_names_in_)
        elif self.feature_names is not None:
            names = list(self.feature_names)
        else:  # scikit-learn's convention: a DataFrame's columns name the features
            names = columns
        if columns is not None and names is not None:  # a DataFrame is read by column name
            X = _align_columns(X, names)
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
        if fit:
            if names is None:
                names = [f"f{i}" for i in range(X.shape[1])]
            if len(names) != X.shape[1]:
                raise ValueError(f"feature_names has {len(names)} names but X has "
                                 f"{X.shape[1]} columns")
            self.feature_names_in_: np.ndarray = np.asarray(names, dtype=object)
            self.n_features_in_ = len(names)
            med = np.nanmedian(np.where(np.isfinite(X), X, np.nan), axis=0)
            self.fill_ = np.where(np.isnan(med), 0.0, med)
            self.missing_cols_ = np.flatnonzero(np.isnan(X).any(axis=0))
        elif X.shape[1] != len(self.feature_names_in_):
            raise ValueError(f"X has {X.shape[1]} columns, the model was fitted on "
                             f"{len(self.feature_names_in_)}")
        miss = ~np.isfinite(X)
        Xf = np.where(miss, self.fill_, X)
        Z = np.concatenate([Xf, miss[:, self.missing_cols_].astype(np.float64)], axis=1)
        if fit:
            self.mean_ = Z.mean(axis=0)
            sd = Z.std(axis=0)
            self.scale_ = np.where(sd > 0, sd, 1.0)
        return (Z - self.mean_) / self.scale_

    # ------------------------------------------------------------------ fitting
    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike, *, groups: npt.ArrayLike | None = None,
            sample_weight: npt.ArrayLike | None = None) -> MetaClassifier:
        """Fit on ``X`` (n, k) with labels ``y``; returns ``self``.

        ``groups`` (e.g. the data set of each row): the out-of-fold probabilities the
        calibrators learn from then leave whole groups out, so calibration is learnt on data
        the regression has not seen the like of (less overconfident on a new data set).
        ``sample_weight``: ``(n,)`` non-negative row weights for the regression and the
        calibrators (e.g. :func:`balanced_weights` so that no data set dominates).

        A fit that fails leaves the classifier as it was (unfitted, or fitted before).
        """
        # fitted on a copy whose learned state replaces this one's only once the whole fit
        # has succeeded: a failed (re)fit must not leave old and new arrays mixed
        fitted = clone(self)._fit(X, y, groups=groups, sample_weight=sample_weight)
        for attr in [k for k in vars(self) if _learned(k)]:
            delattr(self, attr)
        for attr, value in vars(fitted).items():
            if _learned(attr):
                setattr(self, attr, value)
        return self

    def _fit(self, X: npt.ArrayLike, y: npt.ArrayLike, *, groups: npt.ArrayLike | None,
             sample_weight: npt.ArrayLike | None) -> MetaClassifier:
        if self.calibration not in ("isotonic", "sigmoid", "none"):
            raise ValueError(f"calibration must be 'isotonic', 'sigmoid' or 'none', got "
                             f"{self.calibration!r}")
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {list(ESTIMATORS)}, got "
                             f"{self.estimator!r}")
        labels = np.asarray(y)
        Z = self._prepare(X, fit=True)
        if len(labels) != len(Z):
            raise ValueError(f"X has {len(Z)} rows but labels has {len(labels)}")
        w = _check_weights(sample_weight, len(labels))
        self.classes_ = np.unique(labels)
        if len(self.classes_) < 2:
            raise ValueError(f"y needs at least two classes, got {self.classes_.tolist()}")
        _check_folds(labels, self.cv, self.calibration, "y")

        self.calibrators_: list[dict[str, Any]] = []
        if self.calibration != "none":
            oof = np.zeros((len(labels), len(self.classes_)))
            for tr, te in self._folds(Z, labels, groups):
                m = self._new_estimator().fit(Z[tr], labels[tr],
                                              sample_weight=None if w is None else w[tr])
                cols = np.searchsorted(self.classes_, m.classes_)
                oof[np.ix_(te, cols)] = m.predict_proba(Z[te])
            for k, c in enumerate(self.classes_):
                self.calibrators_.append(_fit_calibrator(oof[:, k], (labels == c).astype(float),
                                                         self.calibration, w))
            self._oof = oof  # out-of-fold raw probabilities (threshold selection; not saved)
        model = self._new_estimator().fit(Z, labels, sample_weight=w)
        if self.estimator == "logistic":
            self.coef_ = model.coef_
            self.intercept_ = model.intercept_
        else:
            self.trees_, self.init_ = _export_trees(model, Z)
        return self

    def _new_estimator(self) -> Any:
        if self.estimator == "logistic":
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression(C=self.C, max_iter=2000)
        from sklearn.ensemble import GradientBoostingClassifier

        return GradientBoostingClassifier(
            n_estimators=self.n_estimators, learning_rate=self.learning_rate,
            max_leaf_nodes=self.max_leaf_nodes, min_samples_leaf=self.min_samples_leaf,
            random_state=self.random_state)

    def _folds(self, Z: np.ndarray, y: np.ndarray, groups: npt.ArrayLike | None) -> Any:
        from sklearn.model_selection import GroupKFold, StratifiedKFold

        if groups is not None:
            g = np.asarray(groups, dtype=object)
            if len(g) != len(y):
                raise ValueError(f"groups has {len(g)} items but y has {len(y)}")
            n = len(set(g.tolist()))
            if n >= 2:
                folds = list(GroupKFold(n_splits=min(self.cv, n)).split(Z, y, g))
                # a fold whose training part lacks a class cannot be fitted: fall back
                if all(len(set(y[tr].tolist())) == len(self.classes_) for tr, _ in folds):
                    return folds
        return StratifiedKFold(n_splits=self.cv, shuffle=True,
                               random_state=self.random_state).split(Z, y)

    # ------------------------------------------------------------------ prediction
    def _raw_proba(self, Z: np.ndarray) -> np.ndarray:
        if hasattr(self, "trees_"):
            logits = self.init_ + self.learning_rate * _tree_sums(self.trees_, Z)
        else:
            logits = Z @ self.coef_.T + self.intercept_
        if len(self.classes_) == 2:  # sklearn keeps one row of weights for binary problems
            p1 = 1.0 / (1.0 + np.exp(-logits[:, 0]))
            return np.stack([1 - p1, p1], axis=1)
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated probabilities, shape ``(n, len(classes_))``, rows summing to 1."""
        check_is_fitted(self, ("coef_", "trees_"), all_or_any=any)
        return self._calibrate(self._raw_proba(self._prepare(X, fit=False)))

    def _calibrate(self, p: np.ndarray) -> np.ndarray:
        if self.calibrators_:
            p = np.stack([_apply_calibrator(c, p[:, k]) for k, c in
                          enumerate(self.calibrators_)], axis=1)
            s = p.sum(axis=1, keepdims=True)
            p = np.where(s > 0, p / np.where(s > 0, s, 1), 1.0 / p.shape[1])
        return p

    def predict(self, X: Any) -> np.ndarray:
        """Most probable class of each row."""
        return self.classes_[self.predict_proba(X).argmax(axis=1)]

    # ------------------------------------------------------------------ persistence
    def to_json(self) -> str:
        """Every parameter and learned array as JSON."""
        check_is_fitted(self, ("coef_", "trees_"), all_or_any=any)
        if hasattr(self, "trees_"):
            learned: dict[str, Any] = {"init": self.init_.tolist(), "trees": {
                k: v.tolist() for k, v in self.trees_.items()}}
        else:
            learned = {"coef": self.coef_.tolist(), "intercept": self.intercept_.tolist()}
        return json.dumps({
            "format": FORMAT,
            "params": _json_params(self.get_params()),
            "classes": self.classes_.tolist(),
            "feature_names": self.feature_names_in_.tolist(),
            "fill": self.fill_.tolist(), "missing_cols": self.missing_cols_.tolist(),
            "mean": self.mean_.tolist(), "scale": self.scale_.tolist(),
            **learned,
            "calibrators": self.calibrators_,
        }, indent=1)

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_json` to ``path``."""
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def from_json(cls, text: str) -> MetaClassifier:
        """Rebuild a fitted classifier from :meth:`to_json` output."""
        d = json.loads(text)
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            got = d.get("format") if isinstance(d, dict) else type(d).__name__
            raise ValueError(f"not a meta-classifier file (format {got!r})")
        try:
            m = cls(**dict(d["params"]))
            m.classes_ = np.asarray(d["classes"])
            m.feature_names_in_ = np.asarray(d["feature_names"], dtype=object)
            m.fill_ = np.asarray(d["fill"], dtype=np.float64)
            m.missing_cols_ = np.asarray(d["missing_cols"], dtype=int)
            m.mean_ = np.asarray(d["mean"], dtype=np.float64)
            m.scale_ = np.asarray(d["scale"], dtype=np.float64)
            if "trees" in d:
                m.init_ = np.asarray(d["init"], dtype=np.float64)
                m.trees_ = {k: np.asarray(d["trees"][k], dtype=dt)
                            for k, dt in _TREE_DTYPES.items()}
            else:
                m.coef_ = np.asarray(d["coef"], dtype=np.float64)
                m.intercept_ = np.asarray(d["intercept"], dtype=np.float64)
            m.calibrators_ = list(d["calibrators"])
        except KeyError as e:
            raise ValueError(f"meta-classifier file lacks the field {e.args[0]!r}") from None
        except (TypeError, ValueError) as e:
            raise ValueError(f"meta-classifier file has a malformed field: {e}") from e
        # read as int above, 0.7 would silently be column 0
        if not isinstance(d["missing_cols"], list) or not all(is_int(i) for i in d["missing_cols"]):
            raise ValueError(f"meta-classifier file: missing_cols must be column indices "
                             f"(integers), got {d['missing_cols']!r:.80}")
        m.n_features_in_ = len(m.feature_names_in_)
        _check_loaded(m)
        return m

    @classmethod
    def load(cls, path: str | Path) -> MetaClassifier:
        """Read a file written by :meth:`save` (an error names the file)."""
        return _read_file(path, cls.from_json, "meta-classifier")


#: Arrays of exported trees: ``feature``, ``threshold``, ``left``, ``right`` and ``value``
#: (the node's output, read at leaves) have shape ``(n_trees, max_nodes)``, shorter trees
#: padded with leaves; ``klass``, shape ``(n_trees,)``, is the score column (class) each tree
#: adds to (one column for a binary problem). Leaves have ``left == -1``.
_TREE_DTYPES: dict[str, type] = {"feature": np.int64, "threshold": np.float64,
                                 "left": np.int64, "right": np.int64,
                                 "value": np.float64, "klass": np.int64}


def _export_trees(model: Any, Z: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """A fitted ``GradientBoostingClassifier``'s trees as padded arrays, and its initial scores.

    The initial scores are read back from ``decision_function`` minus the trees' sum. Uses
    only the public ``estimators_`` / ``tree_`` attributes, and checks that the arrays
    reproduce the model's scores on ``Z``.
    """
    ests = np.asarray(model.estimators_, dtype=object)  # (n_estimators, n_scores)
    trees = [(k, t.tree_) for row in ests for k, t in enumerate(row)]
    width = max(t.node_count for _, t in trees)
    out = {name: np.zeros((len(trees), width), dtype=dt) for name, dt in _TREE_DTYPES.items()
           if name != "klass"}
    out["klass"] = np.asarray([k for k, _ in trees], dtype=np.int64)
    out["left"][:] = -1
    out["right"][:] = -1
    for i, (_, t) in enumerate(trees):
        n = t.node_count
        out["feature"][i, :n] = np.maximum(t.feature, 0)
        out["threshold"][i, :n] = t.threshold
        out["left"][i, :n] = t.children_left
        out["right"][i, :n] = t.children_right
        out["value"][i, :n] = t.value.reshape(n, -1)[:, 0]
    scores = np.asarray(model.decision_function(Z), dtype=np.float64).reshape(len(Z), -1)
    init_rows = scores - model.learning_rate * _tree_sums(out, Z)
    init = init_rows.mean(axis=0)
    if not np.allclose(init_rows, init, atol=1e-6):
        raise RuntimeError("exported boosting trees do not reproduce the model's scores "
                           "(scikit-learn's tree layout changed?)")
    return out, init


def _tree_sums(trees: dict[str, np.ndarray], Z: np.ndarray) -> np.ndarray:
    """Sum of the leaf values each row reaches, per score column: ``(n, n_scores)``.

    All trees are walked at once (one step per level); rows go left when
    ``x <= threshold`` with ``x`` rounded to float32, as scikit-learn's trees compare.
    """
    Zf = np.asarray(Z, dtype=np.float32).astype(np.float64)
    n_trees = trees["feature"].shape[0]
    tree_idx = np.arange(n_trees)[None, :]
    node = np.zeros((len(Zf), n_trees), dtype=np.int64)
    rows = np.arange(len(Zf))[:, None]
    for _ in range(trees["feature"].shape[1]):
        left = trees["left"][tree_idx, node]
        inner = left >= 0
        if not inner.any():
            break
        x = Zf[rows, trees["feature"][tree_idx, node]]
        go_left = x <= trees["threshold"][tree_idx, node]
        node = np.where(inner, np.where(go_left, left, trees["right"][tree_idx, node]), node)
    leaf = trees["value"][tree_idx, node]  # (n, n_trees)
    n_scores = int(trees["klass"].max()) + 1
    out = np.zeros((len(Zf), n_scores))
    for k in range(n_scores):
        out[:, k] = leaf[:, trees["klass"] == k].sum(axis=1)
    return out


def _check_weights(sample_weight: npt.ArrayLike | None, n: int) -> np.ndarray | None:
    """``sample_weight`` as a float array of ``n`` finite, non-negative values (or ``None``)."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},), got {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any() or not (w > 0).any():
        raise ValueError("sample_weight must be finite and >= 0 with at least one weight > 0, "
                         f"got min {np.nanmin(w)!r}, max {np.nanmax(w)!r}")
    return w


def _learned(attr: str) -> bool:
    """Whether an attribute of a :class:`MetaClassifier` is learned state (not a parameter)."""
    return (attr.endswith("_") and not attr.startswith("__")) or attr == "_oof"


def _check_folds(labels: np.ndarray, cv: Any, calibration: str, what: str) -> None:
    """Raise ``ValueError`` unless every class of ``labels`` has a row in each of ``cv`` folds.

    The calibrators learn from out-of-fold probabilities (as scikit-learn's
    ``CalibratedClassifierCV``, which asks the same); ``what`` names the labels in the error.
    """
    if calibration == "none":
        return
    if not is_int(cv) or cv < 2:
        raise ValueError(f"cv must be an int >= 2 (the calibration's folds), got {cv!r}")
    names, counts = np.unique(labels, return_counts=True)
    if counts.min() < cv:
        got = {str(k): int(n) for k, n in zip(names, counts, strict=True)}
        raise ValueError(f"{what}: calibration with cv={cv} folds needs at least {cv} rows of "
                         f"each class, got {got}; give more rows, a lower cv or "
                         f"calibration='none'")


def _frame_columns(X: Any) -> list[str] | None:
    """The column names of a pandas ``DataFrame`` ``X`` (``None``: not one, or not all strings).

    As scikit-learn, only string column names count as feature names.
    """
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = list(columns)
    return names if names and all(isinstance(c, str) for c in names) else None


def _align_columns(X: Any, names: Sequence[str]) -> Any:
    """A ``DataFrame`` ``X`` with its columns in ``names`` order (an error names the others)."""
    columns = _frame_columns(X)
    if columns is None or columns == list(names):
        return X
    missing = [n for n in names if n not in columns]
    extra = [c for c in columns if c not in names]
    if missing or extra or len(columns) != len(names):
        raise ValueError(f"X's columns are not the feature names the model was fitted on: "
                         f"missing {missing}, unexpected {extra}"
                         + ("" if missing or extra else f", repeated in {columns}"))
    return X[list(names)]


def balanced_weights(groups: npt.ArrayLike) -> np.ndarray:
    """Row weights that give every group (data set) the same total weight, mean 1.

    Example:
        >>> balanced_weights(["a", "a", "a", "b"]).tolist()
        [0.6666666666666666, 0.6666666666666666, 0.6666666666666666, 2.0]
    """
    g = np.asarray(groups, dtype=object)
    if g.ndim != 1 or not len(g):
        raise ValueError(f"groups must be a non-empty 1-D sequence, got shape {g.shape}")
    names, inverse, counts = np.unique(g.astype(str), return_inverse=True, return_counts=True)
    return len(g) / (len(names) * counts[inverse].astype(np.float64))


def _json_params(params: dict[str, Any]) -> dict[str, Any]:
    """``get_params()`` with arrays and tuples as lists and numpy scalars as Python numbers.

    JSON has no arrays, and ``json`` writes no numpy scalar (``GridSearchCV`` sets
    ``cv=np.int64(3)``, say).
    """
    def plain(v: Any) -> Any:
        return v.item() if isinstance(v, np.generic) else v

    return {k: (v.tolist() if isinstance(v, np.ndarray) else [plain(x) for x in v]
                if isinstance(v, (tuple, list)) else plain(v)) for k, v in params.items()}


def _check_loaded(m: MetaClassifier) -> None:
    """Raise ``ValueError`` unless the arrays read from a file fit together.

    A file edited by hand or cut short must not load into a classifier that broadcasts a
    short array or flips its classes and then predicts wrong probabilities.
    """
    def bad(msg: str) -> ValueError:
        return ValueError(f"meta-classifier file: {msg}")

    classes = m.classes_.tolist()
    if len(classes) < 2 or classes != sorted(set(classes)):
        raise bad(f"classes must be 2 or more distinct labels in sorted order, got {classes}")
    n = len(m.feature_names_in_)
    if n == 0 or len(set(m.feature_names_in_.tolist())) != n:
        raise bad("feature_names must be distinct and not empty")
    if m.fill_.shape != (n,):
        raise bad(f"fill has {m.fill_.size} values for {n} features")
    if m.missing_cols_.ndim != 1 or ((m.missing_cols_ < 0) | (m.missing_cols_ >= n)).any():
        raise bad(f"missing_cols must index the {n} features, got {m.missing_cols_.tolist()}")
    width = n + len(m.missing_cols_)
    for name in ("mean_", "scale_"):
        a = getattr(m, name)
        if a.shape != (width,) or not np.isfinite(a).all():
            raise bad(f"{name[:-1]} must hold {width} finite values, got shape {a.shape}")
    if (m.scale_ <= 0).any():
        raise bad("scale must be positive")
    if not np.isfinite(m.fill_).all():
        raise bad("fill must be finite")
    rows = 1 if len(classes) == 2 else len(classes)
    if hasattr(m, "coef_"):
        if m.coef_.shape != (rows, width) or m.intercept_.shape != (rows,):
            raise bad(f"coef / intercept must have shapes {(rows, width)} / {(rows,)}, got "
                      f"{m.coef_.shape} / {m.intercept_.shape}")
        if not (np.isfinite(m.coef_).all() and np.isfinite(m.intercept_).all()):
            raise bad("coef and intercept must be finite")
    else:
        t = m.trees_
        shape = t["feature"].shape
        if (len(shape) != 2 or any(t[k].shape != shape for k in _TREE_DTYPES if k != "klass")
                or t["klass"].shape != shape[:1] or m.init_.shape != (rows,)):
            raise bad("tree arrays of inconsistent shapes")
        if 0 in shape:  # a tree has a root at least; predicting would index past the end
            raise bad(f"trees must hold at least one tree of one node, got arrays of shape "
                      f"{shape}")
        inner = t["left"] >= 0
        node = np.broadcast_to(np.arange(shape[1]), shape)
        # scikit-learn numbers a node's children after it: walks end, and never index back
        # from the end of a row (a negative child of an inner node would)
        children_ok = all((t[side][inner] > node[inner]).all()
                          and (t[side][inner] < shape[1]).all()
                          and (t[side][~inner] == -1).all() for side in ("left", "right"))
        if ((t["feature"][inner] < 0) | (t["feature"][inner] >= width)).any() \
                or ((t["klass"] < 0) | (t["klass"] >= rows)).any() or not children_ok \
                or not (np.isfinite(t["value"]).all() and np.isfinite(m.init_).all()
                        and np.isfinite(t["threshold"][inner]).all()):
            raise bad("tree arrays out of range")
        lr = m.learning_rate
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not np.isfinite(lr) \
                or lr <= 0:
            raise bad(f"params.learning_rate must be a finite number > 0, got {lr!r}")
    cal = m.calibrators_
    if cal and len(cal) != len(classes):
        raise bad(f"{len(cal)} calibrators for {len(classes)} classes")
    if not cal and m.calibration != "none":  # a fit writes one per class: the file is cut
        raise bad(f"calibrators is empty, but params.calibration is {m.calibration!r}")
    for k, c in enumerate(cal):
        _check_calibrator(c, f"calibrators[{k}]")


def _check_calibrator(c: Any, where: str) -> None:
    """Raise ``ValueError`` unless ``c`` is a calibrator :func:`_apply_calibrator` can use.

    It must map probabilities to probabilities: an isotonic calibrator's ``x`` and ``y``
    are 1-D, of one length >= 1, ``x`` non-decreasing (``np.interp`` silently gives wrong
    values otherwise) and ``y`` in [0, 1]; a sigmoid's ``a`` and ``b`` are finite numbers; a
    constant's ``value`` is in [0, 1].
    """
    def bad(msg: str) -> ValueError:
        return ValueError(f"meta-classifier file: {where}: {msg}")

    kind = c.get("kind") if isinstance(c, dict) else None
    keys = {"sigmoid": ("a", "b"), "isotonic": ("x", "y"), "constant": ("value",)}.get(
        kind)  # type: ignore[arg-type]
    if keys is None:
        raise bad(f"unknown calibrator {c!r:.120}")
    values = {}
    for key in keys:
        if key not in c:
            raise bad(f"{kind} calibrator lacks the field {key!r}")
        try:
            values[key] = np.asarray(c[key], dtype=np.float64)
        except (TypeError, ValueError):
            raise bad(f"{kind} calibrator's {key} must be numbers, got {c[key]!r:.80}") from None
        if not np.isfinite(values[key]).all():
            raise bad(f"{kind} calibrator needs finite {', '.join(keys)}, got {key} = "
                      f"{c[key]!r:.80}")
    if kind == "isotonic":
        x, y = values["x"], values["y"]
        if x.ndim != 1 or y.ndim != 1 or len(x) != len(y) or not len(x):
            raise bad(f"isotonic x and y must be lists of one length >= 1, got shapes "
                      f"{x.shape} and {y.shape}")
        if (np.diff(x) < 0).any():
            raise bad(f"isotonic x must be non-decreasing, got {c['x']!r:.80}")
        if ((y < 0) | (y > 1)).any():
            raise bad(f"isotonic y must be probabilities in [0, 1], got {c['y']!r:.80}")
    else:
        for key, v in values.items():
            if v.ndim != 0 or isinstance(c[key], bool):
                raise bad(f"{kind} calibrator's {key} must be one number, got {c[key]!r:.80}")
        if kind == "constant" and not 0.0 <= float(values["value"]) <= 1.0:
            raise bad(f"constant calibrator's value must be in [0, 1], got {c['value']!r}")


def _fit_calibrator(p: np.ndarray, target: np.ndarray, method: str,
                    weight: np.ndarray | None = None) -> dict[str, Any]:
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(
            p, target, sample_weight=weight)
        return {"kind": "isotonic", "x": iso.X_thresholds_.tolist(),
                "y": iso.y_thresholds_.tolist()}
    from sklearn.linear_model import LogisticRegression

    z = np.log(np.clip(p, 1e-6, 1 - 1e-6) / np.clip(1 - p, 1e-6, 1 - 1e-6)).reshape(-1, 1)
    if len(np.unique(target)) < 2:
        return {"kind": "constant", "value": float(target.mean())}
    lr = LogisticRegression(C=1e6, max_iter=1000).fit(z, target, sample_weight=weight)
    return {"kind": "sigmoid", "a": float(lr.coef_[0, 0]), "b": float(lr.intercept_[0])}


def _apply_calibrator(c: dict[str, Any], p: np.ndarray) -> np.ndarray:
    if c["kind"] == "isotonic":
        return np.interp(p, c["x"], c["y"])
    if c["kind"] == "constant":
        return np.full_like(p, c["value"])
    z = np.log(np.clip(p, 1e-6, 1 - 1e-6) / np.clip(1 - p, 1e-6, 1 - 1e-6))
    return 1.0 / (1.0 + np.exp(-(c["a"] * z + c["b"])))


#: The three statuses, in the column order of :meth:`StatusClassifier.predict_proba`.
STATUSES: tuple[str, str, str] = ("Contradictory", "Insufficient_Info", "Supported")
#: Label of a row known to be not supported, without saying whether it is contradicted
#: or unverifiable (2-class data sets such as SciFact, FRANK or SummEdits).
NOT_SUPPORTED = "Not_Supported"
STATUS_FORMAT = "nli-verifier.status-classifier.v1"


class StatusClassifier(ClassifierMixin, BaseEstimator):
    """Three statuses from two calibrated stages, trainable on 2-class and 3-class data.

    Stage one, ``support_``, is a :class:`MetaClassifier` of ``Supported`` against the rest,
    fitted on every row; stage two, ``refute_``, separates ``Contradictory`` from
    ``Insufficient_Info`` and is fitted on the rows that say which (2-class data sets label
    their negatives :data:`NOT_SUPPORTED`, and only stage one learns from them). Then
    ``p(Supported) = s``, ``p(Contradictory) = (1 - s) q``, ``p(Insufficient_Info) =
    (1 - s)(1 - q)``. Without stage two, ``q`` is ``refute_prior_``: 1.0 or 0.0 when the
    rows that say which (with weight > 0) all say the same, 0.5 when there are none.

    Args:
        feature_names: Column names, in ``X`` order (``None``: as for
            :class:`MetaClassifier`, a ``DataFrame``'s columns, else ``f0, f1, ...``).
        C: Inverse regularisation strength of both stages (where logistic).
        calibration: ``"isotonic"``, ``"sigmoid"`` or ``"none"`` (both stages).
        cv: Folds for the calibration's out-of-fold probabilities.
        random_state: Seed of the fold split.
        estimator: Stage one's estimator, ``"logistic"`` or ``"boosting"`` (see
            :class:`MetaClassifier`).
        refute_estimator: Stage two's (``None``: as ``estimator``).

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> X = np.r_[rng.normal(0, 1, (40, 2)), rng.normal(4, 1, (40, 2)),
        ...           rng.normal((0, 4), 1, (40, 2))]
        >>> y = (["Supported"] * 40 + ["Not_Supported"] * 40 + ["Contradictory"] * 20
        ...      + ["Insufficient_Info"] * 20)
        >>> m = StatusClassifier(["a", "b"]).fit(X, y)
        >>> m.classes_.tolist()
        ['Contradictory', 'Insufficient_Info', 'Supported']
        >>> str(m.predict([[0.0, 0.0]])[0])
        'Supported'
    """

    def __init__(self, feature_names: Sequence[str] | None = None, C: float = 1.0,
                 calibration: Literal["isotonic", "sigmoid", "none"] = "isotonic", cv: int = 3,
                 random_state: int = 0,
                 estimator: Literal["logistic", "boosting"] = "logistic",
                 refute_estimator: Literal["logistic", "boosting"] | None = None) -> None:
        self.feature_names = feature_names
        self.C = C
        self.calibration = calibration
        self.cv = cv
        self.random_state = random_state
        self.estimator = estimator
        self.refute_estimator = refute_estimator

    def _stage(self, estimator: str) -> MetaClassifier:
        if estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {list(ESTIMATORS)}, got {estimator!r}")
        return MetaClassifier(self.feature_names, C=self.C, calibration=self.calibration,
                              cv=self.cv, random_state=self.random_state,
                              estimator=estimator)  # type: ignore[arg-type]

    def fit(self, X: npt.ArrayLike, y: Iterable[Any], *, groups: npt.ArrayLike | None = None,
            sample_weight: npt.ArrayLike | None = None) -> StatusClassifier:
        """Fit on ``X`` with labels from :data:`STATUSES` or :data:`NOT_SUPPORTED`.

        ``groups``, ``sample_weight``: see :meth:`MetaClassifier.fit`. A fit that fails
        leaves the classifier as it was (unfitted, or fitted before).
        """
        columns = _frame_columns(X)
        if columns is not None and self.feature_names is not None:
            X = _align_columns(X, list(self.feature_names))
        names = columns if self.feature_names is None else None  # a DataFrame's, for the stages

        def stage(estimator: str) -> MetaClassifier:
            # given the DataFrame's values, a stage takes its feature names from its columns
            s = self._stage(estimator)
            return s if names is None else s.set_params(feature_names=names)

        Xa = np.asarray(X, dtype=np.float64)
        labels = np.asarray([str(v) for v in y], dtype=object)
        bad = sorted(set(labels.tolist()) - {*STATUSES, NOT_SUPPORTED})
        if bad:
            raise ValueError(f"y has unknown labels {bad}; expected {[*STATUSES, NOT_SUPPORTED]}")
        if len(labels) != len(Xa):
            raise ValueError(f"X has {len(Xa)} rows but y has {len(labels)}")
        w = _check_weights(sample_weight, len(labels))
        sup = np.where(labels == "Supported", "Supported", NOT_SUPPORTED)
        g = None if groups is None else np.asarray(groups, dtype=object)
        refute_est = self.estimator if self.refute_estimator is None else self.refute_estimator
        self._stage(refute_est)  # a bad name fails before the first stage is fitted
        rows = np.isin(labels, ("Contradictory", "Insufficient_Info"))
        # the classes stage two can learn: those of its rows that weigh something
        said = sorted(set(labels[rows if w is None else rows & (w > 0)].tolist()))
        # folds too few for a class fail here, naming the stage, before anything is fitted
        if len(set(sup.tolist())) == 2:
            _check_folds(sup, self.cv, self.calibration, "stage one (Supported vs the rest)")
        if len(said) == 2:
            _check_folds(labels[rows], self.cv, self.calibration,
                         "stage two (Contradictory vs Insufficient_Info)")
        # fitted into locals, set on self only once both stages have succeeded
        support = stage(self.estimator).fit(Xa, sup, groups=g, sample_weight=w)
        oof = getattr(support, "_oof", None)
        if oof is not None:
            p = support._calibrate(oof)[:, list(support.classes_).index("Supported")]
            threshold = _best_threshold(p, sup == "Supported", g, w)
        else:
            threshold = 0.5
        refute: MetaClassifier | None = None
        if len(said) == 2:
            refute = stage(refute_est).fit(
                Xa[rows], labels[rows], groups=None if g is None else g[rows],
                sample_weight=None if w is None else w[rows])
            contra = (labels[rows] == "Contradictory").astype(np.float64)
            wr = None if w is None or not (w[rows] > 0).any() else w[rows]
            prior = float(np.average(contra, weights=wr))
        elif said:  # one class only: every unsupported row is of it (its weighted share)
            prior = 1.0 if said == ["Contradictory"] else 0.0
        else:  # no 3-class rows: contradicted and unverifiable share the rest equally
            prior = 0.5
        self.support_, self.support_threshold_ = support, threshold
        self.refute_, self.refute_prior_ = refute, prior
        self.classes_ = np.asarray(STATUSES, dtype=object)
        self.feature_names_in_ = support.feature_names_in_
        self.n_features_in_ = support.n_features_in_
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """Probabilities, shape ``(n, 3)``, columns in :data:`STATUSES` order."""
        check_is_fitted(self, "support_")
        sp = self.support_.predict_proba(X)
        s = sp[:, list(self.support_.classes_).index("Supported")]
        if self.refute_ is not None:
            rp = self.refute_.predict_proba(X)
            q = rp[:, list(self.refute_.classes_).index("Contradictory")]
        else:
            q = np.full(len(s), self.refute_prior_)
        return np.stack([(1 - s) * q, (1 - s) * (1 - q), s], axis=1)

    def predict(self, X: Any) -> np.ndarray:
        """Each row's status.

        ``Supported`` when p(Supported) reaches ``support_threshold_``, else the more probable
        of the other two; a tie goes to ``Insufficient_Info``, as in
        :meth:`verifier.Verifier.decide` (a 2-class fit, with no stage two, splits the rest
        evenly: its unsupported rows are ``Insufficient_Info``, not claimed refuted).
        """
        p = self.predict_proba(X)
        rest = np.where(p[:, 0] > p[:, 1], 0, 1)
        return self.classes_[np.where(p[:, 2] >= self.support_threshold_, 2, rest)]

    def to_json(self) -> str:
        """Both stages as JSON."""
        check_is_fitted(self, "support_")
        return json.dumps({
            "format": STATUS_FORMAT, "params": _json_params(self.get_params()),
            "support": json.loads(self.support_.to_json()),
            "refute": json.loads(self.refute_.to_json()) if self.refute_ is not None else None,
            "refute_prior": self.refute_prior_,
            "support_threshold": self.support_threshold_,
        }, indent=1)

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_json` to ``path``."""
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def from_json(cls, text: str) -> StatusClassifier:
        """Rebuild a fitted classifier from :meth:`to_json` output."""
        d = json.loads(text)
        if not isinstance(d, dict) or d.get("format") != STATUS_FORMAT:
            got = d.get("format") if isinstance(d, dict) else type(d).__name__
            raise ValueError(f"not a status-classifier file (format {got!r})")
        support = _load_stage(d, "support")  # a stage's own errors name the stage
        # null is a 2-class fit without stage two; a missing field is an error
        refute = None if d.get("refute", ...) is None else _load_stage(d, "refute")
        try:
            m = cls(**d["params"])
            m.support_, m.refute_ = support, refute
            m.refute_prior_ = float(d["refute_prior"])
            m.support_threshold_ = float(d.get("support_threshold", 0.5))
        except KeyError as e:
            raise ValueError(f"status-classifier file lacks the field {e.args[0]!r}") from None
        except (TypeError, ValueError) as e:
            raise ValueError(f"status-classifier file has a malformed field: {e}") from e
        for field in ("refute_prior", "support_threshold"):  # float() also reads "0.5", True
            if not is_real(d.get(field, 0.5)):
                raise ValueError(f"status-classifier file: {field} must be a number, got "
                                 f"{d[field]!r:.80}")
        if list(m.support_.classes_) != [NOT_SUPPORTED, "Supported"]:
            raise ValueError(f"status-classifier file: the support stage's classes must be "
                             f"{[NOT_SUPPORTED, 'Supported']}, got {m.support_.classes_.tolist()}")
        if m.refute_ is not None:
            if list(m.refute_.classes_) != ["Contradictory", "Insufficient_Info"]:
                raise ValueError("status-classifier file: the refute stage's classes must be "
                                 "['Contradictory', 'Insufficient_Info'], got "
                                 f"{m.refute_.classes_.tolist()}")
            if list(m.refute_.feature_names_in_) != list(m.support_.feature_names_in_):
                raise ValueError("status-classifier file: its two stages have different "
                                 "feature names")
        if not 0.0 <= m.refute_prior_ <= 1.0:
            raise ValueError(f"status-classifier file: refute_prior must be in [0, 1], got "
                             f"{m.refute_prior_!r}")
        if not 0.0 < m.support_threshold_ < 1.0:
            raise ValueError(f"status-classifier file: support_threshold must be in (0, 1), "
                             f"got {m.support_threshold_!r}")
        m.classes_ = np.asarray(STATUSES, dtype=object)
        m.feature_names_in_ = m.support_.feature_names_in_
        m.n_features_in_ = m.support_.n_features_in_
        return m

    @classmethod
    def load(cls, path: str | Path) -> StatusClassifier:
        """Read a file written by :meth:`save` (an error names the file)."""
        return _read_file(path, cls.from_json, "status-classifier")


def _read_file(path: str | Path, from_json: Callable[[str], Any], what: str) -> Any:
    """``from_json`` of the file at ``path``; a missing file or a bad one names the path."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no {what} file at {str(path)!r}")
    try:
        return from_json(p.read_text(encoding="utf-8"))
    except ValueError as e:
        raise ValueError(f"{str(path)!r}: {e}") from e


def _load_stage(d: dict[str, Any], name: str) -> MetaClassifier:
    """The stage ``d[name]`` of a status-classifier file (an error names the stage)."""
    if name not in d:
        raise ValueError(f"status-classifier file lacks the field {name!r}")
    try:
        return MetaClassifier.from_json(json.dumps(d[name]))
    except ValueError as e:
        raise ValueError(f"status-classifier file: in {name!r}: {e}") from e


def _best_threshold(p: np.ndarray, positive: np.ndarray, groups: np.ndarray | None,
                    weight: np.ndarray | None = None) -> float:
    """The p(Supported) cut that maximises macro-F1 of supported vs the rest.

    Computed on out-of-fold probabilities, weighted by ``weight`` (``None``: alike), averaged
    over groups when given; ties go to the cut nearest 0.5. A group whose rows (with weight
    > 0) hold one class only is left out: its macro-F1 is highest, 1.0, when nothing is
    predicted positive, which would push the cut up whatever the other groups need.
    """
    from sklearn.metrics import f1_score

    held = np.ones(len(p), dtype=bool) if weight is None else weight > 0
    parts = [] if groups is None else [m for m in (groups == v for v in dict.fromkeys(
        groups.tolist())) if len(set(positive[m & held].tolist())) == 2]
    if not parts:  # no groups, or none with both classes: all the rows
        parts = [np.ones(len(p), dtype=bool)]
    grid = np.round(np.arange(0.05, 0.951, 0.01), 2)
    scores = [np.mean([f1_score(positive[m], p[m] >= t, labels=[False, True], average="macro",
                                sample_weight=None if weight is None else weight[m],
                                zero_division=0)
                       for m in parts]) for t in grid]
    best = max(scores)
    cands = [t for t, sc in zip(grid, scores, strict=True) if sc >= best - 1e-9]
    return float(min(cands, key=lambda t: abs(t - 0.5)))
