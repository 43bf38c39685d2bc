# ruff: noqa: E501, RUF001  (content: long regex and prose lines; the unicode minus, times and quotes are meant)
"""The seed content (pages 000, 002, 003 and 004 of the shared seeds), in our own words.

Loaded by migration 0002 and by the `seed_content` test fixture (transactional tests flush
the database, data migrations included). `content_load` takes an app registry so the
migration can pass its historical models; it only creates what is missing, so instructor
edits are never overwritten. Because migration 0002 runs this against the models as of 0001,
the dictionaries may only use fields that exist in 0001: content for a field added later
belongs in a new data migration.

Every figure below is checked against the seeds; the worked example was recomputed with numpy.
"""

from __future__ import annotations

from typing import Any

# --- Shared key-point patterns ----------------------------------------------------------
# One regex per line. Patterns include the claim's verb so a negation inside the claim
# ("can't recover") is seen by the negation check.

VARIANCE_GROWS = "\n".join(
    [
        r"varian\w*.{0,40}(grow|increas|scale|proportional|linear|equal|is|of|becomes?).{0,20}\bd(_?k|_?head|imension)?\b",
        r"(dot products?|scores?|logits?|sums?).{0,40}(grow|increas|get (large|big|huge)|gets? (large|big|huge)|scale)\w*.{0,40}(dimension|d_?k|length|head (size|width)|sqrt|longer)",
        r"(std|standard deviation|spread|typical size|magnitude).{0,30}sqrt",
    ]
)
SOFTMAX_SATURATES = "\n".join(
    [
        r"saturat\w*",
        r"one[- ]hot",
        r"(one|a single|the largest|the max\w*|the top) (key|token|entry|score|weight)s?.{0,40}(all|almost all|most|nearly all|everything)",
        r"(spiky|peaky|spikes?|hard (pick|max)|argmax)",
        r"(all|almost all|nearly all|most) (of )?(the )?(weight|mass|attention|pile)",
        r"(almost |nearly )?everything on one (entry|key|token|score)",
    ]
)
GRADIENTS_VANISH = "\n".join(
    [
        r"gradients?.{0,40}(vanish\w*|tiny|small|near(ly)? zero|close to zero|die|dies|disappear\w*|zero)",
        r"vanishing gradients?",
        r"(learning|training) (stalls?|stops?|plateaus?|struggles?|slows?)",
        r"stops? learning",
        r"(loss )?plateaus?",
        r"slope.{0,40}(dies|vanish\w*|zero|flat)",
    ]
)
UNIT_VARIANCE = "\n".join(
    [
        r"(divid\w*|scal\w*|division).{0,40}(variance|spread|std|standard deviation).{0,40}(\b1\b|one|unit|constant|same|stable|fixed)",
        r"unit variance",
        r"variance (of )?(about |around |back to |near )?(1|one)\b",
        r"(keeps?|restores?|brings?|holds?).{0,30}(variance|spread|scores?).{0,30}(constant|\b1\b|one|unit|stable|fixed|same)",
        r"(variance|spread|size).{0,30}(independent of|regardless of|whatever|for any|at any|for every) .{0,20}(d_?k|dimension|head|width|size|length)",
        r"typical score.{0,30}(near|about|around) (size )?(1|one)\b",
    ]
)


def _kp(slug: str, label: str, patterns: str) -> dict[str, str]:
    return {"slug": slug, "label": label, "patterns": patterns}


MAIN_KEY_POINTS = [
    _kp(
        "variance-grows",
        "The variance of a raw score grows with $d_k$ (its typical size with $\\sqrt{d_k}$)",
        VARIANCE_GROWS,
    ),
    _kp(
        "softmax-saturates",
        "Large scores saturate the softmax: one key takes almost all the weight",
        SOFTMAX_SATURATES,
    ),
    _kp(
        "gradients-vanish",
        "The softmax gradient almost vanishes, so learning stalls",
        GRADIENTS_VANISH,
    ),
    _kp(
        "scale-restores-unit-variance",
        "Dividing by $\\sqrt{d_k}$ keeps the score variance near 1 for any head size",
        UNIT_VARIANCE,
    ),
]

ROLES = [
    ("inference-engineering", "Inference Engineering"),
    ("llm-product-engineering", "LLM Product Engineering"),
    ("ai-data-systems", "AI Data Systems"),
]

# --- Seed 003: the interview question ------------------------------------------------------

Q003: dict[str, Any] = {
    "slug": "why-divide-before-softmax",
    "title": "Why are the attention scores divided before the softmax?",
    "roles": ["inference-engineering", "llm-product-engineering", "ai-data-systems"],
    "level": "L2",
    "ordering": 10,
    "exercise_slugs": ["scaled-dot-product-attention", "multi-head-attention", "stable-softmax"],
    "prompt": (
        "In the attention formula the raw scores are divided by something before they reach "
        "the softmax. A new engineer decides the division is just a convention and deletes it "
        "to save one multiply. What happens to training, and how would you demonstrate the "
        "effect in ten minutes?"
    ),
    "short_answer": (
        "The dot product of two vectors grows with their length, so without the division the "
        "scores grow with the key dimension. Large scores push the softmax into a regime where "
        "one key gets almost all of the weight and the gradient reaching every other key is "
        "close to zero, so learning stalls. Dividing by $\\sqrt{d_k}$ keeps the variance of the "
        "scores about the same for any head size. To demonstrate it, draw random $Q$ and $K$ "
        "with $d_k = 64$ and print the range of the scores and the softmax weights, with and "
        "without the division."
    ),
    "full_answer": """\
### How big a score is

A score adds up $d_k$ products. When the components of $Q$ and $K$ have unit variance, the
sum has variance $d_k$, so a typical score has a size of about $\\sqrt{d_k}$. At $d_k = 64$
the raw scores are in the tens, and a softmax over scores in the tens puts nearly all of its
mass on the largest one.

### Why the model stops learning

The gradient of the softmax with respect to a score is small when one weight is close to one
and the others are close to zero. The attention layer then behaves like a fixed lookup. The
loss plateaus and nothing fails loudly. The lesson describes this regime as one where "one
entry has almost all the mass and the others are vanishingly small".

### The fix, and which dimension it uses

Divide the scores by $\\sqrt{d_k}$ before the softmax:

```python
weights = softmax(Q @ K.T / sqrt(d_k))
output = weights @ V
```

In multi-head attention the dimension under the root is the head width,
$d_{head} = d_{model} / n_{heads}$, not the model width. Production models set $d_{head}$ to
64 or 128, and the scaling keeps the score variance constant at any width. The lesson's rule
of thumb keeps heads at 32 or wider, because a narrower head sees too few dimensions, and
below 256, because wider heads lose the benefit of many small specialists.

### The ten-minute demonstration

1. Draw $Q$ and $K$ from a standard normal with `d_k = 64`.
2. Print `(Q @ K.T).max()` with and without the division.
3. Print the largest softmax weight of one row in both cases. Without the division it is
   close to one.

### Taught in

The self-attention lesson explains the saturation, the multi-head lesson gives the head
widths, and the capstone attention block applies the scaling inside the batched block.
""",
    "key_points": MAIN_KEY_POINTS,
    "follow_ups": [
        {
            "level": "L1",
            "prompt": "What is the shape of the score matrix for a sequence of $n$ tokens?",
            "expected_answer": "`(n, n)`: one row per query and one column per key.",
            "check_kind": "shape",
            "expected_shape": "(n, n)",
        },
        {
            "level": "L2",
            "prompt": "Why does the missing division cause a silent failure rather than an exception?",
            "expected_answer": (
                "The softmax saturates, the gradients become tiny, and the loss plateaus "
                "without any error being raised."
            ),
            "check_kind": "text",
            "key_points": [
                _kp("fu-saturates", "The softmax saturates", SOFTMAX_SATURATES),
                _kp("fu-tiny-gradients", "The gradients become tiny", GRADIENTS_VANISH),
                _kp(
                    "fu-no-error",
                    "The loss just plateaus; no error is raised",
                    "\n".join(
                        [
                            r"no (error|exception|crash|nan)",
                            r"without (an? |any )?(error|exception|crash)",
                            r"(silent|silently|quietly)",
                            r"(loss|training) (just |only |simply )?(plateaus?|stalls?|flattens?)",
                            r"(valid|finite|normal) (numbers|values|outputs?)",
                        ]
                    ),
                ),
            ],
        },
        {
            "level": "L2",
            "prompt": "Does the division change what the layer can represent?",
            "expected_answer": (
                "No. The projections can absorb a constant factor. What the division changes "
                "is the scale of the scores at initialisation, which is where training either "
                "gets going or stalls."
            ),
            "check_kind": "text",
            "key_points": [
                _kp(
                    "fu-projections-absorb",
                    "The projections can absorb a constant factor",
                    "\n".join(
                        [
                            r"absorb\w*",
                            r"(projections?|weights?|w_?q|w_?k|matrices).{0,30}(learn|scale|rescale|compensate|fold)\w*",
                            r"(just|only|merely) a constant",
                            r"same (expressiv\w*|representational|function class|capacity)",
                        ]
                    ),
                ),
                _kp(
                    "fu-initial-scale",
                    "It changes the scale of the scores at initialisation",
                    "\n".join(
                        [
                            r"initiali[sz]\w*",
                            r"(start|beginning) of training",
                            r"(scale|size|magnitude) of the (scores|logits)",
                            r"optimi[sz]\w*|trainab\w*|training dynamics",
                        ]
                    ),
                ),
            ],
        },
        {
            "level": "L3",
            "prompt": (
                "With eight heads of width 64 in a model of width 512, which number goes under "
                "the square root?"
            ),
            "expected_answer": (
                "64, the head width: each head computes its own softmax over its own scores."
            ),
            "check_kind": "number",
            "expected_number": 64.0,
            "tolerance": 0.0,
        },
    ],
    "wrong_answers": [
        {
            "slug": "sums-to-one",
            "statement": "The division keeps the attention weights summing to one.",
            "rebuttal": (
                "The softmax turns any scores into weights that sum to one. The division "
                "controls how spread out the scores are, not what the weights add up to."
            ),
            "patterns": "\n".join(
                [
                    r"(division|dividing|divide|scal\w*|sqrt).{0,40}(sum|summing|sums|add|adding|adds) (up )?to (one|1)\b",
                    r"(keeps?|makes?|ensures?|guarantees?) (that )?(the )?(attention )?(weights|probabilities|scores) (sum|add)",
                ]
            ),
        },
        {
            "slug": "larger-learning-rate",
            "statement": "A larger learning rate recovers the lost gradient.",
            "rebuttal": (
                "When the softmax is saturated the gradient carries almost no information "
                "about the other keys, and a larger step cannot create information that is "
                "not there."
            ),
            "patterns": "\n".join(
                [
                    r"(larger|higher|bigger|increas\w*|rais\w*|boost\w*) (the )?(learning rate|lr|step size).{0,40}(recover|fix|compensat|restor|make up|solve|help)\w*",
                    r"(learning rate|lr|step size).{0,30}(recovers?|fix(es)?|compensates?|restores?|makes? up)",
                ]
            ),
        },
        {
            "slug": "scale-values",
            "statement": "Scale the values instead of the scores.",
            "rebuttal": (
                "The values are summed after the weights have been fixed, so their scale "
                "never reaches the softmax."
            ),
            "patterns": "\n".join(
                [
                    r"(scale|scaling|divide|dividing|normali[sz]e|normali[sz]ing) (the )?(values|v|value vectors)\b",
                    r"\bv ?/ ?sqrt",
                ]
            ),
        },
        {
            "slug": "divide-by-dk",
            "statement": "Dividing by $d_k$ instead of $\\sqrt{d_k}$ would work just as well.",
            "rebuttal": (
                "It shrinks the scores too far. Their variance becomes $1/d_k$, so their spread "
                "is $1/\\sqrt{d_k}$ (0.125 at $d_k = 64$); the scores bunch up near 0 and the "
                "softmax is almost uniform, which again leaves little to learn from. Only "
                "$\\sqrt{d_k}$ keeps the spread at 1 for every head size."
            ),
            "patterns": "\n".join(
                [
                    r"(divid\w*|scal\w*|normali[sz]\w*) (the scores |it |them )?by (the )?(d_?k|d|dimension|head (size|width))\b(?!\s*\*)",
                    r"\b1 ?/ ?d_?k\b.{0,30}(works?|better|fine|as well)",
                ]
            ),
        },
    ],
}

# --- Seed 002: describe scaled dot-product attention, with the worked example -----------

Q002: dict[str, Any] = {
    "slug": "scaled-dot-product-attention-by-hand",
    "title": "Describe scaled dot-product attention: why divide the scores by √dₖ?",
    "roles": [],
    "level": "L1",
    "ordering": 20,
    "exercise_slugs": ["scaled-dot-product-attention"],
    "prompt": (
        "Describe scaled dot-product attention, and explain why the scores are divided by "
        "$\\sqrt{d_k}$."
    ),
    "short_answer": (
        "Every query is compared with every key by a dot product, the scores are divided by "
        "$\\sqrt{d_k}$, a softmax turns each row into weights, and the output is the weighted "
        "sum of the values: $\\operatorname{softmax}(QK^\\top/\\sqrt{d_k})\\,V$. The division "
        "matters because a dot product of $d_k$ independent unit-variance terms has variance "
        "$d_k$. Without it, large heads produce large scores, the softmax becomes a near "
        "one-hot pick, its gradient almost vanishes and the query and key weights stop learning."
    ),
    "full_answer": """\
### What you need to know

$$\\operatorname{Attention}(Q, K, V) = \\operatorname{softmax}\\Big(\\frac{QK^\\top}{\\sqrt{d_k}}\\Big)\\,V$$

### Worked by hand: 3 tokens, $d_k = 4$

Take three queries, keys and values, as if they had already been projected, and follow the
four steps: scores $QK^\\top$, divide by $\\sqrt{4} = 2$, softmax each row, weights times $V$.

[[explorable:worked_example]]

<details markdown="1">
<summary>Every matrix, and one entry checked by hand</summary>

| token | $Q$ | $K$ | $V$ |
|---|---|---|---|
| 1 | [1 0 1 0] | [1 0 1 0] | [1 0] |
| 2 | [0 1 0 1] | [0 1 0 1] | [0 1] |
| 3 | [1 1 1 0] | [1 1 0 0] | [1 1] |

| Step 1: $QK^\\top$ | Step 2: divide by $\\sqrt{4} = 2$ | Step 3: softmax of each row | Step 4: weights times $V$ |
|---|---|---|---|
| [2 0 1] | [1.0 0.0 0.5] | [0.506 0.186 0.307] | [0.814 0.494] |
| [0 2 1] | [0.0 1.0 0.5] | [0.186 0.506 0.307] | [0.494 0.814] |
| [2 1 2] | [1.0 0.5 1.0] | [0.384 0.233 0.384] | [0.767 0.616] |

Check one entry. Row 1 has scores [1.0, 0.0, 0.5], so $e^{1} = 2.718$, $e^{0} = 1$ and
$e^{0.5} = 1.649$. They sum to 5.367, which gives the weights 0.506, 0.186 and 0.307. Output
row 1 is $0.506 \\cdot [1, 0] + 0.186 \\cdot [0, 1] + 0.307 \\cdot [1, 1] = [0.814, 0.494]$.

</details>

### Why $\\sqrt{d_k}$: the variance argument

A dot product $q \\cdot k$ adds up $d_k$ products. If every entry has mean 0 and variance 1
and the entries are independent, each product has variance 1, so the sum has variance $d_k$
and standard deviation $\\sqrt{d_k}$. A check with 10,000 random pairs agrees.

### Why large scores hurt

The softmax of [2, 1, 0.5] is [0.63, 0.23, 0.14]: a soft preference. Multiply the same scores
by 11.3, which is what an unscaled $d_k = 128$ head can produce, and the softmax gives about
[1.0, 0.0, 0.0]. The output becomes a hard pick. Worse, the gradient of the softmax near a
one-hot point is almost zero, so the query and key weights stop learning.

The scaling is not a modelling choice. It is a normalisation that keeps the softmax in its
useful range as the head size changes.

### A real-life example

A team building an in-house code-completion model wrote its own attention kernel to try a new
idea and left out the `/ sqrt(d_k)`, with `d_head = 128`. The training loss fell for a few
hundred steps, then flattened far above the baseline. Plots of attention entropy showed
almost every head putting all of its weight on a single token from early in training.

Adding the scale back fixed it. In PyTorch,
`torch.nn.functional.scaled_dot_product_attention` applies $1/\\sqrt{d_k}$ by default, which
is a good reason to call it (it also dispatches to FlashAttention kernels) instead of writing
the maths by hand.
""",
    "key_points": [
        _kp(
            "formula",
            "Attention is $\\operatorname{softmax}(QK^\\top/\\sqrt{d_k})\\,V$",
            "\n".join(
                [
                    r"softmax.{0,40}(q ?k|qk|q ?@ ?k|q ?· ?k|q ?\. ?k|dot products?|scores).{0,60}(\bv\b|values?)",
                    r"weighted (sum|average|mix) of (the )?values",
                ]
            ),
        ),
        *MAIN_KEY_POINTS[:3],
    ],
    "follow_ups": [
        {
            "level": "L1",
            "prompt": (
                "In the worked example, what weight does the first query give to the first key "
                "after the softmax? Give three decimals."
            ),
            "expected_answer": (
                "0.506: row 1's scaled scores [1.0, 0.0, 0.5] give $e^{1} / 5.367 = 0.506$."
            ),
            "check_kind": "number",
            "expected_number": 0.506,
            "tolerance": 0.001,
        },
        {
            "level": "L2",
            "prompt": "Why not divide by $d_k$ instead?",
            "expected_answer": (
                "It shrinks the scores too much: their variance becomes $1/d_k$, they cluster "
                "near 0, and the softmax becomes almost uniform."
            ),
            "check_kind": "text",
            "key_points": [
                _kp(
                    "fu-over-shrinks",
                    "The variance becomes $1/d_k$: too small",
                    "\n".join(
                        [
                            r"\b1 ?/ ?d_?k\b",
                            r"(variance|spread|scores?).{0,30}(too small|shrinks?|tiny|collapses?)",
                            r"over-?shrink\w*",
                            r"too (much|small|far)",
                        ]
                    ),
                ),
                _kp(
                    "fu-near-uniform",
                    "The softmax becomes almost uniform",
                    "\n".join(
                        [
                            r"uniform",
                            r"(flat|even|equal) (weights|distribution|attention)",
                            r"(cluster|bunch|collapse)\w* (up )?(near|around|to|at) (0|zero)",
                        ]
                    ),
                ),
            ],
        },
        {
            "level": "L2",
            "prompt": "Is the scale ever different?",
            "expected_answer": (
                "Yes. Some models use a learned or tuned scale, or normalise $Q$ and $K$ "
                "(QK-norm) to keep the scores in check. The goal is the same."
            ),
            "check_kind": "text",
            "key_points": [
                _kp(
                    "fu-learned-or-tuned",
                    "A learned or tuned scale",
                    "\n".join(
                        [
                            r"learn\w* (scale|temperature|factor)",
                            r"(scale|temperature|factor) (is |can be )?(learned|learnable|tuned|a hyperparameter)",
                            r"\btuned\b",
                            r"\bmup\b|μp|\b1 ?/ ?d\b",
                        ]
                    ),
                ),
                _kp(
                    "fu-qk-norm",
                    "Normalising $Q$ and $K$ (QK-norm)",
                    "\n".join(
                        [
                            r"qk[- ]?norm",
                            r"normali[sz]\w* (the )?(q|queries|keys|k|q and k)\b",
                            r"layer ?norm (on|of) (the )?(q|k|queries|keys)\b",
                        ]
                    ),
                ),
            ],
        },
        {
            "level": "L3",
            "prompt": "What does FlashAttention change?",
            "expected_answer": (
                "Not the maths. It computes the same result in tiles, without writing the "
                "$T \\times T$ matrix to GPU memory."
            ),
            "check_kind": "choice",
            "choices": [
                "The maths: it approximates the softmax to save time.",
                "Not the maths: it computes the same result in tiles, without writing the "
                "T × T score matrix to GPU memory.",
                "It drops the division by √d_k, which the kernel no longer needs.",
            ],
            "correct_choice": "Not the maths: it computes the same result in tiles, without "
            "writing the T × T score matrix to GPU memory.",
        },
    ],
    "wrong_answers": [
        {
            "slug": "modelling-choice",
            "statement": "The scaling is a modelling choice, like picking an activation.",
            "rebuttal": (
                "It is a normalisation, not a modelling choice: it keeps the softmax in its "
                "useful range as the head size changes."
            ),
            "patterns": "\n".join(
                [
                    r"(scaling|division|divide|sqrt).{0,40}(is )?(a|just a|only a|an arbitrary) (modell?ing|design) (choice|decision)",
                    r"(scaling|division).{0,20}(is )?(just |only |merely )?(a )?convention",
                ]
            ),
        },
    ],
}

# --- Seed 004: the beginner's version ------------------------------------------------------

Q004: dict[str, Any] = {
    "slug": "why-divide-before-mixing",
    "title": "Raw match scores grow with the list length: why divide before we mix?",
    "roles": [],
    "level": "L1",
    "ordering": 30,
    "exercise_slugs": ["stable-softmax"],
    "prompt": (
        "Raw match scores get bigger as the query and key lists get longer, and the softmax "
        "then spikes. Why do we divide the scores before we mix the values?"
    ),
    "short_answer": (
        "A raw score is a sum of $d_k$ small products, so its variance is about $d_k$ and its "
        "typical size about $\\sqrt{d_k}$. As $d_k$ grows (64, 128, …) the scores get huge, the "
        "softmax piles almost everything on one entry, and the slope that training relies on "
        "dies. Dividing by $\\sqrt{d_k}$ keeps the typical score near size 1 however long the "
        "lists get. It is numerical hygiene, not a new idea about meaning."
    ),
    "full_answer": """\
### The compare step is a grid of dot products

If every query and every key has $d_k$ slots, a raw score is a sum of $d_k$ little products.
When those pieces are noisy and about size 1, the sum has a variance of about $d_k$. Variance
measures how spread out a random number is, and a sum of many independent pieces spreads out
like $\\sqrt{d_k}$ in typical size.

So as $d_k$ grows (64, 128, …) the raw scores become huge. The softmax then puts almost the
whole pile on one entry (one huge score starves the rest, as the softmax page shows), and the
slope used in training dies. The fix from the paper is

$$\\text{score} = \\frac{\\mathbf{q} \\cdot \\mathbf{k}}{\\sqrt{d_k}}.$$

After the division the typical score stays near size 1 even as the lists get longer. It is
numerical hygiene, not a new idea about meaning.

The chapter's bar charts take the same three scores, inflate them the way a long list would,
then divide by $\\sqrt{64} = 8$: before the division the bars are a single spike; after it,
still a mix.

### A cartoon with numbers

Let each of 100 slots contribute a random $\\pm 1$. The sum is often in the tens: its typical
size is $\\sqrt{100} = 10$. Divide by $\\sqrt{100} = 10$ and you are back to scores of a few
units, which the softmax can still turn into a soft mix rather than a single spike.

In the napkin example of the attention chapter $d_k = 2$, so the scores were divided by
$\\sqrt{2} \\approx 1.414$: tiny on purpose. Real heads press the same button with $d_k = 64$,
dividing by $\\sqrt{64} = 8$.
""",
    "key_points": [
        MAIN_KEY_POINTS[0],
        MAIN_KEY_POINTS[1],
        MAIN_KEY_POINTS[2],
        _kp(
            "scale-restores-unit-variance",
            "After dividing by $\\sqrt{d_k}$ the typical score stays near size 1",
            UNIT_VARIANCE,
        ),
    ],
    "follow_ups": [
        {
            "level": "L1",
            "prompt": "If we skipped the divide, what would go wrong first?",
            "expected_answer": (
                "The softmax would saturate: the mixing weights sit near 0 and 1 with almost "
                "nothing in between, and training struggles."
            ),
            "check_kind": "text",
            "key_points": [
                _kp(
                    "fu-saturates",
                    "The softmax saturates (weights near 0 and 1)",
                    SOFTMAX_SATURATES
                    + "\n"
                    + r"near (0|zero) (and|or) (1|one)"
                    + "\n"
                    + r"(0|zero)s? and (1|one)s?",
                ),
                _kp(
                    "fu-training-struggles",
                    "Training struggles",
                    GRADIENTS_VANISH
                    + "\n"
                    + r"train\w* (would |will )?(struggles?|suffers?|fails?)",
                ),
            ],
        },
        {
            "level": "L1",
            "prompt": "Does the divide change which token wins if one score is clearly the largest?",
            "expected_answer": (
                "Often not the winner, but it changes how much the others still get. Attention "
                "is a soft mix, and the divide keeps it soft."
            ),
            "check_kind": "choice",
            "choices": [
                "Yes: it usually hands the win to another token.",
                "Often not the winner, but it changes how much the others still get.",
            ],
            "correct_choice": "Often not the winner, but it changes how much the others still get.",
        },
        {
            "level": "L1",
            "prompt": "Is $\\sqrt{d_k}$ learned?",
            "expected_answer": (
                "No. It is a fixed recipe from the 2017 paper. The learned knobs are the tables "
                "that build $\\mathbf{q}$ and $\\mathbf{k}$."
            ),
            "check_kind": "choice",
            "choices": ["Yes, it is learned", "No, it is a fixed recipe"],
            "correct_choice": "No, it is a fixed recipe",
        },
    ],
    "wrong_answers": [
        {
            "slug": "new-idea-about-meaning",
            "statement": "Dividing by √d_k changes what the scores mean.",
            "rebuttal": (
                "It is numerical hygiene, not a new idea about meaning: it only keeps the "
                "typical score near size 1 so the softmax still mixes. What the model learns "
                "lives in the tables that build $\\mathbf{q}$ and $\\mathbf{k}$."
            ),
            "patterns": r"(divid\w*|division|scal\w*).{0,40}changes? (what|the meaning)",
        },
    ],
}

QUESTIONS = [Q003, Q002, Q004]

# --- Seed 000: the explainer page ------------------------------------------------------------

EXPLAINER: dict[str, str] = {
    "slug": "why-divide-by-sqrt-d",
    "title": "Why divide by √d",
    "lead": (
        "Dot products of long vectors are big numbers: their spread grows with the square root "
        "of the length. Big scores make the softmax hand one token everything, and a saturated "
        "softmax stops learning. Dividing the scores by $\\sqrt{d}$ keeps them at a sensible "
        "size whatever the head size."
    ),
    "body": """\
- **Key idea.** The variance of $q \\cdot k$ grows with $d$. Dividing by $\\sqrt{d}$ brings it
  back to 1, so the softmax stays soft and gradients keep flowing.
- **In real life.** A vote where each judge gives a score. Add up 4 judges and the totals
  differ by a few points; add up 256 judges and they differ by dozens. If "highest total
  takes all" picks the winner, more judges means a landslide every time, unless you first
  divide by the right amount.
- **In an LLM.** In GPT-2 small every query and key has $d = 64$ numbers. Without the scaling
  every score would be 8 times larger, the softmax would be far sharper, and the query and
  key matrices would get much weaker training signals.

## The step in question

In the query, key, value recipe, step 3 divides every score by $\\sqrt{d}$, where $d$ is the
length of a query (the head size):

$$A = \\operatorname{softmax}\\!\\Big(\\frac{Q K^\\top}{\\sqrt{d}}\\Big)$$

It looks like a detail. It is not: without it, attention in a model with a large head size
barely trains. Three steps show why.

## 1. Dot products grow with length

A dot product adds up $d$ products, one per position:
$q \\cdot k = q_1 k_1 + q_2 k_2 + \\dots + q_d k_d$. If the numbers are random with mean 0 and
variance 1 (roughly what a freshly initialised network produces), each product is a random
number with variance 1, and the sum of $d$ of them has variance $d$. Its typical size, the
standard deviation, is $\\sqrt{d}$.

So before the model has learned anything, a head with 64 numbers produces scores around ±8
and a head with 256 numbers scores around ±16.

[[explorable:variance]]

In one run with $d = 64$ the raw scores had a variance of 66.3 (theory: 64) and a standard
deviation of 8.1 ($\\sqrt{d}$ = 8). Gaps that large make the softmax over one query's scores
against 8 keys put 99% of the weight on one key. Divided by $\\sqrt{64} = 8$, the variance is
back to about 1 (1.04 in that run) and the top weight is 43%. The scaled scores look the same
whatever $d$ is.

The histogram of raw scores widens as $d$ grows; the histogram of the same scores divided by
$\\sqrt{d}$ keeps the same width for every $d$. Dividing a random number by its standard
deviation gives it a standard deviation of 1.

### Example: adding up judges

Each judge scores a contestant at random somewhere between −1 and +1. With 4 judges, two
contestants' totals typically differ by one or two points; with 256 judges, by around 10. If
a softmax turns the totals into shares of the prize, the 256-judge contest nearly always gives
one contestant everything, for no better reason than that there were more judges. Divide each
total by $\\sqrt{\\text{number of judges}}$ and the contests become comparable again.

[[explorable:judges]]

## 2. Big scores saturate the softmax

The softmax only cares about the differences between scores. A gap of 1 between two scores
means a ratio of $e^1 \\approx 2.7$ between their weights; a gap of 8 means $e^8 \\approx 3000$.
When the scores are spread by ±8, the largest one wins almost all the weight and attention is
no longer a soft average. It becomes a hard pick, and early in training that pick is decided by
random noise in the weights.

Multiplying all the scores by a number is the same as changing the softmax temperature:
multiply by 10 and it behaves like temperature 0.1. The $\\sqrt{d}$ in the formula is a fixed
temperature of $\\sqrt{d}$, chosen so that the scores have a spread of about 1.

## 3. A saturated softmax stops learning

The model learns $W_Q$ and $W_K$ by gradient descent, which needs to know how the weights
would change if a score changed. That sensitivity is a matrix of derivatives, the Jacobian,
with $p_i(1 - p_i)$ on the diagonal and $-p_i p_j$ off it. If one weight is close to 1 and the
others close to 0, every entry is close to 0.

Take the last "the" of the toy sentence "The cat sat on the", attending to all five tokens (no
mask, to keep the picture simple), with scores 0.8, 1.7, 0.5, 0.1 and 0.2. The view below
multiplies its scores by a factor you choose and shows the weights and the gradient matrix (how
each weight, a row, moves when a score, a column, is nudged).

[[explorable:saturation]]

<details markdown="1">
<summary>The gradient matrix at ×1, as a table</summary>

|   | The | cat | sat | on | the |
|---|---|---|---|---|---|
| **The** | 0.15 | −0.09 | −0.03 | −0.02 | −0.02 |
| **cat** | −0.09 | 0.25 | −0.07 | −0.04 | −0.05 |
| **sat** | −0.03 | −0.07 | 0.12 | −0.01 | −0.01 |
| **on** | −0.02 | −0.04 | −0.01 | 0.08 | −0.01 |
| **the** | −0.02 | −0.05 | −0.01 | −0.01 | 0.09 |

</details>

At the toy model's real scale (×1) the weights are spread (the top weight is 49% in the
interactive view) and the largest gradient entry is about 0.25, the largest it can ever be:
nudging a score changes the weights, so training can learn which token to look at. Multiply
the scores by 4, as if the vectors were longer, and "cat" takes 97% while the largest entry
falls to 0.027; at ×10 it is about 0.00005. Whatever error the model makes, almost none of it
gets back through the softmax to the query and key matrices. That is a vanishing gradient, and
it is exactly what unscaled scores with a large $d$ cause. (The scores above are rounded to
one decimal; recomputed from the rounded values the figures are 47% and 0.249 at ×1, 96% and
0.037 at ×4, and 0.00013 at ×10: the same story.)

### Example: the ÷8 in GPT-2

GPT-2 small has a head size of 64, so its attention divides every score by 8. Llama 2 7B has a
head size of 128 and divides by about 11.3. The model can still learn sharp attention, and real
heads do (the previous-token head puts over 99% on one token), but it gets there by learning
larger query and key vectors on purpose, not by accident at initialisation.

## Why √d and not d

Dividing by $d$ would shrink the scores too much: their spread would be $1/\\sqrt{d}$, which is
0.125 for $d = 64$, and every softmax would be nearly uniform, again with little to learn from.
Dividing by $\\sqrt{d}$ is the one choice that keeps the spread at 1 for every head size.

[[explorable:sqrt_vs_d]]

## Going deeper

### The variance calculation

Let $q, k \\in \\mathbb{R}^d$ have independent entries with mean 0 and variance 1. Each product
$q_i k_i$ has mean 0 and variance $\\mathbb{E}[q_i^2]\\,\\mathbb{E}[k_i^2] = 1$. The products are
independent, so

$$\\operatorname{Var}(q \\cdot k) = \\sum_{i=1}^{d} \\operatorname{Var}(q_i k_i) = d, \\qquad \\operatorname{Var}\\!\\Big(\\frac{q \\cdot k}{\\sqrt{d}}\\Big) = 1.$$

### The softmax Jacobian

For $p = \\operatorname{softmax}(s)$,

$$\\frac{\\partial p_i}{\\partial s_j} = p_i\\,(\\delta_{ij} - p_j),$$

whose largest possible entry is $\\tfrac14$, reached when $p_i = \\tfrac12$. As $p$ approaches a
one-hot vector, every entry approaches 0.

### Variants

Some models choose a different scale. **T5** folds the factor into its weight initialisation
and has no explicit division. **μP** (maximal update parametrisation) uses $1/d$ with a
matching initialisation, so that hyperparameters transfer between model widths. Many recent
models also normalise queries and keys (**QK-norm**) to stop the scores growing during
training, a fix for training instability in large models.

### In papers

- The $\\sqrt{d_k}$ scaling and its explanation (footnote 4): Vaswani et al., 2017,
  section 3.2.1.
- μP and $1/d$ attention scaling: Yang et al., 2022.
- QK-norm against attention logit growth: Dehghani et al., 2023.
""",
}


def content_load(apps: Any) -> None:
    """Create the seed roles, questions and explainer page that are missing.

    `apps` is a migration's historical registry or django.apps.apps; only plain fields are
    used, so both work.
    """
    Role = apps.get_model("questions", "Role")
    Question = apps.get_model("questions", "Question")
    FollowUp = apps.get_model("questions", "FollowUp")
    WrongAnswer = apps.get_model("questions", "WrongAnswer")
    KeyPoint = apps.get_model("questions", "KeyPoint")
    Page = apps.get_model("questions", "Page")

    roles = {}
    for index, (slug, name) in enumerate(ROLES):
        roles[slug], _ = Role.objects.get_or_create(
            slug=slug, defaults={"name": name, "ordering": index}
        )

    for data in QUESTIONS:
        question, created = Question.objects.get_or_create(
            slug=data["slug"],
            defaults={
                "title": data["title"],
                "level": data["level"],
                "prompt": data["prompt"],
                "short_answer": data["short_answer"],
                "full_answer": data["full_answer"],
                "exercise_slugs": data["exercise_slugs"],
                "ordering": data["ordering"],
                "status": "published",
            },
        )
        if not created:
            continue
        question.roles.set([roles[slug] for slug in data["roles"]])
        for index, point in enumerate(data["key_points"]):
            KeyPoint.objects.create(question=question, ordering=index, **point)
        for index, wrong in enumerate(data["wrong_answers"]):
            WrongAnswer.objects.create(question=question, ordering=index, **wrong)
        for index, raw in enumerate(data["follow_ups"]):
            fields = {k: v for k, v in raw.items() if k != "key_points"}
            follow_up = FollowUp.objects.create(question=question, ordering=index, **fields)
            for kp_index, point in enumerate(raw.get("key_points", [])):
                KeyPoint.objects.create(
                    question=question,
                    follow_up=follow_up,
                    ordering=100 + 10 * index + kp_index,
                    **point,
                )

    Page.objects.get_or_create(
        slug=EXPLAINER["slug"],
        defaults={
            "title": EXPLAINER["title"],
            "lead": EXPLAINER["lead"],
            "body": EXPLAINER["body"],
            "status": "published",
        },
    )
