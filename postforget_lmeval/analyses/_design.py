"""Item subsets for the after-run and the design-weighted figures that read them (docs/planning.md).

The draw: a stratified random sample of a before-run's items, without replacement within each stratum. A
stratum is a sub-benchmark × what the before-run's seeds say of an item: ``right`` under every seed, ``wrong``
under every seed, ``mixed`` otherwise (with one seed only right or wrong). Every item of a stratum has the
same inclusion probability π = n_h / N_h.

The estimate: per sub-benchmark and seed the Hájek ratio of the drawn and paired items, weighted 1/π, for
every count the paper's rates divide by the item count (accuracies, F, BT, the chance baseline's k_eff); F_true
and BT_true follow with the same formula as the full figures (``metrics.chance_rate``). With every drawn item
paired, Σ 1/π over a stratum's drawn items is its size, so the ratio is the stratified (Horvitz–Thompson)
estimate Σ_h (N_h / N) p̂_h; a drawn item the after-run lacks is treated as missing at random within its
sub-benchmark. Categories and OVERALL take the macro structure of the headline (``metrics.macro_means``).

The interval: a stratified bootstrap, Rao and Wu's rescaling form (:func:`rescaled`). A replicate redraws n_h - 1
of the n_h drawn items of every stratum with replacement and rescales their weights so that a linear figure
varies between replicates as it does between draws of the subset, the finite population correction included
(an item keeps all its seeds); every figure and macro mean is recomputed. It says how far the full run's figure
can lie from the subset's: the before-run's items are the population, and the spread of a full run's figure over
other items (the analyses' bootstrap) is not in it.

F and BT are design-unbiased. F_true and BT_true clip each sub-benchmark at 0 (the paper's definition), and no
estimator of a clipped figure is unbiased on a few dozen items a sub-benchmark: on real runs the subset's
estimate is a few tenths of a point high. The replicates' spread matches the estimate's spread between draws
(within 4% for all four figures on real runs), but a replicate clips each sub-benchmark again around an estimate
that clipping already pushed up, so the replicates sit about twice the bias above the full run's figure, and
their percentile interval held F_true's full-run figure in only 85% of the draws (the basic, bias-corrected and
shifted percentile intervals each left F_true or BT_true at 91-92%). The interval (:func:`interval`) therefore
takes from the replicates their standard deviation sd and their mean's excess b over the estimate: estimate - b -
Z·sd to estimate + Z·sd (``_bootstrap.Z``, the normal quantile of the level), clipped to [0, 1]. The lower end
covers the estimate corrected for the bias the bootstrap sees, the upper end the estimate as it is, because the
bootstrap's bias is itself only roughly right (it over-corrects BT_true). For F and BT, b is the bootstrap's noise.
Coverage of every figure 94-97% in 2,000 draws of a quarter of real runs (docs/planning.md).
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import pandas as pd

from postforget_lmeval import metrics
from postforget_lmeval.analyses import _bootstrap
from postforget_lmeval.errors import PairingError
from postforget_lmeval.pairing.results import PairResult

STRATA = ("right", "mixed", "wrong")
"""What the before-run's seeds say of an item: right under every seed, right under some, wrong under every one."""
ALLOCATIONS = {"proportional": dict.fromkeys(STRATA, 1.0), "forgetting": {"right": 1.0, "mixed": 2.0, "wrong": 0.5}}
"""Items drawn per item of a stratum, relative to one another. ``proportional`` (default): every item alike, the
strata only fix how many of each kind are drawn, which narrows every figure's interval. ``forgetting``: only items
right before can be forgotten, and mixed ones flip most often, so they are drawn more, and wrong items, which carry
only BT, less: F and F_true need fewer items, BT and BT_true more (docs/planning.md)."""
MIN_PER_STRATUM = 2
"""Every stratum holds at least this many drawn items (all of it when smaller), so none goes unrepresented and
each has a spread for the bootstrap."""
INCLUSION_COLUMNS = ("task", "subtask", "doc_id", "stratum", "stratum_size", "drawn", "pi", "allocation")
"""inclusion.csv: one row per item of the before-run; ``allocation`` names the draw's (one of :data:`ALLOCATIONS`)."""
RATES = ("F", "BT", "F_true", "BT_true")
DESIGN_COLUMNS = (
    "level", "category", "subtask", "items", "drawn", "paired",
    *(f"{r}{s}" for r in RATES for s in ("", "_lo", "_hi")),
)  # fmt: skip
"""design.csv: one row per sub-benchmark (figures averaged over seeds), category and OVERALL."""
SAMPLE_NOTE = (
    "--weights: subtasks.csv, categories.csv and the paper's table describe the items drawn, not the before-run's "
    "items; the design-weighted figures with intervals that include the sampling are in design.csv"
)


def strata(before: pd.DataFrame) -> pd.DataFrame:
    """One row per item of a before-run (task, subtask, doc_id, stratum). ``before``: a samples table of the run
    paired with itself (``before`` per item, seed and replicate; ``task_before`` the lm-eval task)."""
    items = before.astype({"subtask": str, "task_before": str}).groupby(["subtask", "doc_id"], sort=True)
    right = items["before"].mean()
    out = items["task_before"].first().rename("task").reset_index()
    out["stratum"] = np.select([right.to_numpy() == 1, right.to_numpy() == 0], ["right", "wrong"], "mixed")
    return out[["task", "subtask", "doc_id", "stratum"]]


def allocate(sizes: pd.Series, factors: pd.Series, n: int, minimum: int = MIN_PER_STRATUM) -> pd.Series:
    """Items to draw per stratum: ``n`` in all, in proportion to size × factor, none above its size and none
    below ``minimum`` (or its size); rounded by largest remainder. ``n`` must lie between the minimums' sum
    and the total size."""
    floor = np.minimum(sizes, minimum).astype(float)
    if not floor.sum() <= n <= sizes.sum():
        raise ValueError(f"{n} items: draw between {int(floor.sum())} and {int(sizes.sum())}")
    share = sizes * factors
    fixed = pd.Series(np.nan, index=sizes.index)
    while True:  # strata that hit their size or their minimum are fixed there; the rest share what is left
        free = fixed.isna()
        want = share[free] / share[free].sum() * (n - fixed.sum())
        over, under = want > sizes[free], want < floor[free]
        if not (over.any() or under.any()):
            break
        fixed[over[over].index] = sizes[over[over].index]
        fixed[under[under].index] = floor[under[under].index]
    exact = fixed.fillna(want)
    counts = np.floor(exact + 1e-9)
    rest = (exact - counts).where(counts < sizes, -1.0).sort_values(ascending=False, kind="stable")
    counts[rest.index[: int(round(n - counts.sum()))]] += 1
    return counts.astype(int)


def draw(items: pd.DataFrame, n: int, seed: int = 0, allocation: str = "proportional") -> pd.DataFrame:
    """inclusion.csv: every item of ``items`` (from :func:`strata`) with its stratum's size, whether it was drawn
    and its inclusion probability; ``n`` items drawn in all, without replacement within each stratum."""
    keys = ["subtask", "stratum"]
    sizes = items.groupby(keys, sort=True).size()
    factors = sizes.index.get_level_values("stratum").map(ALLOCATIONS[allocation]).to_numpy()
    counts = allocate(sizes, pd.Series(factors, index=sizes.index), n).rename("n_h")
    out = items.sort_values([*keys, "doc_id"]).reset_index(drop=True).join(counts, on=keys)
    out["stratum_size"] = out.groupby(keys)["doc_id"].transform("size")
    rank = pd.Series(np.random.default_rng(seed).random(len(out))).groupby([out[k] for k in keys]).rank(method="first")
    out["drawn"] = (rank <= out["n_h"]).astype(int)  # the n_h smallest of uniform keys: a simple random sample
    out["pi"] = out["n_h"] / out["stratum_size"]
    out["allocation"] = allocation
    return out[list(INCLUSION_COLUMNS)]


def samples_json(inclusion: pd.DataFrame) -> dict[str, list[int]]:
    """lm-eval's ``--samples``: per task the drawn doc ids. A postforget task names its other variant too (chat
    and ``_base``), so an after-run of either variant reads the same items; lm-eval ignores names it does not run."""
    drawn = inclusion[inclusion["drawn"] == 1]
    out: dict[str, list[int]] = {}
    for task, ids in drawn.groupby("task", sort=True)["doc_id"]:
        names = [task]
        if task.startswith("postforget_"):
            chat = task.removesuffix("_base")
            names = [chat, f"{chat}_base"]
        for name in names:
            out[name] = sorted(int(i) for i in ids)
    return out


def _item_table(samples: pd.DataFrame, drawn: pd.DataFrame) -> pd.DataFrame:
    """Items × seeds of transition codes (3 1->1, 2 1->0, 1 0->1, 0 0->0, NaN unpaired) of the drawn items, with
    category, stratum, weight 1/π and k (the first logged) beside them."""
    rows = samples.astype({"subtask": str, "category": str, "seed": str})
    rows = rows.assign(code=2 * rows["before"].astype(int) + rows["after"].astype(int))
    rows = rows.drop_duplicates(["subtask", "doc_id", "seed"])
    codes = rows.pivot(index=["subtask", "doc_id"], columns="seed", values="code")
    firsts = rows.groupby(["subtask", "doc_id"])[["category", "k"]].first()
    table = drawn.set_index(["subtask", "doc_id"])[["stratum", "pi"]].join(firsts, how="inner").join(codes)
    return table.sort_index()


Figures = TypeVar("Figures", np.ndarray, pd.DataFrame)


def rescaled(rng: np.random.Generator, n: int, pi: float, n_boot: int) -> np.ndarray:
    """n_boot x n weight factors of Rao and Wu's rescaling bootstrap for one stratum of n items drawn without
    replacement with probability ``pi``: each replicate draws n - 1 of them with replacement (r_i times each)
    and gives item i the factor 1 - λ + λ r_i n / (n - 1), λ = sqrt(1 - pi). A linear estimate's replicates
    then vary exactly as it does between draws, the finite population correction included; factors are never
    negative. A stratum of one drawn item has no spread to resample (factor 1)."""
    if n < 2:
        return np.ones((n_boot, n))
    picks = rng.integers(0, n, size=(n_boot, n - 1)) + n * np.arange(n_boot)[:, None]
    times = np.bincount(picks.ravel(), minlength=n_boot * n).reshape(n_boot, n)
    lam = np.sqrt(1.0 - pi)
    return 1.0 - lam + lam * times * n / (n - 1)


def subtask_replicates(
    rng: np.random.Generator, codes: np.ndarray, k: np.ndarray, stratum: np.ndarray, pi: np.ndarray, n_boot: int
) -> dict[str, np.ndarray]:
    """:data:`RATES` of one sub-benchmark, each (1 + n_boot) x seeds: row 0 the estimate, then the rescaling
    bootstrap's replicates, stratum by stratum. ``codes``: drawn items x seeds (3 1->1, 2 1->0, 1 0->1,
    0 0->0, NaN unpaired); ``k``, ``stratum``, ``pi``: per item."""
    factors = np.ones((n_boot + 1, len(pi)))
    for h in np.unique(stratum):
        rows = np.flatnonzero(stratum == h)
        factors[1:, rows] = rescaled(rng, len(rows), float(pi[rows[0]]), n_boot)
    weights = factors / pi
    n = weights @ (~np.isnan(codes)).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        figures = {"F": weights @ (codes == 2) / n, "BT": weights @ (codes == 1) / n}
    return {**figures, **_bootstrap.rates(weights, codes, k)}


def replicates(samples: pd.DataFrame, inclusion: pd.DataFrame, n_boot: int, seed: int) -> pd.DataFrame:
    """Long table (category, subtask, seed, replicate, F, BT, F_true, BT_true); replicate -1 is the estimate."""
    rng = np.random.default_rng(seed)
    table = _item_table(samples, inclusion[inclusion["drawn"] == 1])
    seeds = np.array([c for c in table.columns if c not in ("stratum", "pi", "category", "k")])
    parts = []
    for subtask, items in table.groupby(level="subtask", sort=True):
        codes = items[seeds].to_numpy(dtype=float)
        present = ~np.isnan(codes).all(axis=0)  # this sub-benchmark's seeds
        figures = subtask_replicates(
            rng, codes[:, present], items["k"].to_numpy(dtype=float), items["stratum"].to_numpy(),
            items["pi"].to_numpy(dtype=float), n_boot,
        )  # fmt: skip
        for s, seed_name in enumerate(seeds[present]):
            frame = pd.DataFrame({r: figures[r][:, s] for r in RATES})
            frame.insert(0, "replicate", np.arange(-1, n_boot))
            frame.insert(0, "seed", seed_name)
            frame.insert(0, "subtask", subtask)
            frame.insert(0, "category", items["category"].iloc[0])
            parts.append(frame)
    return pd.concat(parts, ignore_index=True)


def interval(estimate: Figures, centre: Figures, spread: Figures) -> tuple[Figures, Figures]:
    """The 95% interval of design-weighted figures from their rescaling-bootstrap replicates' mean (``centre``) and
    standard deviation (``spread``): the estimate ± ``_bootstrap.Z`` standard deviations, the lower end moved
    further down by the replicates' excess over the estimate where there is one (the clipping's bias), within
    [0, 1] where every rate lies. Why not the replicates' percentiles: the module docstring."""
    excess, half = (centre - estimate).clip(0.0, None), _bootstrap.Z * spread
    return (estimate - excess - half).clip(0.0, 1.0), (estimate + half).clip(0.0, 1.0)


def estimate(
    samples: pd.DataFrame, inclusion: pd.DataFrame, n_boot: int = _bootstrap.N_BOOT, seed: int = 0
) -> pd.DataFrame:
    """design.csv (:data:`DESIGN_COLUMNS`): the design-weighted F, BT, F_true, BT_true with their stratified
    bootstrap intervals per sub-benchmark (averaged over seeds), category and OVERALL (the macro headline).
    ``samples``: the paired items (samples.parquet); ``inclusion``: inclusion.csv of the before-run's draw."""
    reps = replicates(samples, inclusion, n_boot, seed)
    per_subtask = reps.groupby(["replicate", "category", "subtask"], sort=True)[list(RATES)].mean()
    macro = metrics.macro_means(reps, RATES, by=["replicate"])
    rows = []
    for level, frame in (("subtask", per_subtask), ("category", macro)):
        keys = [n for n in frame.index.names if n != "replicate"]
        point = frame.xs(-1, level="replicate")
        boot = frame.drop(index=-1, level="replicate").groupby(level=keys, sort=False)
        lo, hi = interval(point, boot.mean(), boot.std())
        part = pd.concat([point, lo.add_suffix("_lo"), hi.add_suffix("_hi")], axis=1).reset_index()
        part.insert(0, "level", level)
        rows.append(part)
    out = pd.concat(rows, ignore_index=True)
    out["subtask"] = out["subtask"].where(out["level"] == "subtask", "")
    pop = inclusion.groupby("subtask")["drawn"].agg(items="size", drawn="sum")
    paired = _item_table(samples, inclusion[inclusion["drawn"] == 1]).groupby(level="subtask").size()
    sizes = pop.join(paired.rename("paired")).fillna(0).astype(int)
    of_cat = reps.drop_duplicates("subtask").set_index("subtask")["category"]
    by_cat = sizes.groupby(of_cat.reindex(sizes.index)).sum()
    by_cat.loc[metrics.OVERALL] = sizes.loc[sizes.index.isin(of_cat.index)].sum()
    for col in ("items", "drawn", "paired"):
        out[col] = np.where(out["level"] == "subtask", out["subtask"].map(sizes[col]), out["category"].map(by_cat[col]))
    return out[list(DESIGN_COLUMNS)]


def as_categories(table: pd.DataFrame) -> pd.DataFrame:
    """The category and OVERALL rows of design.csv shaped as categories.csv's macro rows (``F_true_mean``,
    ``F_true_lo`` ...), for what reads those: a release gate on a subset reads the design-weighted figures."""
    rows = table[table["level"] == "category"].rename(columns={r: f"{r}_mean" for r in RATES})
    return rows.drop(columns=["level", "subtask"]).assign(average="macro")


def drawn_items(inclusion: pd.DataFrame) -> frozenset[tuple[str, int]]:
    """The (sub-benchmark, doc_id) drawn in ``inclusion``: what the pairing is told (``PairOptions.drawn``) so that
    the before-run's items outside the subset are not warned about as unpaired."""
    drawn = inclusion[inclusion["drawn"] == 1]
    return frozenset(zip(drawn["subtask"].astype(str), drawn["doc_id"].astype(int)))


def weigh(result: PairResult, inclusion: pd.DataFrame, source: str, n_boot: int = _bootstrap.N_BOOT) -> None:
    """Add the design-weighted figures of the subset ``inclusion`` (read from ``source``) to ``result``: the table
    ``design``, ``summary["design"]`` and a note that the unweighted tables describe the sample. ``result``: a pairing
    told the drawn items (``PairOptions.drawn`` = :func:`drawn_items`), so the before-run's items outside the subset
    are counted (``unpaired_undrawn``), not warned about; they become one note."""
    subtasks = set(result.samples["subtask"].astype(str))
    missing = sorted(subtasks - set(inclusion["subtask"]))
    if missing:
        raise PairingError(
            f"{source}: no items of sub-benchmark(s) {', '.join(missing[:5])}: draw the subset from this pairing's "
            "before-run (postforget-pair subset BEFORE_DIR), or leave them out with --exclude"
        )
    by_design = int(result.summary["totals"].get("unpaired_undrawn", 0))
    drawn = inclusion.loc[inclusion["drawn"] == 1, ["subtask", "doc_id"]]
    items = result.samples[["subtask", "doc_id"]].astype({"subtask": str}).drop_duplicates()
    extra = len(items.merge(drawn, how="left", indicator=True).query("_merge == 'left_only'"))
    lacking = len(
        drawn[drawn["subtask"].isin(subtasks)].merge(items, how="left", indicator=True).query("_merge == 'left_only'")
    )
    table = estimate(result.samples, inclusion, n_boot=n_boot)
    result.tables["design"] = table
    result.notes.append(SAMPLE_NOTE)
    if by_design:
        result.notes.append(f"--weights: {by_design} item(s) of the before-run outside the subset, unpaired as drawn")
    if extra:
        result.notes.append(f"--weights: {extra} paired item(s) not drawn in {source} are left out of design.csv")
    if lacking:
        result.warnings.append(
            f"--weights: {lacking} drawn item(s) missing from the after-run; design.csv treats them as missing at "
            "random within their sub-benchmark: evaluate the after-model on every item of samples.json"
        )
    overall = table[table["category"] == metrics.OVERALL].iloc[0]
    counts = inclusion[inclusion["subtask"].isin(subtasks)].groupby(["subtask", "stratum"], sort=True)["drawn"]
    strata: dict[str, dict[str, list[int]]] = {}  # per sub-benchmark and stratum: [items, drawn]
    for (subtask, stratum), n, d in counts.agg(["size", "sum"]).itertuples(name=None):
        strata.setdefault(subtask, {})[stratum] = [int(n), int(d)]
    result.summary["design"] = {
        "inclusion": source,
        "allocation": str(inclusion["allocation"].iloc[0]),
        "strata": strata,
        "estimator": "Hájek ratio of the drawn items weighted 1/pi per sub-benchmark and seed, macro averages",
        "interval": f"estimate - b - 1.96 s to estimate + 1.96 s, within [0, 1]: s the standard deviation and b the "
        f"mean's excess over the estimate of {n_boot} stratified rescaling-bootstrap replicates (Rao-Wu)",
        "items": int(overall["items"]),
        "drawn": int(overall["drawn"]),
        "unpaired_by_design": by_design,
        "drawn_missing": lacking,
        "overall": {c: float(overall[c]) for c in DESIGN_COLUMNS[6:]},
    }
    result.summary["notes"], result.summary["warnings"] = result.notes, result.warnings
